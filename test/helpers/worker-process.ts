/**
 * A worker process for multi-process lifecycle tests: a Scheduler on the test PostgreSQL whose
 * driver places each "call" with the test's callee server (POST /dial, answered when the call
 * ends). Environment: DATABASE_URL, CALLEE_URL, WORKER_ID, LEASE_SECONDS, MAX_CALLS; JOURNAL_DIR
 * (optional: where it keeps ends it cannot write).
 */
import { openPostgres } from '../../src/db/index.js';
import { createLogger } from '../../src/lib/logger.js';
import { Scheduler } from '../../src/scheduler/index.js';
import type { CallEnd } from '../../src/lifecycle/index.js';
import type { CallResult, DialRequest, Driver } from '../../src/telephony/index.js';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};

const workerId = env('WORKER_ID');

class CalleeDriver implements Driver {
  readonly provider = 'PROVIDER_A';
  readonly label = 'test callee';
  async dial(request: DialRequest): Promise<CallResult> {
    const callId = `CA-${request.leadId}-${request.attempt}`;
    request.onCallId(callId);
    try {
      const res = await fetch(`${env('CALLEE_URL')}/dial`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ leadId: request.leadId, attempt: request.attempt, from: request.from, to: request.to, worker: workerId }),
        signal: request.signal,
      });
      return { callId, end: (await res.json()) as CallEnd };
    } catch (err) {
      return { callId, end: { kind: 'error', error: (err as Error).message } };
    }
  }
}

const db = await openPostgres(env('DATABASE_URL'), { max: 5 });
const scheduler = new Scheduler({
  db,
  drivers: new Map([['PROVIDER_A', new CalleeDriver()]]),
  log: createLogger('warn'),
  workerId,
  leaseSeconds: Number(env('LEASE_SECONDS')),
  maxConcurrentCalls: Number(env('MAX_CALLS')),
  pollMs: 50,
  recoverEveryMs: 500,
  shutdownGraceMs: 5000,
  journalDir: process.env.JOURNAL_DIR,
});
scheduler.start();
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  void scheduler.stop().then(async () => {
    await db.close();
    process.stdout.write(`${JSON.stringify(scheduler.stats)}\n`);
    process.exit(0);
  });
});

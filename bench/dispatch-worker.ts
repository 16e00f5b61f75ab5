/**
 * One worker process of bench:dispatch. MODE=dialer: a Dialer Scheduler as `dialer serve` runs it, with a driver whose calls
 * complete at once. MODE=graphile: a graphile-worker runner with a no-op task, tuned as in its own
 * perfTest (local queue, batched completion). Loads and connects, prints "ready", starts work when
 * "go" arrives on stdin (so the benchmark times the work, not module loading), works until SIGTERM.
 */
import { run } from 'graphile-worker';
import { openPostgres } from '../src/db/index.js';
import { instantScheduler } from './lib/lifecycle.js';

const url = process.env.DATABASE_URL!;
const concurrency = Number(process.env.CONCURRENCY ?? 24);

/** Everything is loaded and connected: says "ready", then waits for "go" on stdin to start work. */
async function ready(): Promise<void> {
  process.stdout.write('ready\n');
  await new Promise<void>((resolve) => {
    let input = '';
    process.stdin.on('data', (d: Buffer) => {
      input += d;
      if (input.includes('go\n')) resolve();
    });
  });
}

if (process.env.MODE === 'dialer') {
  const db = await openPostgres(url, { max: 10 });
  const scheduler = instantScheduler(db, concurrency);
  await ready();
  scheduler.start();
  process.on('SIGTERM', () => void scheduler.stop().then(() => db.close()).then(() => process.exit(0)));
} else {
  await ready();
  const runner = await run({
    connectionString: url,
    concurrency,
    maxPoolSize: concurrency + 1,
    noHandleSignals: true,
    pollInterval: 20,
    logger: undefined,
    preset: { worker: { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
    taskList: { noop: async () => {} },
  } as Parameters<typeof run>[0]);
  process.on('SIGTERM', () => void runner.stop().then(() => process.exit(0)));
}

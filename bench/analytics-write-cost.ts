/**
 * What the payload terms' triggers (migrations 007, 035 and 037) add to the writes on the dialling
 * path: a push (the leads repository's insert), a claim (the scheduler's UPDATE to PROCESSING), a
 * lease renewal and a finish (finishAttempts), one lead per statement, timed with the four terms
 * triggers on and off in alternating rounds on the same database (the rollup's triggers of
 * migration 006 stay on throughout: this measures the terms alone). Noisy on a shared machine:
 * compare medians.
 *
 *   ANALYTICS_WRITE_DB_URL=postgres://.../dialer_bench_1000000 node --import tsx bench/analytics-write-cost.ts [--rounds 6] [--leads 150]
 *
 * The database must be migrated and hold the demo data (npm run bench:analytics -- --keep leaves
 * one). The leads written here are deleted at the end, with the triggers on, so the terms and the
 * rollup stay exact (the rewrite the folder does later for a claim or a finish is not timed here).
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { openPostgres, type Queryable } from '../src/db/index.js';
import { queueLeads } from '../src/lifecycle/index.js';
import { finishAttempts } from '../src/lifecycle/finish.js';

const TRIGGERS = ['leads_terms_insert', 'leads_terms_update', 'leads_terms_delete', 'leads_terms_pending'];
const STEPS = ['push', 'claim', 'renew', 'finish'] as const;
type Step = (typeof STEPS)[number];

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '6' }, leads: { type: 'string', default: '150' } } });
const url = process.env.ANALYTICS_WRITE_DB_URL;
if (!url) throw new Error('set ANALYTICS_WRITE_DB_URL to a migrated database with the demo data');
const rounds = Number(values.rounds);
const perRound = Number(values.leads);

const db = await openPostgres(url, { max: 2 });
const scope = await db.query<{ reseller_id: string; merchant_id: string | null; template_id: string; template_name: string }>(
  `SELECT reseller_id, merchant_id, template_id, template_name FROM leads WHERE NOT is_playground LIMIT 1`,
);
const base = scope.rows[0];
if (!base) throw new Error('the database holds no leads');
const written: string[] = [];
const samples: Record<'on' | 'off', Record<Step, number[]>> = {
  on: { push: [], claim: [], renew: [], finish: [] },
  off: { push: [], claim: [], renew: [], finish: [] },
};

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

/** One lead through push, claim, renewal and finish, each statement timed. */
async function lifecycle(q: Queryable, into: Record<Step, number[]>): Promise<void> {
  const id = randomUUID();
  written.push(id);
  const payload = { customer_mobile_number: `+1555${String(written.length).padStart(7, '0')}`, customer_name: 'Ada', campaign: 'renewal', language: 'en', region: 'north' };
  into.push.push(await timed(() => queueLeads(q, [{ id, ...base!, request_id: id, execution_mode: 'TELEPHONY', is_playground: false, configurations_override: null, payload, due_in_seconds: 0 }])));
  into.claim.push(
    await timed(() =>
      q.query(
        `UPDATE leads l SET status = 'PROCESSING', attempt_count = l.attempt_count + 1, call_initiated_time = now(), call_end_time = NULL,
                call_id = NULL, locked_by = $2, locked_until = now() + make_interval(secs => 60), provider = 'PROVIDER_A', next_attempt_at = NULL, updated_at = now()
         WHERE l.id = $1 RETURNING l.*`,
        [id, 'bench-worker'],
      ),
    ),
  );
  into.renew.push(await timed(() => q.query(`UPDATE leads SET locked_until = now() + interval '60 seconds' WHERE id = $1 AND locked_by = $2`, [id, 'bench-worker'])));
  const end = { kind: 'completed', outcome: 'confirmed', durationSeconds: 42, sentiment: 0.7 } as const;
  into.finish.push(await timed(() => finishAttempts(q, [{ leadId: id, workerId: 'bench-worker', attempt: 1, config: { max_retry: 0, retry_offset: 60 }, result: { end } }], async () => {})));
}

async function setTriggers(on: boolean): Promise<void> {
  for (const t of TRIGGERS) await db.exec(`ALTER TABLE leads ${on ? 'ENABLE' : 'DISABLE'} TRIGGER ${t}`);
}

try {
  for (let round = 0; round < rounds * 2; round++) {
    const mode = round % 2 === 0 ? 'on' : 'off';
    await setTriggers(mode === 'on');
    for (let i = 0; i < perRound; i++) await lifecycle(db, samples[mode]);
  }
} finally {
  await setTriggers(true);
  for (let i = 0; i < written.length; i += 500) await db.query('DELETE FROM leads WHERE id = ANY($1::text[])', [written.slice(i, i + 500)]);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
process.stdout.write(`payload terms write cost: ${rounds} rounds x ${perRound} leads per mode, one lead per statement (ms)\n`);
for (const step of STEPS) {
  const on = samples.on[step];
  const off = samples.off[step];
  process.stdout.write(
    `${step.padEnd(7)} triggers on: median ${median(on).toFixed(3)} mean ${mean(on).toFixed(3)} | off: median ${median(off).toFixed(3)} mean ${mean(off).toFixed(3)} | ` +
      `added: median ${(median(on) - median(off)).toFixed(3)} mean ${(mean(on) - mean(off)).toFixed(3)}\n`,
  );
}
await db.close();

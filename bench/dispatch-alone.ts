/**
 * npm run bench:dispatch-alone: one Dialer worker (48 call slots, a driver whose calls complete at
 * once) alone against a throwaway PostgreSQL, beside the floor of bench:dispatch run as one loop of
 * batches of 48 and that floor with each call's outbound number, each three times, alternating.
 * Without two workers and the floor's loops competing for the machine's cores, it shows each
 * statement's share (pg_stat_statements: execution time per dispatched lead) and the CPU per lead
 * of the worker (this process) and of PostgreSQL. It prints
 * the run of each that cost least CPU (a busy neighbour only ever adds); LEADS (default 10000) sets
 * the size, NUMBERS (default 960) the pool. PostgreSQL's CPU is read for the throwaway server only:
 * against DATABASE_URL it is n/a and the ratio counts the two processes' own CPU; the statements
 * need pg_stat_statements loaded there (shared_preload_libraries), or are not shown.
 */
import pg from 'pg';
import { migrate, openPostgres } from '../src/db/index.js';
import { buildTestApp } from '../test/helpers/app.js';
import { cpuSeconds, processTree } from './lib/cpu.js';
import { floorLoop, instantScheduler, queueDueLeads } from './lib/lifecycle.js';
import { benchPostgres, createDatabase } from './lib/pg.js';

const LEADS = Number(process.env.LEADS ?? 10_000);
const NUMBERS = Number(process.env.NUMBERS ?? 960);
const SLOTS = 48;
const ROUNDS = 3;

const server = await benchPostgres({ shared_preload_libraries: 'pg_stat_statements' });
const { url, drop } = await createDatabase(server.url, `dialer_bench_alone_${process.pid}`);
const db = await openPostgres(url, { max: 10 });
const raw = new pg.Pool({ connectionString: url, max: 4 });
raw.on('error', () => {});

interface Run {
  rate: number;
  /** CPU µs per lead: this process (the worker or the floor's client), PostgreSQL (throwaway server only). */
  own: number;
  postgres: number | undefined;
  statements: { calls: number; us: number; query: string }[];
}

try {
  await migrate(db);
  await raw.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements').catch(() => {});
  process.stdout.write(`bench:dispatch-alone on ${server.label}; ${LEADS} leads, ${NUMBERS} numbers, one worker of ${SLOTS} slots\n`);
  const app = await buildTestApp({ db, env: { LOG_LEVEL: 'silent' } });
  const reseller = (await app.admin.post('/resellers', { name: 'Bench' })).body.id as string;
  const flow = { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] };
  const template = (await app.admin.post('/templates', { name: 'bench', reseller_id: reseller, flow })).body.id as string;
  const cfg = await app.admin.post('/configurations', { reseller_id: reseller, template, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00' });
  if (cfg.status !== 200) throw new Error(JSON.stringify(cfg.body));
  for (let i = 0; i < NUMBERS; i++) await app.admin.post('/numbers', { phone_number: `+121255${String(10000 + i)}`, provider: 'PROVIDER_A' });
  await app.close();

  // Every run starts from the same state (as in bench:dispatch); the statements' counts from zero.
  const queueLeads = async () => {
    await queueDueLeads(raw, db, { resellerId: reseller, templateId: template }, LEADS);
    await raw.query('SELECT pg_stat_statements_reset()').catch(() => {});
  };
  const done = async () => {
    const { rows } = await raw.query<{ n: number }>(
      `SELECT (EXISTS (SELECT 1 FROM leads WHERE status IN ('BACKLOG', 'RETRY')) OR EXISTS (SELECT 1 FROM leads WHERE status = 'PROCESSING'))::int AS n`,
    );
    return Number(rows[0]!.n) === 0;
  };
  const measured = async (work: () => Promise<void>): Promise<Run> => {
    const postgresPids = () => (server.pid === undefined ? [] : processTree(server.pid));
    const cpu0 = process.cpuUsage();
    const pg0 = cpuSeconds(postgresPids());
    const started = performance.now();
    await work();
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const pg1 = cpuSeconds(postgresPids());
    const rows = await raw
      .query<{ calls: string; ms: number; query: string }>(
        `SELECT calls::text, total_exec_time AS ms, left(regexp_replace(query, '\\s+', ' ', 'g'), 80) AS query FROM pg_stat_statements
         WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE '%pg_stat_statements%'
         ORDER BY total_exec_time DESC LIMIT 6`,
      )
      .then((r) => r.rows, () => []);
    return {
      rate: LEADS / seconds,
      own: ((cpu.user + cpu.system) / LEADS),
      postgres: server.pid === undefined ? undefined : ((pg1 - pg0) * 1e6) / LEADS,
      statements: rows.map((r) => ({ calls: Number(r.calls), us: (r.ms * 1000) / LEADS, query: r.query })),
    };
  };
  const dialer = () =>
    measured(async () => {
      const scheduler = instantScheduler(db, SLOTS);
      scheduler.start();
      while (!(await done())) await new Promise((r) => setTimeout(r, 20));
      await scheduler.stop();
    });
  // bench:dispatch's floor, one loop of batches as large as the worker's.
  const floorPool = new pg.Pool({ connectionString: url, max: 2 });
  floorPool.on('error', () => {});
  const floor = (numbers: boolean) => measured(() => floorLoop(floorPool, SLOTS, numbers ? { numbers: 'PROVIDER_A' } : {}));
  const runs: { dialer: Run[]; floor: Run[]; numbers: Run[] } = { dialer: [], floor: [], numbers: [] };
  for (let i = 0; i < ROUNDS; i++) {
    await queueLeads();
    runs.dialer.push(await dialer());
    await queueLeads();
    runs.floor.push(await floor(false));
    await queueLeads();
    runs.numbers.push(await floor(true));
  }
  await floorPool.end();
  // The run that cost least in all (a busy neighbour only ever adds).
  const total = (r: Run) => r.own + (r.postgres ?? 0);
  const best = (rs: Run[]) => rs.reduce((a, b) => (total(b) < total(a) ? b : a));
  const us = (n: number | undefined) => (n === undefined ? 'n/a' : String(Math.round(n)));
  for (const [name, r] of [['dialer', best(runs.dialer)], ['floor', best(runs.floor)], ['floor with numbers', best(runs.numbers)]] as const) {
    process.stdout.write(`  ${name}: ${Math.round(r.rate)} leads/s; CPU per lead (µs): ${name === 'dialer' ? 'worker' : 'client'} ${us(r.own)}, postgres ${us(r.postgres)}\n`);
    for (const s of r.statements) process.stdout.write(`    ${us(s.us).padStart(4)} µs per lead, ${String(s.calls).padStart(5)} calls  ${s.query}\n`);
  }
  const d = best(runs.dialer);
  const f = best(runs.floor);
  const n = best(runs.numbers);
  process.stdout.write(
    `dispatch alone: dialer ${us(total(d))} µs of CPU per lead (worker ${us(d.own)}, postgres ${us(d.postgres)}), ` +
      `floor ${us(total(f))} (client ${us(f.own)}, postgres ${us(f.postgres)}), ratio ${(total(f) / total(d)).toFixed(2)}; ` +
      `floor with numbers ${us(total(n))} (ratio to the floor ${(total(f) / total(n)).toFixed(2)}, dialer's to it ${(total(n) / total(d)).toFixed(2)})\n`,
  );
} finally {
  await raw.end();
  await db.close();
  await drop().catch(() => {});
  await server.stop();
}

/**
 * npm run bench:dispatch: on one PostgreSQL, in one run,
 * 1. push: POST /leads at concurrency 50 (real HTTP) against a raw single-row INSERT loop into the
 *    same table at the same concurrency and pool size (the physical limit);
 * 2. dispatch: two Dialer worker processes taking leads from push to FINISHED (claim, every
 *    pre-dial rule, a driver whose calls complete at once, the outcome transition) against two
 *    graphile-worker processes running the same number of no-op jobs;
 * 3. the floor: the bare lifecycle SQL alone, as the database is, without the analytics triggers,
 *    and with each call's outbound number taken and given back.
 * Figures are ratios against the baseline run beside them. LEADS (default 20000) sets the size.
 * DNC_NUMBERS=N attaches a do-not-call list of N numbers to the configuration (none of the leads
 * on it: each is looked up at push and at dial time and called), to compare with a run without.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { runMigrations } from 'graphile-worker';
import { Pool } from 'undici';
import { foldAnalytics } from '../src/analytics/index.js';
import { API_PREFIX } from '../src/app.js';
import { migrate, openPostgres } from '../src/db/index.js';
import { cpuDuring, processTree } from './lib/cpu.js';
import { floorLoop, queueDueLeads } from './lib/lifecycle.js';
import { benchPostgres, createDatabase } from './lib/pg.js';

/** Where the CPU of a phase goes: this process (the load generator), the service, PostgreSQL. */
function cpuGroups(service?: ChildProcess): Record<string, () => number[]> {
  return {
    client: () => [process.pid],
    ...(service?.pid ? { service: () => [service.pid!] } : {}),
    // The throwaway server's postmaster and backends only (other PostgreSQL servers may run here).
    ...(server.pid !== undefined ? { postgres: () => processTree(server.pid!) } : {}),
  };
}
const cpuReport = (cpu: Record<string, number>, n: number) =>
  Object.entries(cpu).map(([name, s]) => `${name} ${Math.round((s / n) * 1e6)}`).join(', ');
const writeReport = (writes: Record<string, number>, n: number) =>
  Object.entries(writes).map(([name, w]) => `${name} ${(w / n).toFixed(2)}`).join(', ');

const LEADS = Number(process.env.LEADS ?? 20_000);
const DNC_NUMBERS = Number(process.env.DNC_NUMBERS ?? 0);
const PUSHES = Number(process.env.PUSHES ?? 5000);
const CONCURRENCY = 50;
const WORKERS = 2;
/**
 * Calls each worker process carries at once (graphile-worker: jobs). The floor holds as many leads
 * in flight: two loops per worker, each a batch of half of them.
 */
const SLOTS = 48;
/**
 * Outbound numbers in the pool. The benchmark's calls end the moment they start, so a number is
 * held from its claim until its outcome is written: behind a finish already under way, up to three
 * batches of a worker's slots. With 200 numbers for 96 slots, claims came back short for want of a
 * number and the workers fell into half-size batches, a shortage of the benchmark's own making
 * (a real call holds its number for minutes, the write for milliseconds) and one the floor, which
 * takes no numbers, never meets. Ten per slot: the pool never runs dry.
 */
const NUMBERS = 10 * WORKERS * SLOTS;

// BENCH_PG_STATEMENTS=1: also print the statements PostgreSQL ran in each phase (pg_stat_statements).
const statements = Boolean(process.env.BENCH_PG_STATEMENTS);
const server = await benchPostgres({ max_connections: '200', ...(statements ? { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track_planning': 'on' } : {}) });
const { url, drop } = await createDatabase(server.url, `dialer_bench_dispatch_${process.pid}`);
const db = await openPostgres(url, { max: 10 });
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-bench-'));
const children: ChildProcess[] = [];
// Interrupted (Ctrl-C, a timeout): stop the workers and the throwaway server too.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    for (const c of children) c.kill('SIGKILL');
    void server.stop().finally(() => process.exit(130));
  });
}

try {
  await migrate(db);
  process.stdout.write(`bench:dispatch on ${server.label}; ${LEADS} leads, ${PUSHES} pushes, ${WORKERS} worker processes\n`);

  // The service as it is deployed: its own process (`dialer serve --role api`); this process is
  // the load generator.
  const service = spawn(process.execPath, [...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/prof'] : []), '--import', 'tsx', 'src/cli.ts', 'serve', '--role', 'api'], {
    env: {
      ...process.env, DATABASE_URL: url, PORT: '0', LOG_LEVEL: 'info', DIALER_DATA_DIR: dataDir,
      DIALER_ADMIN_EMAIL: 'bench@example.com', DIALER_ADMIN_PASSWORD: 'bench-password',
      // The push rate is what is measured, not the request limiter (5,500 pushes a minute is near its default).
      DIALER_RATE_LIMIT: '0',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(service);
  const address = await new Promise<string>((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d;
      const m = /"url":"(http:\/\/[^"]+?)\/agent\/voice\/dialer"/.exec(out);
      if (m) {
        service.stdout!.off('data', onData);
        service.stdout!.resume();
        resolve(m[1]!);
      }
    };
    service.stdout!.on('data', onData);
    service.once('exit', (code) => reject(new Error(`dialer serve exited with ${code}: ${out}`)));
  });
  // Its request logs are not needed: drain them.
  service.stdout!.on('data', () => {});
  // undici's connection pool, one kept-alive connection per concurrent client: the load generator
  // should cost little CPU next to the service it loads, as pg's client does next to the raw
  // INSERTs (it shares the same two cores). fetch cost several times more per request, node:http
  // about a quarter more than undici's request API.
  const client = new Pool(address, { connections: CONCURRENCY });
  const call = async (method: 'GET' | 'POST', p: string, body?: unknown, token?: string): Promise<{ status: number; body: any }> => {
    const res = await client.request({
      path: `${API_PREFIX}${p}`,
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.statusCode, body: await res.body.json() };
  };
  const token = (await call('POST', '/login', { email: 'bench@example.com', password: 'bench-password' })).body.access_token;
  const reseller = (await call('POST', '/resellers', { name: 'Bench' }, token)).body.id;
  const flow = { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi {customer_name}' }] }] };
  const template = (await call('POST', '/templates', { name: 'bench', reseller_id: reseller, flow }, token)).body.id;
  const dncLists: string[] = [];
  if (DNC_NUMBERS > 0) {
    // Filled by one statement (its import is bench:dnc's subject, not this one's): US numbers none of the leads has.
    const list = (await call('POST', '/dnc-lists', { name: 'registry', reseller_id: reseller }, token)).body.id as string;
    await db.query("INSERT INTO dnc_numbers (list_id, phone_number) SELECT $1, '+1' || (2122000000 + g)::text FROM generate_series(0, $2 - 1) AS g", [list, DNC_NUMBERS]);
    await db.query('UPDATE dnc_lists SET number_count = $2 WHERE id = $1', [list, DNC_NUMBERS]);
    await db.query('ANALYZE dnc_numbers');
    dncLists.push(list);
    process.stdout.write(`  a do-not-call list of ${DNC_NUMBERS} numbers on the configuration\n`);
  }
  const cfg = await call('POST', '/configurations', { reseller_id: reseller, template, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00', dnc_lists: dncLists }, token);
  if (cfg.status !== 200) throw new Error(JSON.stringify(cfg.body));
  for (let i = 0; i < NUMBERS; i++) await call('POST', '/numbers', { phone_number: `+121255${String(10000 + i)}`, provider: 'PROVIDER_A' }, token);

  // 1. Push throughput.
  const pushBody = (i: number) => ({ request_id: `p-${i}`, template: 'bench', reseller_id: reseller, payload: { customer_mobile_number: `+1646${String(5000000 + i)}`, customer_name: 'Ada' } });
  const concurrently = async (n: number, task: (i: number) => Promise<void>) => {
    let next = 0;
    const started = performance.now();
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < n; i = next++) await task(i);
    }));
    return n / ((performance.now() - started) / 1000);
  };
  // Warm up both paths, then measure.
  await concurrently(500, async (i) => void (await call('POST', '/leads', pushBody(-1 - i), token)));
  const topStatements = async (label: string) => {
    if (!statements) return;
    const { rows } = await db.query<{ calls: string; ms: number; plan_ms: number; query: string }>(
      `SELECT calls::text, round(total_exec_time::numeric, 1)::float AS ms, round(total_plan_time::numeric, 1)::float AS plan_ms, left(regexp_replace(query, '\\s+', ' ', 'g'), 110) AS query
       FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 12`);
    process.stdout.write(`  statements (${label}):\n${rows.map((r) => `    ${r.calls.padStart(6)} calls ${String(r.ms).padStart(8)} ms (+${r.plan_ms} ms planning)  ${r.query}`).join('\n')}\n`);
    await db.query('SELECT pg_stat_statements_reset()');
    const { rows: tables } = await db.query<{ relname: string; upd: number; hot: number; dead: number; idx_scan: number; seq_scan: number; size: string }>(
      `SELECT relname, n_tup_upd::int AS upd, n_tup_hot_upd::int AS hot, n_dead_tup::int AS dead, coalesce(idx_scan, 0)::int AS idx_scan,
              seq_scan::int AS seq_scan, pg_size_pretty(pg_total_relation_size(relid)) AS size
       FROM pg_stat_user_tables WHERE relname IN ('leads', 'outbound_numbers', 'call_attempts', 'lead_payload_terms', 'lead_stats_delta') ORDER BY relname`);
    process.stdout.write(`  tables (${label}): ${tables.map((t) => `${t.relname} ${t.upd} updates (${t.hot} HOT), ${t.dead} dead, ${t.size}`).join('; ')}\n`);
  };
  if (statements) await db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements').then(() => db.query('SELECT pg_stat_statements_reset()'));
  const push = await cpuDuring(cpuGroups(service), () => concurrently(PUSHES, async (i) => {
    const res = await call('POST', '/leads', pushBody(i), token);
    if (res.status !== 201) throw new Error(JSON.stringify(res.body));
  }));
  const pushRate = push.result;
  await topStatements('push');
  const raw = new pg.Pool({ connectionString: url, max: 10 });
  raw.on('error', () => {});
  const insert = (i: number) =>
    raw.query(
      `INSERT INTO leads (id, reseller_id, template_id, template_name, request_id, payload, next_attempt_at)
       VALUES (gen_random_uuid()::text, $1, $2, 'bench', $3, $4, now())`,
      [reseller, template, `raw-${i}`, JSON.stringify(pushBody(i).payload)],
    );
  await concurrently(500, async (i) => void (await insert(-1 - i)));
  const rawRun = await cpuDuring(cpuGroups(), () => concurrently(PUSHES, async (i) => void (await insert(i))));
  const rawRate = rawRun.result;
  process.stdout.write(`  CPU per push (µs): dialer ${cpuReport(push.cpu, PUSHES)}; raw insert ${cpuReport(rawRun.cpu, PUSHES)}\n`);
  await client.close();
  service.kill('SIGTERM');
  children.splice(children.indexOf(service), 1);
  process.stdout.write(`push: dialer ${Math.round(pushRate)} leads/s, raw insert ${Math.round(rawRate)} rows/s, ratio ${(pushRate / rawRate).toFixed(2)}\n`);

  // 2. Dispatch: LEADS due leads, all FINISHED by the Dialer workers.
  const queueLeads = () => queueDueLeads(raw, db, { resellerId: reseller, templateId: template }, LEADS);
  await queueLeads();
  const worker = (mode: string) =>
    new Promise<ChildProcess>((resolve, reject) => {
      const child = spawn(process.execPath, [...(process.env.BENCH_CPU_PROF && mode === 'dialer' ? ['--cpu-prof', '--cpu-prof-dir=/tmp/prof'] : []), '--import', 'tsx', 'bench/dispatch-worker.ts'], {
        env: { ...process.env, MODE: mode, DATABASE_URL: url, CONCURRENCY: String(SLOTS), NO_LOG_SUCCESS: '1' },
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      children.push(child);
      child.stdout!.once('data', () => resolve(child));
      // Keep reading (a full pipe would stall the worker); show what it says.
      child.stdout!.on('data', (d: Buffer) => process.env.BENCH_VERBOSE && process.stderr.write(d));
      child.once('exit', (code) => code !== 0 && reject(new Error(`${mode} worker exited with ${code}`)));
    });
  const until = async (sql: string) => {
    for (;;) {
      const { rows } = await raw.query<{ n: number }>(sql);
      if (Number(rows[0]!.n) === 0) return;
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const stopAll = async () => {
    await Promise.all(children.map((c) => new Promise<void>((r) => (c.once('exit', () => r()), c.kill('SIGTERM')))));
    children.length = 0;
  };
  const workerCpu = () => ({
    workers: () => children.map((c) => c.pid!).filter(Boolean),
    ...(server.pid !== undefined ? { postgres: () => processTree(server.pid!) } : {}),
  });
  // Times the work from the moment every worker process is loaded and connected (module loading
  // and connecting are not dispatch throughput; they took 1 to 2 s of CPU per process), until no
  // work is left; CPU likewise.
  const timed = async (mode: 'dialer' | 'graphile', doneSql: string) => {
    await Promise.all(Array.from({ length: WORKERS }, () => worker(mode)));
    return cpuDuring(workerCpu(), async () => {
      const started = performance.now();
      for (const c of children) c.stdin!.write('go\n');
      await until(doneSql);
      return LEADS / ((performance.now() - started) / 1000);
    });
  };
  await topStatements('before dispatch');
  // (Polled through the partial indexes of unfinished leads: a count over the whole table would
  // load the server more and more as leads finish, unlike graphile-worker's shrinking job table.)
  const dispatchDialer = async () => {
    const run = await timed('dialer', `SELECT (EXISTS (SELECT 1 FROM leads WHERE status IN ('BACKLOG', 'RETRY')) OR EXISTS (SELECT 1 FROM leads WHERE status = 'PROCESSING'))::int AS n`);
    await stopAll();
    return run;
  };
  let dialerCpu = await dispatchDialer();
  await topStatements('dispatch');

  // The analytics folder's share, which no worker pays: the rollup deltas and the pending payload
  // terms the dispatch left (a serving process folds them each second, in the background), folded
  // here at once, PostgreSQL's CPU per dispatched lead.
  const folded = await cpuDuring(workerCpu(), async () => {
    let rounds = 0;
    for (;;) {
      rounds++;
      const round = await foldAnalytics(db);
      if (round.moved === 0 && round.terms === 0) return rounds;
    }
  });

  // 3. The floor: the bare statements every dispatched lead needs on this schema, with nothing
  // decided in between (no window, configuration, rate limit, number, webhook): a batch of due
  // leads made PROCESSING with a lease and an attempt row, then FINISHED with the attempt closed.
  // WORKERS x 2 loops of batches of SLOTS / 2, as many leads as the workers carry. No dispatcher on this
  // schema can beat it; run again with the analytics triggers off (session_replication_role), to
  // show their share, and with each call's outbound number taken and given back (a phone call goes
  // out from one, IN_USE while it lasts), to show theirs.
  const floor = async (triggers: boolean, numbers = false) => {
    await queueLeads();
    // (session_replication_role = replica: this session fires no ordinary triggers.)
    const pool = new pg.Pool({ connectionString: url, max: WORKERS * 5, ...(triggers ? {} : { options: '-c session_replication_role=replica' }) });
    pool.on('error', () => {});
    await pool.query('SELECT 1');
    const run = await cpuDuring(cpuGroups(), async () => {
      const started = performance.now();
      await Promise.all(Array.from({ length: WORKERS * 2 }, () => floorLoop(pool, SLOTS / 2, numbers ? { numbers: 'PROVIDER_A' } : {})));
      return LEADS / ((performance.now() - started) / 1000);
    });
    await pool.end();
    return run;
  };
  // Dialer and the floor both ways, three times each, alternating, the fastest of each kept: a busy
  // neighbour only ever slows a run, and on a shared 2-core machine single runs of a few seconds
  // differ by 20%.
  const faster = <T extends { result: number }>(a: T, b: T) => (a.result >= b.result ? a : b);
  let floorRun = await floor(true);
  await topStatements('floor');
  let floorBare = await floor(false);
  await topStatements('floor without triggers');
  let floorNumbers = await floor(true, true);
  await topStatements('floor with numbers');
  for (let i = 1; i < 3; i++) {
    await queueLeads();
    dialerCpu = faster(dialerCpu, await dispatchDialer());
    floorRun = faster(floorRun, await floor(true));
    floorBare = faster(floorBare, await floor(false));
    floorNumbers = faster(floorNumbers, await floor(true, true));
  }
  const dialerRate = dialerCpu.result;

  await runMigrations({ connectionString: url });
  // Queued as graphile-worker's perfTest does.
  await raw.query(`SELECT graphile_worker.add_job('noop', json_build_object('id', i)) FROM generate_series(1, $1) AS i`, [LEADS]);
  const graphileCpu = await timed('graphile', `SELECT EXISTS (SELECT 1 FROM graphile_worker._private_jobs)::int AS n`);
  const graphileRate = graphileCpu.result;
  process.stdout.write(`  CPU per lead/job (µs): dialer ${cpuReport(dialerCpu.cpu, LEADS)}; floor ${cpuReport(floorRun.cpu, LEADS)}; floor with numbers ${cpuReport(floorNumbers.cpu, LEADS)}; floor without triggers ${cpuReport(floorBare.cpu, LEADS)}; graphile-worker ${cpuReport(graphileCpu.cpu, LEADS)}\n`);
  // Each write system call of a client is a round trip to PostgreSQL (or part of one): on machines
  // where system calls are dear they cost the workers and PostgreSQL more than the SQL does.
  process.stdout.write(`  write calls per lead/job: dialer ${writeReport(dialerCpu.writes, LEADS)}; floor ${writeReport(floorRun.writes, LEADS)}; graphile-worker ${writeReport(graphileCpu.writes, LEADS)}\n`);
  process.stdout.write(`  the analytics folder afterwards: postgres ${Math.round((folded.cpu.postgres ?? 0) / LEADS * 1e6)} µs per dispatched lead (${folded.result} rounds)\n`);
  process.stdout.write(
    `floor: bare lifecycle SQL ${Math.round(floorRun.result)} leads/s (ratio ${(floorRun.result / graphileRate).toFixed(2)}), ` +
      `without the analytics triggers ${Math.round(floorBare.result)} leads/s (ratio ${(floorBare.result / graphileRate).toFixed(2)}), ` +
      `with each call's outbound number ${Math.round(floorNumbers.result)} leads/s (ratio ${(floorNumbers.result / graphileRate).toFixed(2)})\n`,
  );
  process.stdout.write(
    `lifecycle: dialer ${(dialerRate / floorRun.result).toFixed(2)}x the floor, floor ${(floorRun.result / floorBare.result).toFixed(2)}x without the analytics triggers; ` +
      `the floor with numbers ${(floorNumbers.result / floorRun.result).toFixed(2)}x the floor, dialer ${(dialerRate / floorNumbers.result).toFixed(2)}x the floor with numbers\n`,
  );
  await stopAll();
  await raw.end();
  process.stdout.write(`dispatch: dialer ${Math.round(dialerRate)} leads/s, graphile-worker ${Math.round(graphileRate)} jobs/s, ratio ${(dialerRate / graphileRate).toFixed(2)}\n`);
} finally {
  for (const c of children) c.kill('SIGKILL');
  await db.close();
  await drop().catch(() => {});
  await server.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}

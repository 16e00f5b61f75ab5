/**
 * npm run bench:leads-list: the dashboard's leads table over a reseller with many leads, on
 * PostgreSQL. Each request is GET /leads as the leads page sends it (50 a page, `count=capped`),
 * through the whole API (auth, validation, SQL, serialisation); its baseline is the same page
 * hand-written in SQL and run raw through the driver, in the same run. Requests: the first page
 * (newest first), a status filter, a sort by last call, the third page, and the two searches.
 * p50 and p95 each, and the ratio to the raw query. See docs/dashboard.md.
 *
 *   npm run bench:leads-list -- [--leads 1000000] [--iterations 40] [--keep]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { seedDemoLeads } from '../src/analytics/demo.js';
import { API_PREFIX } from '../src/app.js';
import type { Principal } from '../src/auth/index.js';
import { loadConfig } from '../src/config.js';
import { migrate, openPostgres, type Db } from '../src/db/index.js';
import { composeApp } from '../src/server.js';
import { tenantsService } from '../src/tenants/index.js';
import { benchPostgres, createDatabase } from './lib/pg.js';

const ADMIN: Principal = { kind: 'user', id: 'bench', label: 'bench', role: 'admin', resellerId: null, merchantId: null };
const PAGE = 50;
const CAP = 10_000;

interface Case {
  name: string;
  /** The query string the leads page sends. */
  query: string;
  /** The same page by hand: the rows, then the capped count (as the API runs it when the page is full). */
  raw: (reseller: string, phone: string, requestPrefix: string) => { rows: [string, unknown[]]; count: [string, unknown[]] };
}

const capped = (where: string, params: unknown[]): [string, unknown[]] => [`SELECT count(*)::int AS n FROM (SELECT 1 FROM leads WHERE ${where} LIMIT ${CAP + 1}) x`, params];

const CASES: Case[] = [
  {
    name: 'first page',
    query: '',
    raw: (r) => ({ rows: [`SELECT * FROM leads WHERE reseller_id = $1 ORDER BY created_at DESC, id DESC LIMIT ${PAGE}`, [r]], count: capped('reseller_id = $1', [r]) }),
  },
  {
    name: 'status=FINISHED',
    query: '&status=FINISHED',
    raw: (r) => ({
      rows: [`SELECT * FROM leads WHERE reseller_id = $1 AND status = 'FINISHED' ORDER BY created_at DESC, id DESC LIMIT ${PAGE}`, [r]],
      count: capped("reseller_id = $1 AND status = 'FINISHED'", [r]),
    }),
  },
  {
    name: 'sort by last call',
    query: '&sort=call_initiated_time&order=desc',
    raw: (r) => ({
      rows: [`SELECT * FROM leads WHERE reseller_id = $1 ORDER BY call_initiated_time DESC NULLS LAST, id DESC LIMIT ${PAGE}`, [r]],
      count: capped('reseller_id = $1', [r]),
    }),
  },
  {
    name: 'page 3',
    query: '&page=3',
    raw: (r) => ({ rows: [`SELECT * FROM leads WHERE reseller_id = $1 ORDER BY created_at DESC, id DESC LIMIT ${PAGE} OFFSET ${2 * PAGE}`, [r]], count: capped('reseller_id = $1', [r]) }),
  },
  {
    name: 'search phone',
    query: '&q=PHONE',
    raw: (r, phone) => ({
      rows: [`SELECT * FROM leads WHERE reseller_id = $1 AND payload->>'customer_mobile_number' = $2 ORDER BY created_at DESC, id DESC LIMIT ${PAGE}`, [r, phone]],
      count: capped("reseller_id = $1 AND payload->>'customer_mobile_number' = $2", [r, phone]),
    }),
  },
  {
    name: 'search request id',
    query: '&q=REQUEST',
    raw: (r, _p, prefix) => ({
      rows: [`SELECT * FROM leads WHERE reseller_id = $1 AND (id = $2 OR request_id LIKE $3) ORDER BY created_at DESC, id DESC LIMIT ${PAGE}`, [r, prefix, `${prefix}%`]],
      count: capped('reseller_id = $1 AND (id = $2 OR request_id LIKE $3)', [r, prefix, `${prefix}%`]),
    }),
  },
];

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const stats = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95) };
};
const ms = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2));

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

async function prepare(db: Db, leads: number): Promise<string> {
  const existing = await db.query<{ id: string; n: number }>(
    "SELECT r.id, (SELECT count(*) FROM leads l WHERE l.reseller_id = r.id)::int AS n FROM resellers r WHERE r.name = 'Demo Reseller'",
  );
  if (existing.rows[0]?.n === leads) {
    process.stdout.write(`reusing ${leads} leads\n`);
    return existing.rows[0].id;
  }
  const started = Date.now();
  let last = 0;
  const scope = await seedDemoLeads(db, {
    leads,
    days: 90,
    seed: 7,
    batchSize: 10_000,
    onProgress: (written) => {
      if (written - last >= leads / 10 || written === leads) {
        last = written;
        process.stdout.write(`seeded ${written}/${leads} leads (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
      }
    },
  });
  // As autovacuum would after the bulk insert.
  await db.query('VACUUM ANALYZE leads');
  process.stdout.write(`${leads} leads seeded in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  return scope.resellerId;
}

async function run(db: Db, leads: number, iterations: number): Promise<number> {
  const reseller = await prepare(db, leads);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-bench-'));
  const config = loadConfig({ DIALER_DATA_DIR: dataDir, DIALER_JWT_SECRET: 'bench-secret-bench-secret-bench-secret-00', LOG_LEVEL: 'silent', DIALER_SANDBOX: 'false' });
  const email = `leads-bench-${reseller.slice(0, 8)}@example.com`;
  await tenantsService(db)
    .createUser(ADMIN, { email, password: 'bench-password-1', role: 'reseller', reseller_id: reseller })
    .catch((err: unknown) => {
      if (!(err instanceof Error && /already exists/.test(err.message))) throw err;
    });
  const app = await composeApp({ config, db });
  try {
    await app.ready();
    const login = await app.inject({ method: 'POST', url: `${API_PREFIX}/login`, payload: { email, password: 'bench-password-1' } });
    const token = (JSON.parse(login.body) as { access_token: string }).access_token;
    // A phone number and a request-id prefix that some of the reseller's leads have.
    const sample = (await db.query<{ phone: string; request_id: string }>("SELECT payload->>'customer_mobile_number' AS phone, request_id FROM leads WHERE reseller_id = $1 ORDER BY created_at LIMIT 1 OFFSET 5000", [reseller])).rows[0]!;
    // A whole request id, as people search one (it is also the prefix of a hundred-odd others).
    const prefix = sample.request_id;
    let worst = 0;
    process.stdout.write(`GET /leads as a reseller with ${leads} leads, ${iterations} runs each (API through inject; raw: the page and its capped count through the driver)\n`);
    // The first page again at the end: on a shared machine one pass can land in a busy moment.
    for (const c of [...CASES, { ...CASES[0]!, name: 'first page again' }]) {
      const query = c.query.replace('PHONE', encodeURIComponent(sample.phone)).replace('REQUEST', encodeURIComponent(prefix));
      const url = `${API_PREFIX}/leads?page_size=${PAGE}&count=capped${query}`;
      const raw = c.raw(reseller, sample.phone, prefix);
      const api: number[] = [];
      const direct: number[] = [];
      let rows = 0;
      for (let i = 0; i < iterations + 2; i++) {
        const a = await timed(async () => {
          const res = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
          if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
          rows = (JSON.parse(res.body) as { data: unknown[] }).data.length;
        });
        const r = await timed(async () => {
          const page = await db.query(raw.rows[0], raw.rows[1]);
          if (page.rows.length === PAGE) await db.query(raw.count[0], raw.count[1]);
        });
        // The first two runs warm the caches and the plans.
        if (i >= 2) {
          api.push(a);
          direct.push(r);
        }
      }
      const A = stats(api);
      const R = stats(direct);
      if (c.name.startsWith('first page')) worst = Math.max(worst, A.p95);
      process.stdout.write(
        `${c.name.padEnd(18)} ${String(rows).padStart(3)} rows | api p50 ${ms(A.p50).padStart(6)} p95 ${ms(A.p95).padStart(6)} ms | raw p50 ${ms(R.p50).padStart(6)} p95 ${ms(R.p95).padStart(6)} ms | ratio p50 ${(A.p50 / R.p50).toFixed(2)}\n`,
      );
    }
    return worst;
  } finally {
    await app.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { leads: { type: 'string', default: '1000000' }, iterations: { type: 'string', default: '40' }, keep: { type: 'boolean', default: false } } });
  const leads = Number(values.leads);
  const iterations = Number(values.iterations);
  if (!(leads >= 1) || !(iterations >= 1)) throw new Error('--leads and --iterations must be positive whole numbers');
  const server = await benchPostgres();
  const interrupted = () => void server.stop().finally(() => process.exit(130));
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  const name = values.keep ? `dialer_leads_bench_${leads}` : `dialer_leads_bench_${process.pid}`;
  let database: Awaited<ReturnType<typeof createDatabase>> | undefined;
  try {
    database = await createDatabase(server.url, name, { reuse: values.keep });
    const db = await openPostgres(database.url);
    try {
      await migrate(db);
      process.stdout.write(`postgres: ${server.label}, database ${name}; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);
      const p95 = await run(db, leads, iterations);
      process.stdout.write(`leads list: first page p95 ${ms(p95)} ms (aim <= 100 ms); load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);
    } finally {
      await db.close();
    }
  } finally {
    if (database && !values.keep) await database.drop();
    await server.stop();
  }
}

await main();

/**
 * npm run bench:dnc: importing a do-not-call list of NUMBERS (default 1,000,000) numbers, on the
 * embedded database (PGlite) and on PostgreSQL (DATABASE_URL's server, else a throwaway one).
 * `dialer serve` runs as its own process; the CSV (one E.164 number a line after a header: US
 * numbers over twenty area codes and UK mobiles, spread as a real registry's are, every 50,000th
 * line malformed, and some 0.1 % that libphonenumber finds invalid for their country) is POSTed to /dnc-lists/{id}/import as a stream, as a client sends it; the time is
 * from the first byte sent to the answer. Beside it, the floor: the same valid numbers, already
 * parsed, written into the same table of the same database (another list) by one bare multi-row
 * INSERT (unnest) per 10,000, no parsing, no HTTP. BACKENDS=pglite or postgres runs one.
 * Last line: `dnc: import N numbers: PGlite X s (floor F s), PostgreSQL Y s (floor G s)`. Aims:
 * under 120 s on PGlite, under 60 s on PostgreSQL. Method and figures: docs/benchmarks.md.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { API_PREFIX } from '../src/app.js';
import { migrate, openDatabase, type Db } from '../src/db/index.js';
import { freePort } from '../test/helpers/net.js';
import { benchPostgres, createDatabase } from './lib/pg.js';
import { serveDialer } from './lib/serve.js';

const NUMBERS = Number(process.env.NUMBERS ?? 1_000_000);
const BACKENDS = (process.env.BACKENDS ?? 'pglite,postgres').split(',');
const FLOOR_BATCH = 10_000;
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
const out = (line: string) => process.stdout.write(`${line}\n`);

const AREAS = [212, 646, 415, 310, 312, 617, 202, 305, 404, 713, 206, 303, 503, 702, 214, 215, 480, 512, 615, 718];
/** The i-th number: a permutation of the space, so neighbouring lines are far apart (as in a registry). */
function numberAt(i: number): string {
  if (i % 5 === 4) return `+4477${String((i * 7_919 + 1_234) % 100_000_000).padStart(8, '0')}`;
  const space = AREAS.length * 800 * 10_000;
  const x = (i * 7_919 + 12_345) % space;
  return `+1${AREAS[Math.floor(x / 8_000_000)]}${200 + (Math.floor(x / 10_000) % 800)}${String(x % 10_000).padStart(4, '0')}`;
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-bench-dnc-'));
const csvPath = path.join(dir, 'list.csv');
const valid: string[] = [];
{
  const lines = ['phone_number'];
  for (let i = 0; i < NUMBERS; i++) {
    if (i % 50_000 === 49_999) lines.push('not a number');
    else {
      const n = numberAt(i);
      valid.push(n);
      lines.push(n);
    }
  }
  fs.writeFileSync(csvPath, `${lines.join('\n')}\n`);
}
out(`bench:dnc: ${NUMBERS} lines (${valid.length} numbers, ${(fs.statSync(csvPath).size / 1e6).toFixed(1)} MB); ${os.cpus().length} CPUs; load average ${load()}`);

/** Imports the CSV into a new list of a `dialer serve` on `databaseUrl` (empty: PGlite in dataDir); answers seconds and the answer. */
async function importThrough(env: { DATABASE_URL: string; DIALER_DATA_DIR: string }): Promise<{ seconds: number; result: any; floorList: string }> {
  const port = await freePort();
  const dialer = await serveDialer({
    env: { ...process.env, ...env, PORT: String(port), DIALER_SANDBOX: 'false', DIALER_ADMIN_EMAIL: 'bench@example.com', DIALER_ADMIN_PASSWORD: 'bench-password', DIALER_JWT_SECRET: 'bench-dnc-secret-bench-dnc-secret-bench', LOG_LEVEL: 'warn' },
  });
  try {
    const token = (await dialer.call('POST', '/login', { email: 'bench@example.com', password: 'bench-password' })).body.access_token as string;
    const api = async (p: string, body: unknown) => {
      const res = await dialer.call('POST', p, body, token);
      if (res.status >= 400) throw new Error(`POST ${p}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    };
    const reseller = (await api('/resellers', { name: 'Bench' })).id as string;
    const list = (await api('/dnc-lists', { name: 'registry', reseller_id: reseller, source: 'bench' })).id as string;
    const floorList = (await api('/dnc-lists', { name: 'floor', reseller_id: reseller, source: 'bench' })).id as string;
    const started = performance.now();
    const res = await fetch(`http://127.0.0.1:${port}${API_PREFIX}/dnc-lists/${list}/import?version=bench`, {
      method: 'POST',
      headers: { 'content-type': 'text/csv', authorization: `Bearer ${token}` },
      body: Readable.toWeb(fs.createReadStream(csvPath, { highWaterMark: 256 * 1024 })) as ReadableStream,
      duplex: 'half',
    } as RequestInit);
    const result = await res.json();
    const seconds = (performance.now() - started) / 1000;
    if (res.status !== 200) throw new Error(`import: ${res.status} ${JSON.stringify(result)}`);
    return { seconds, result, floorList };
  } finally {
    await dialer.stop();
  }
}

/** The floor: the same numbers, parsed already, by bare multi-row INSERTs into the same table. */
async function floor(db: Db, listId: string): Promise<number> {
  const started = performance.now();
  await db.tx(async (q) => {
    for (let from = 0; from < valid.length; from += FLOOR_BATCH) {
      await q.query('INSERT INTO dnc_numbers (list_id, phone_number) SELECT $1, n FROM unnest($2::text[]) AS n ON CONFLICT DO NOTHING', [listId, valid.slice(from, from + FLOOR_BATCH)]);
    }
  });
  return (performance.now() - started) / 1000;
}

const figures: string[] = [];
const report = (label: string, seconds: number, result: any, floorSeconds: number) => {
  out(
    `${label}: imported ${result.imported} (${result.malformed} malformed lines reported, first at line ${result.errors[0]?.line}) in ${seconds.toFixed(1)} s, ${Math.round(NUMBERS / seconds)} lines/s; ` +
      `floor ${floorSeconds.toFixed(1)} s (Dialer / floor ${(seconds / floorSeconds).toFixed(2)}); load ${load()}`,
  );
  figures.push(`${label} ${seconds.toFixed(1)} s (floor ${floorSeconds.toFixed(1)} s)`);
};
try {
  if (BACKENDS.includes('pglite')) {
    const dataDir = path.join(dir, 'pglite');
    fs.mkdirSync(dataDir);
    const { seconds, result, floorList } = await importThrough({ DATABASE_URL: '', DIALER_DATA_DIR: dataDir });
    const db = await openDatabase({ databaseUrl: undefined, dataDir });
    await migrate(db);
    const floorSeconds = await floor(db, floorList);
    await db.close();
    report('PGlite', seconds, result, floorSeconds);
  }
  if (BACKENDS.includes('postgres')) {
    const server = await benchPostgres();
    const database = await createDatabase(server.url, `dialer_bench_dnc_${process.pid}`);
    try {
      const { seconds, result, floorList } = await importThrough({ DATABASE_URL: database.url, DIALER_DATA_DIR: path.join(dir, 'pg-data') });
      const db = await openDatabase({ databaseUrl: database.url, dataDir: dir });
      const floorSeconds = await floor(db, floorList);
      await db.close();
      report(`PostgreSQL (${server.label})`, seconds, result, floorSeconds);
    } finally {
      await database.drop();
      await server.stop();
    }
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
out(`dnc: import ${NUMBERS} numbers: ${figures.join(', ')}`);

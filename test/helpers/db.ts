/**
 * A fresh, migrated database per test file, on the backend `npm test` chose: in-memory PGlite, or
 * a database of its own created in the test PostgreSQL server (dropped on close).
 */
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { dumpPglite, loadMigrations, migrate, openPglite, openPostgres, type Db } from '../../src/db/index.js';

export type Backend = 'pglite' | 'postgres';

export function testBackend(): Backend {
  return process.env.DIALER_TEST_DB === 'postgres' ? 'postgres' : 'pglite';
}

/** Connection string of a new, empty database in the test server (postgres backend only). */
export async function createPgDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const serverUrl = process.env.DIALER_TEST_DATABASE_URL ?? process.env.DATABASE_URL;
  if (!serverUrl) throw new Error('DIALER_TEST_DB=postgres needs DIALER_TEST_DATABASE_URL (npm test sets it)');
  const name = `dialer_test_${randomUUID().replace(/-/g, '')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: serverUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** A migrated database; `close()` also removes it. */
export async function createTestDb(backend: Backend = testBackend()): Promise<Db & { url?: string }> {
  if (backend === 'pglite') return migratedPglite();
  const created = await createPgDatabase();
  const db = await openPostgres(created.url);
  await migrate(db);
  return {
    ...db,
    url: created.url,
    async close() {
      await db.close();
      await created.drop();
    },
  };
}

/**
 * In-memory PGlite, migrated. Starting PGlite from scratch (initdb in WASM) takes seconds, so the
 * first test process keeps a snapshot of a freshly migrated database in the temp directory, keyed
 * by the migrations' content, and later ones load it (about 7x faster).
 */
async function migratedPglite(): Promise<Db> {
  const file = snapshotFile();
  if (fs.existsSync(file)) {
    try {
      const db = await openPglite(undefined, { loadDataDir: new Blob([fs.readFileSync(file)]) });
      await migrate(db);
      return db;
    } catch {
      fs.rmSync(file, { force: true });
    }
  }
  const db = await openPglite(undefined);
  await migrate(db);
  const snapshot = Buffer.from(await (await dumpPglite(db)).arrayBuffer());
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, snapshot);
  fs.renameSync(tmp, file);
  return db;
}

/** Where the snapshot of a freshly migrated database is kept: named by the migrations' content. */
function snapshotFile(): string {
  const hash = createHash('sha256');
  for (const m of loadMigrations()) hash.update(`${m.version}:${m.sql}`);
  return path.join(os.tmpdir(), `dialer-pglite-${hash.digest('hex').slice(0, 16)}.tar`);
}

/**
 * Puts a freshly migrated embedded database in the Dialer data directory `dataDir` (unless it holds
 * one already), as a second start of `dialer serve` finds it: for tests whose subject is not the
 * first start, which spends seconds in initdb and every migration on disk. The first start is
 * proven on its own (test/cli/serve.test.ts starts real processes on empty data directories).
 * The first test process that needs one writes a migrated data directory (cleanly closed) beside
 * the snapshot; later ones copy it, which takes a fraction of a second.
 */
export async function migratedDataDir(dataDir: string): Promise<void> {
  const pgdata = path.join(dataDir, 'pgdata');
  if (fs.existsSync(pgdata)) return;
  // A data directory is written by one version of the embedded database: the template is named by it too.
  const template = snapshotFile().replace(/\.tar$/, `-${pgliteVersion()}.pgdata`);
  if (!fs.existsSync(template)) {
    if (!fs.existsSync(snapshotFile())) await (await migratedPglite()).close();
    const building = `${template}.${process.pid}.tmp`;
    try {
      const db = await openPglite(building, { loadDataDir: new Blob([fs.readFileSync(snapshotFile())]) });
      await migrate(db);
      await db.close();
      fs.renameSync(building, template);
    } catch {
      // Another process put it there first (the rename found it), or the snapshot does not load:
      // without a template the server starts from an empty directory, as a first start does.
      fs.rmSync(building, { recursive: true, force: true });
      if (!fs.existsSync(template)) return;
    }
  }
  fs.cpSync(template, pgdata, { recursive: true });
}

function pgliteVersion(): string {
  const manifest = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../node_modules/@electric-sql/pglite/package.json');
  return (JSON.parse(fs.readFileSync(manifest, 'utf8')) as { version: string }).version;
}

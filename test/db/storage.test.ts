import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { DataDirLockedError, loadMigrations, migrate, openDatabase, openPostgres } from '../../src/db/index.js';
import { createPgDatabase, migratedDataDir, testBackend } from '../helpers/db.js';

const backend = testBackend();

/**
 * A database of its own. On PGlite, a data directory: empty (the first open runs initdb), or with
 * `migrated` the migrated database already in it, as a later start finds it, for the tests whose
 * subject is not the first open (initdb in WASM takes seconds).
 */
async function openFresh(migrated = false): Promise<{ open: () => ReturnType<typeof openDatabase>; cleanup: () => Promise<void> }> {
  if (backend === 'pglite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-store-'));
    if (migrated) await migratedDataDir(dir);
    return { open: () => openDatabase({ databaseUrl: undefined, dataDir: dir }), cleanup: async () => fs.rmSync(dir, { recursive: true, force: true }) };
  }
  const created = await createPgDatabase();
  return { open: () => openDatabase({ databaseUrl: created.url, dataDir: '/nonexistent' }), cleanup: created.drop };
}

describe(`storage on ${backend}`, () => {
  it('data survives closing and opening again', async () => {
    const { open, cleanup } = await openFresh();
    try {
      const db1 = await open();
      await migrate(db1);
      await db1.query("INSERT INTO resellers (id, name) VALUES ('r-keep', 'Kept')");
      await db1.close();
      const db2 = await open();
      assert.deepEqual(await migrate(db2), [], 'nothing left to migrate');
      const { rows } = await db2.query<{ name: string }>("SELECT name FROM resellers WHERE id = 'r-keep'");
      assert.deepEqual(rows, [{ name: 'Kept' }]);
      await db2.close();
    } finally {
      await cleanup();
    }
  });

  it('a transaction that throws leaves nothing behind', async () => {
    const { open, cleanup } = await openFresh(true);
    try {
      const db = await open();
      await migrate(db);
      await assert.rejects(
        db.tx(async (q) => {
          await q.query("INSERT INTO resellers (id, name) VALUES ('r-tx', 'Tx')");
          throw new Error('boom');
        }),
        /boom/,
      );
      assert.equal((await db.query("SELECT 1 FROM resellers WHERE id = 'r-tx'")).rows.length, 0);
      await db.close();
    } finally {
      await cleanup();
    }
  });

  it("a transaction's final statement commits it, or rolls it back when it fails", async () => {
    const { open, cleanup } = await openFresh(true);
    try {
      const db = await open();
      await migrate(db);
      const names = async () => (await db.query<{ id: string }>("SELECT id FROM resellers WHERE id LIKE 'r-final%' ORDER BY id")).rows.map((r) => r.id);
      // Both statements, the first sent with BEGIN and the second with COMMIT, are kept.
      const answer = await db.tx(async (q) => {
        await q.query("INSERT INTO resellers (id, name) VALUES ('r-final-1', 'One')");
        const { rows } = await q.query<{ id: string }>("INSERT INTO resellers (id, name) VALUES ('r-final-2', 'Two') RETURNING id", [], { final: true });
        return rows[0]!.id;
      });
      assert.equal(answer, 'r-final-2');
      assert.deepEqual(await names(), ['r-final-1', 'r-final-2']);
      // A final statement that fails takes the statements before it back with it.
      await assert.rejects(
        db.tx(async (q) => {
          await q.query("INSERT INTO resellers (id, name) VALUES ('r-final-3', 'Three')");
          await q.query("INSERT INTO resellers (id, name) VALUES ('r-final-1', 'Again')", [], { final: true });
        }),
        /duplicate key|unique/i,
      );
      assert.deepEqual(await names(), ['r-final-1', 'r-final-2']);
      // Nothing may follow it: the statement after it is refused and never runs.
      await assert.rejects(
        db.tx(async (q) => {
          await q.query("INSERT INTO resellers (id, name) VALUES ('r-final-4', 'Four')", [], { final: true });
          await q.query("INSERT INTO resellers (id, name) VALUES ('r-final-5', 'Five')");
        }),
        /after the final statement/,
      );
      assert.deepEqual(await names(), ['r-final-1', 'r-final-2', 'r-final-4']);
      // The connection is fit for the next transaction.
      assert.equal(await db.tx(async (q) => (await q.query<{ n: number }>('SELECT count(*)::int AS n FROM resellers')).rows[0]!.n > 0), true);
      await db.close();
    } finally {
      await cleanup();
    }
  });

  it('migrations are numbered and each applied once', async () => {
    const migrations = loadMigrations();
    assert.ok(migrations.length >= 1);
    migrations.forEach((m, i) => i > 0 && assert.ok(m.version > migrations[i - 1]!.version, `${m.name} has a number of its own`));
  });

  if (backend === 'pglite') {
    it('a second opener of the same data directory is refused with a clear message', async () => {
      const { open, cleanup } = await openFresh(true);
      try {
        const db = await open();
        await assert.rejects(open(), (err: unknown) => err instanceof DataDirLockedError && /in use by another Dialer process/.test(err.message));
        await db.close();
        const again = await open();
        await again.close();
      } finally {
        await cleanup();
      }
    });

    it('a lock left by a dead process is taken over', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-store-'));
      await migratedDataDir(dir);
      try {
        const dead = spawnSync(process.execPath, ['-e', '0']).pid;
        fs.writeFileSync(path.join(dir, 'dialer.lock'), `${dead}\n`);
        const db = await openDatabase({ databaseUrl: undefined, dataDir: dir });
        assert.equal(fs.readFileSync(path.join(dir, 'dialer.lock'), 'utf8').trim(), String(process.pid));
        await db.close();
        assert.equal(fs.existsSync(path.join(dir, 'dialer.lock')), false, 'released on close');
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it('a commit survives the process being killed (the embedded database runs in a thread of it)', async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-store-'));
      await migratedDataDir(dir);
      try {
        // A process that commits, says so, and stays up until it is killed without warning.
        const script = `
          const { openDatabase, migrate } = await import(${JSON.stringify(new URL('../../src/db/index.ts', import.meta.url).href)});
          const db = await openDatabase({ databaseUrl: undefined, dataDir: ${JSON.stringify(dir)} });
          await migrate(db);
          await db.query("INSERT INTO resellers (id, name) VALUES ('r-killed', 'Survivor')");
          process.stdout.write('committed\\n');
          setInterval(() => {}, 60_000);`;
        const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
        const exited = new Promise((resolve) => child.once('exit', resolve));
        await new Promise<void>((resolve, reject) => {
          child.stdout.on('data', (d: Buffer) => d.toString().includes('committed') && resolve());
          child.once('exit', (code) => reject(new Error(`the writer exited (${code}) before committing`)));
        });
        child.kill('SIGKILL');
        await exited;
        const db = await openDatabase({ databaseUrl: undefined, dataDir: dir });
        const { rows } = await db.query<{ name: string }>("SELECT name FROM resellers WHERE id = 'r-killed'");
        assert.deepEqual(rows, [{ name: 'Survivor' }]);
        await db.close();
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  if (backend === 'postgres') {
    it('two processes migrating at once take turns and apply each migration once', async () => {
      const created = await createPgDatabase();
      try {
        const a = await openPostgres(created.url);
        const b = await openPostgres(created.url);
        const [ra, rb] = await Promise.all([migrate(a), migrate(b)]);
        assert.deepEqual([...ra, ...rb].sort((x, y) => x - y), loadMigrations().map((m) => m.version));
        const { rows } = await a.query<{ n: number }>('SELECT count(*)::int AS n FROM schema_migrations');
        assert.equal(rows[0]!.n, loadMigrations().length);
        await a.close();
        await b.close();
      } finally {
        await created.drop();
      }
    });
  }
});

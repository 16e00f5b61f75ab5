#!/usr/bin/env node
/**
 * `npm test`: every test file on embedded PGlite, then the storage and API suites (test/api,
 * test/db) again on a real PostgreSQL. With DATABASE_URL set that server is used (each test file
 * creates and drops its own database in it); otherwise a throwaway PostgreSQL is started here with
 * the server binaries of the machine (Debian's postgresql package) and removed afterwards.
 *
 *   npm test                       everything
 *   npm test -- test/api/leads.test.ts    chosen files (on both backends when they are api/db suites)
 *   DIALER_TEST_BACKENDS=pglite npm test  one backend only (pglite or postgres)
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const BOTH_BACKENDS = [`test${path.sep}api${path.sep}`, `test${path.sep}db${path.sep}`];

function listTests(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'helpers' && entry.name !== 'fixtures') out.push(...listTests(full));
    } else if (entry.name.endsWith('.test.ts')) out.push(path.relative(root, full));
  }
  return out.sort();
}

const chosen = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const files = chosen.length > 0 ? chosen.map((f) => path.relative(root, path.resolve(f))) : listTests(path.join(root, 'test'));
const backends = (process.env.DIALER_TEST_BACKENDS ?? 'pglite,postgres').split(',').map((s) => s.trim());

function run(label, testFiles, env) {
  return new Promise((resolve) => {
    if (testFiles.length === 0) return resolve(0);
    process.stdout.write(`\n== ${label}: ${testFiles.length} test file(s)\n`);
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--test', '--test-reporter=spec', `--test-concurrency=${process.env.DIALER_TEST_CONCURRENCY ?? Math.max(2, Math.min(4, os.cpus().length))}`, ...testFiles],
      { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } },
    );
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

function findPgBin() {
  const candidates = [];
  if (process.env.PG_BIN) candidates.push(process.env.PG_BIN);
  try {
    const base = '/usr/lib/postgresql';
    for (const v of fs.readdirSync(base).sort((a, b) => Number(b) - Number(a))) candidates.push(path.join(base, v, 'bin'));
  } catch {
    /* not Debian */
  }
  const which = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  if (which.status === 0 && which.stdout.trim()) candidates.push(path.dirname(which.stdout.trim()));
  return candidates.find((dir) => fs.existsSync(path.join(dir, 'initdb')) && fs.existsSync(path.join(dir, 'postgres')));
}

/** Starts a throwaway PostgreSQL; returns { url, stop } or throws with a clear reason. */
async function startThrowawayPostgres() {
  const bin = findPgBin();
  if (!bin) {
    throw new Error(
      'no PostgreSQL server binaries found (looked in /usr/lib/postgresql/*/bin and PATH). ' +
        'Install them (apt-get install -y postgresql) or set DATABASE_URL to a server the tests may create databases in.',
    );
  }
  const asRoot = process.getuid?.() === 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-pg-'));
  const asUser = (cmd, args) => (asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args]);
  if (asRoot) {
    const id = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    if (id.status !== 0) throw new Error('running as root but there is no "postgres" system user to run PostgreSQL as (PostgreSQL refuses to run as root)');
    spawnSync('chown', ['-R', 'postgres', dir]);
  }
  const dataDir = path.join(dir, 'data');
  const [initCmd, initArgs] = asUser(path.join(bin, 'initdb'), ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const init = spawnSync(initCmd, initArgs, { encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.stdout}`);
  const port = await freePort();
  const [pgCmd, pgArgs] = asUser(path.join(bin, 'postgres'), [
    '-D', dataDir, '-p', String(port), '-k', dir, '-h', '127.0.0.1',
    '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=300',
  ]);
  const server = spawn(pgCmd, pgArgs, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  server.stderr.on('data', (d) => (log += d));
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const started = Date.now();
  for (;;) {
    if (server.exitCode !== null) throw new Error(`PostgreSQL exited at start: ${log}`);
    const ok = await new Promise((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => (s.end(), resolve(true)));
      s.on('error', () => resolve(false));
    });
    if (ok && /ready to accept connections/.test(log)) break;
    if (Date.now() - started > 30_000) throw new Error(`PostgreSQL did not start within 30 s: ${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  process.stdout.write(`Started a throwaway PostgreSQL (${path.basename(path.dirname(bin))}) on port ${port}\n`);
  return {
    url,
    stop: async () => {
      // Signal the postmaster itself (runuser does not pass signals on): fast shutdown.
      try {
        const pid = Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
        process.kill(pid, 'SIGINT');
      } catch {
        server.kill('SIGINT');
      }
      await new Promise((r) => {
        if (server.exitCode !== null) return r();
        const timer = setTimeout(() => (server.kill('SIGKILL'), r()), 10_000);
        server.on('exit', () => (clearTimeout(timer), r()));
      });
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

let failed = 0;
if (backends.includes('pglite')) failed += (await run('PGlite', files, { DIALER_TEST_DB: 'pglite' })) === 0 ? 0 : 1;

if (backends.includes('postgres')) {
  const pgFiles = files.filter((f) => BOTH_BACKENDS.some((prefix) => f.startsWith(prefix)));
  if (pgFiles.length > 0) {
    let pg;
    try {
      pg = process.env.DATABASE_URL ? { url: process.env.DATABASE_URL, stop: async () => {} } : await startThrowawayPostgres();
    } catch (err) {
      process.stderr.write(`\nCannot run the PostgreSQL suites: ${err.message}\n`);
      process.exit(1);
    }
    try {
      failed += (await run('PostgreSQL', pgFiles, { DIALER_TEST_DB: 'postgres', DIALER_TEST_DATABASE_URL: pg.url })) === 0 ? 0 : 1;
    } finally {
      await pg.stop();
    }
  }
}
process.exit(failed === 0 ? 0 : 1);

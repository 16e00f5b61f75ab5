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
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startThrowawayPostgres } from './throwaway-postgres.mjs';

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

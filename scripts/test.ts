/**
 * `npm test`: every test file on embedded PGlite (but *.postgres.test.ts), then the storage and API suites (test/api,
 * test/db) again on a real PostgreSQL. It first finds or brings what the tests need (see
 * provision.ts: the voice, PostgreSQL, Chromium) and ends with one summary line: the counts, what
 * was used, and what was skipped.
 *
 *   npm test                                chosen: everything
 *   npm test -- test/api/leads.test.ts      chosen files or folders (on both backends when they are api/db suites)
 *   DIALER_TEST_BACKENDS=pglite npm test    one backend only (pglite or postgres)
 *   DIALER_TEST_SKIP_BROWSER=1 npm test     without the browser suites (said in the summary)
 *   DIALER_TEST_FILE_TIMEOUT_MS=60000 npm test  a file still running after this long fails (default 10 minutes)
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildTestTree, type TestTree } from './test-tree.js';
import { provisionBaresip, provisionChromium, provisionKamailio, provisionPostgres, provisionVoice, ProvisionError, type Env, type Postgres, type Step } from './provision.js';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const BOTH_BACKENDS = [`test${path.sep}api${path.sep}`, `test${path.sep}db${path.sep}`];
/** Suites that only run on PostgreSQL (several processes on one database): left out of the PGlite run. */
const POSTGRES_ONLY = '.postgres.test.ts';
/**
 * A test file that has not finished after this long fails, named, and the run goes on (the slowest
 * file takes about two minutes on 2 cores; DIALER_TEST_FILE_TIMEOUT_MS changes it). With
 * `--test-force-exit`, a file whose tests are done ends even if something it started (a socket, a
 * timer) would keep its process alive: without both, one stuck file stalls the whole run silently
 * until CI's own limit.
 */
const FILE_TIMEOUT_MS = wholeNumber('DIALER_TEST_FILE_TIMEOUT_MS', 10 * 60_000);
/** Test files run at once. */
const CONCURRENCY = wholeNumber('DIALER_TEST_CONCURRENCY', Math.max(2, Math.min(4, os.cpus().length)));

/** A setting of the test command that must be a whole number above 0: `fallback` when unset; a wrong one stops the run, saying so. */
function wholeNumber(name: string, fallback: number): number {
  const raw = process.env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  if (!/^[1-9][0-9]*$/.test(raw)) {
    process.stderr.write(`npm test: ${name} must be a whole number above 0 (it is ${JSON.stringify(raw)})\n`);
    process.exit(2);
  }
  return Number(raw);
}
/**
 * Whether a test file uses a program of the machine, told by its source: it imports the helper
 * that starts Chromium, baresip or kamailio. A new suite brings what it needs without being listed
 * here.
 */
const USES = {
  chromium: /from '\.\.\/helpers\/(browser|dashboard)\.js'/,
  baresip: /from '\.\.\/helpers\/baresip\.js'/,
  kamailio: /from '\.\.\/helpers\/kamailio\.js'/,
};
function uses(file: string, program: keyof typeof USES): boolean {
  return USES[program].test(fs.readFileSync(path.join(root, file), 'utf8'));
}

function listTests(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'helpers' && entry.name !== 'fixtures') out.push(...listTests(full));
    } else if (entry.name.endsWith('.test.ts')) out.push(path.relative(root, full));
  }
  return out.sort();
}

interface Counts {
  pass: number;
  fail: number;
  skipped: number;
  todo: number;
  cancelled: number;
}

const totals: Counts = { pass: 0, fail: 0, skipped: 0, todo: 0, cancelled: 0 };
/** Every failed test of both runs, named (see failures-reporter.mjs): the summary lists them. */
const failures: string[] = [];
/** Every suite skipped whole (node's counts leave them out), named: the summary counts and lists them. */
const skippedSuites: string[] = [];

/** Runs node's test runner on `files` (compiled, in `tree`); its output goes through, its closing counts are added up. */
function run(label: string, files: string[], env: Env, tree: TestTree): Promise<number> {
  return new Promise((resolve) => {
    if (files.length === 0) return resolve(0);
    process.stdout.write(`\n== ${label}: ${files.length} test file(s)\n`);
    const failuresFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-test-')), 'failures.txt');
    const args = [
      // The files are compiled JavaScript (test-tree.ts); stack traces still name the TypeScript's lines.
      '--enable-source-maps', '--test',
      '--test-reporter=spec', '--test-reporter-destination=stdout',
      `--test-reporter=${path.join(root, 'scripts', 'failures-reporter.mjs')}`, `--test-reporter-destination=${failuresFile}`,
      `--test-concurrency=${CONCURRENCY}`, `--test-timeout=${FILE_TIMEOUT_MS}`, '--test-force-exit',
    ];
    const child = spawn(process.execPath, [...args, ...files.map(tree.compiled)], {
      cwd: tree.dir,
      stdio: ['ignore', 'pipe', 'inherit'],
      env: childEnv(env),
    });
    // The runner's closing counts (`ℹ pass 12`): summed over both runs for the summary.
    const counts: Partial<Counts> = {};
    let partial = '';
    child.stdout.on('data', (chunk: Buffer) => {
      process.stdout.write(chunk);
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        const m = /^ℹ (pass|fail|skipped|todo|cancelled) (\d+)$/.exec(line);
        if (m) counts[m[1] as keyof Counts] = Number(m[2]);
      }
    });
    child.on('exit', (code, signal) => {
      for (const [k, v] of Object.entries(counts)) totals[k as keyof Counts] += v;
      const lines = fs.existsSync(failuresFile) ? fs.readFileSync(failuresFile, 'utf8').split('\n').filter(Boolean) : [];
      for (const line of lines) {
        const [kind, what] = [line.slice(0, line.indexOf('\t')), line.slice(line.indexOf('\t') + 1)];
        (kind === 'skip' ? skippedSuites : failures).push(`${label}: ${what.replace(/\.test\.js\b/g, '.test.ts')}`);
      }
      fs.rmSync(path.dirname(failuresFile), { recursive: true, force: true });
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

/** process.env with the steps' variables set or removed. */
function childEnv(extra: Env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [k, v] of Object.entries({ ...provided, ...extra })) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

const chosen = process.argv.slice(2).filter((a) => !a.startsWith('-'));
// A chosen folder means every test file under it; a chosen path that is neither is an error, not zero tests.
const files = chosen.length > 0 ? chosen.flatMap(chosenFiles) : listTests(path.join(root, 'test'));

function chosenFiles(arg: string): string[] {
  const full = path.resolve(arg);
  const stat = fs.statSync(full, { throwIfNoEntry: false });
  if (stat?.isDirectory()) return listTests(full);
  if (stat?.isFile()) return [path.relative(root, full)];
  process.stderr.write(`npm test: no such test file or folder: ${arg}\n`);
  process.exit(2);
}
const backends = (process.env.DIALER_TEST_BACKENDS ?? 'pglite,postgres').split(',').map((s) => s.trim());
const pgFiles = backends.includes('postgres') ? files.filter((f) => BOTH_BACKENDS.some((prefix) => f.startsWith(prefix))) : [];

const notes: string[] = [];
const skippedParts: string[] = [];
let provided: Env = {};
let pg: Postgres | undefined;
try {
  const steps: Step[] = [provisionVoice(process.env)];
  if (files.some((f) => uses(f, 'chromium'))) steps.push(provisionChromium(process.env));
  if (files.some((f) => uses(f, 'baresip'))) steps.push(provisionBaresip(process.env));
  if (files.some((f) => uses(f, 'kamailio'))) steps.push(provisionKamailio(process.env));
  for (const step of steps) {
    notes.push(step.note);
    provided = { ...provided, ...step.env };
    if (step.skipped) skippedParts.push(step.skipped);
  }
  if (pgFiles.length > 0) {
    pg = await provisionPostgres(process.env);
    notes.push(pg.note);
  }
} catch (err) {
  if (!(err instanceof ProvisionError)) throw err;
  process.stderr.write(`\nnpm test cannot run: ${err.message}\n`);
  process.exit(1);
}
process.stdout.write(`${notes.join('\n')}\n`);

let failed = 0;
let tree: TestTree | undefined;
try {
  tree = await buildTestTree(root);
  const pgliteFiles = files.filter((f) => !f.endsWith(POSTGRES_ONLY));
  if (backends.includes('pglite')) failed += (await run('PGlite', pgliteFiles, { DIALER_TEST_DB: 'pglite' }, tree)) === 0 ? 0 : 1;
  if (pg) failed += (await run('PostgreSQL', pgFiles, { DIALER_TEST_DB: 'postgres', DIALER_TEST_DATABASE_URL: pg.url }, tree)) === 0 ? 0 : 1;
} finally {
  tree?.remove();
  await pg?.stop();
}

const skippedCount = totals.skipped + totals.todo + skippedSuites.length;
const skippedWhat = [
  ...(totals.skipped + totals.todo > 0 ? [`${totals.skipped + totals.todo} test(s)`] : []),
  ...(skippedSuites.length > 0 ? [`${skippedSuites.length} whole suite(s)`] : []),
].join(' and ');
const skipped =
  skippedCount > 0
    ? `skipped: ${skippedWhat}${skippedParts.length > 0 ? ` (${skippedParts.join('; ')})` : ''}`
    : skippedParts.length > 0
      ? `skipped: ${skippedParts.join('; ')}`
      : 'nothing skipped';
if (skippedSuites.length > 0) process.stdout.write(`\nnpm test: suites skipped whole:\n${skippedSuites.map((f) => `  ${f}`).join('\n')}\n`);
if (failures.length > 0) process.stdout.write(`\nnpm test: failed tests:\n${failures.map((f) => `  ${f}`).join('\n')}\n`);
process.stdout.write(`\nnpm test: ${notes.join('; ')}; ${skipped}\n${totals.pass} passed, ${totals.fail + totals.cancelled} failed, ${skippedCount} skipped\n`);
process.exit(failed === 0 && totals.fail + totals.cancelled === 0 ? 0 : 1);

/**
 * The tree `npm test` runs its files in: `src`, `test`, `bench` and `scripts` compiled to JavaScript
 * once per run (esbuild, each file on its own, as tsx would), beside links to everything else. A
 * test process then starts on plain Node: through tsx's loader hooks each of the run's ~170
 * processes spent about 2 s of CPU more loading the same modules, minutes of a run on 2 cores.
 *
 * The tree is `.tmp/test-run-*` inside the checkout (so that `node_modules` is found above it, and
 * paths a test builds from its own location, `../../src/db/migrations`, mean what they do in the
 * checkout). In the compiled folders every file is a copy of the checkout's (so that editing one
 * while a run goes on changes nothing under it), with its `.js` beside each `.ts`: what a test starts itself with `node --import tsx
 * src/cli.ts` runs the TypeScript as before. The dashboard's `.tsx` screens are left to its own
 * bundler, which reads the compiled `.js` of the modules they import. The other entries of the checkout (`web`, `docs`,
 * `node_modules`, `package.json`, ...) and `test/screenshots` are symbolic links to the originals, so
 * what a test writes there (screenshots, the dashboard's bundle) lands in the checkout.
 */
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

/** Compiled; every other top-level entry is linked. */
const COMPILED = ['src', 'test', 'bench', 'scripts', 'web'];
/** The dashboard's sources: its `.ts` modules are compiled too (tests import them), its `.tsx` screens left to its bundler. */
const WEB = 'web';
/** Never in the tree. */
const LEFT_OUT = new Set(['.git', '.tmp', '.pid']);
/** Inside the compiled folders, linked whole (what tests write there must land in the checkout). */
const LINKED = [path.join('test', 'screenshots')];
/** Inside the compiled folders, linked whole wherever they are. */
const LINKED_NAMES = new Set(['node_modules']);

export interface TestTree {
  /** The tree's root: the test runner's working directory. */
  dir: string;
  /** The compiled file of a test file given relative to the checkout (`test/a.test.ts` -> `test/a.test.js`). */
  compiled(file: string): string;
  remove(): void;
}

export async function buildTestTree(root: string): Promise<TestTree> {
  fs.mkdirSync(path.join(root, '.tmp'), { recursive: true });
  pruneAbandoned(path.join(root, '.tmp'));
  const dir = fs.mkdtempSync(path.join(root, '.tmp', 'test-run-'));
  fs.writeFileSync(path.join(dir, '.pid'), String(process.pid));
  const remove = () => fs.rmSync(dir, { recursive: true, force: true });
  try {
    const sources: string[] = [];
    for (const entry of fs.readdirSync(root, { withFileTypes: true })) {
      if (LEFT_OUT.has(entry.name)) continue;
      const from = path.join(root, entry.name);
      if (entry.isDirectory() && COMPILED.includes(entry.name)) mirror(root, entry.name, dir, sources);
      else fs.symlinkSync(from, path.join(dir, entry.name));
    }
    const web = path.join(dir, WEB) + path.sep;
    const common = { outdir: dir, outbase: dir, format: 'esm', logLevel: 'error' } as const;
    await Promise.all([
      build({ ...common, entryPoints: sources.filter((f) => !f.startsWith(web)), platform: 'node', target: 'node20', sourcemap: 'inline', tsconfig: path.join(root, 'tsconfig.json') }),
      // Without source maps: the dashboard's bundler reads these in place of the TypeScript.
      build({ ...common, entryPoints: sources.filter((f) => f.startsWith(web)), platform: 'neutral', target: 'es2022', tsconfig: path.join(root, WEB, 'tsconfig.json') }),
    ]);
  } catch (err) {
    remove();
    throw err;
  }
  return { dir, compiled: (file) => file.replace(/\.ts$/, '.js'), remove };
}

/** Removes the trees of runs whose process is gone (stopped with Ctrl-C, killed); one made in the last minute may not have its `.pid` yet. */
function pruneAbandoned(tmp: string): void {
  for (const name of fs.readdirSync(tmp)) {
    if (!name.startsWith('test-run-')) continue;
    const tree = path.join(tmp, name);
    const pid = Number(fs.existsSync(path.join(tree, '.pid')) ? fs.readFileSync(path.join(tree, '.pid'), 'utf8') : NaN);
    if (Number.isInteger(pid) ? alive(pid) : Date.now() - fs.statSync(tree).mtimeMs < 60_000) continue;
    fs.rmSync(tree, { recursive: true, force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Copies every file of `root/rel` into `dir/rel` (folders made, `LINKED` ones linked whole); each `.ts` is added to `sources`. */
function mirror(root: string, rel: string, dir: string, sources: string[]): void {
  fs.mkdirSync(path.join(dir, rel), { recursive: true });
  for (const entry of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
    const child = path.join(rel, entry.name);
    const from = path.join(root, child);
    const to = path.join(dir, child);
    if (LINKED.includes(child) || LINKED_NAMES.has(entry.name)) fs.symlinkSync(from, to);
    else if (entry.isDirectory()) mirror(root, child, dir, sources);
    else if (entry.isFile()) {
      // A copy, not a link: a file edited while the run goes on must not change under it.
      fs.copyFileSync(from, to);
      if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) sources.push(to);
    } else if (entry.isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(from), to);
  }
  // Screenshots land in the checkout even when no test has taken one yet.
  for (const linked of LINKED) {
    if (path.dirname(linked) !== rel || fs.existsSync(path.join(dir, linked))) continue;
    fs.mkdirSync(path.join(root, linked), { recursive: true });
    fs.symlinkSync(path.join(root, linked), path.join(dir, linked));
  }
}

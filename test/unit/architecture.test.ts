/**
 * The shape of the source tree, kept true by test: imports run downhill, the lead's state has one
 * writer, the environment is read in one place, and files stay small enough to read.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { cycles, folderEdges, sourceFiles, SRC } from '../helpers/architecture.js';

const files = sourceFiles();
/** The dashboard's sources (web/src), relative to the repository. */
function webFiles(dir = path.join(SRC, '../web/src')): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return webFiles(full);
    return /\.tsx?$/.test(e.name) ? [path.relative(path.join(SRC, '..'), full)] : [];
  });
}
const edges = folderEdges(files);
const pairs = [...edges.keys()].map((k) => k.split(' -> ') as [string, string]);
const show = (from: string, to: string) => `${from} -> ${to}: ${edges.get(`${from} -> ${to}`)!.join(', ')}`;

/** The foundation every feature stands on; it imports nothing above it. */
const FOUNDATION = ['lib', 'config', 'db'];
/** The composition root and entry points: nothing else imports them. */
const ROOT = ['app', 'server', 'cli', 'commands'];

describe('architecture', () => {
  it('lib/, config and db/ import no feature', () => {
    const uphill = pairs.filter(([from, to]) => FOUNDATION.includes(from) && !FOUNDATION.includes(to));
    assert.deepEqual(uphill.map(([a, b]) => show(a, b)), []);
  });

  it('no feature imports the composition root (app.ts, server.ts, cli.ts)', () => {
    const intoRoot = pairs.filter(([from, to]) => ROOT.includes(to) && !ROOT.includes(from));
    assert.deepEqual(intoRoot.map(([a, b]) => show(a, b)), []);
  });

  it('no two folders import each other, directly or round a longer loop', () => {
    assert.deepEqual(cycles(pairs), []);
  });

  it('src/voice imports no Fastify and no SQL', () => {
    const voice = files.filter((f) => f.folder === 'voice');
    for (const f of voice) {
      assert.doesNotMatch(f.text, /from 'fastify'|from 'pg'|@electric-sql\/pglite/, f.file);
      for (const target of f.imports) assert.ok(!['db', 'http'].includes(target.split('/')[0]!), `${f.file} imports ${target}`);
    }
  });

  it('only the lifecycle writes a lead (UPDATE leads in at most two files, both in src/lifecycle)', () => {
    const writers = files.filter((f) => /UPDATE\s+leads\b/i.test(f.text)).map((f) => f.file);
    assert.ok(writers.length <= 2, `UPDATE leads in ${writers.join(', ')}`);
    for (const w of writers) assert.equal(w.split('/')[0], 'lifecycle', `${w} writes leads`);
  });

  it('only src/attempts ends an attempt (the one caller of the finish, outside the lifecycle that defines it)', () => {
    const callers = files.filter((f) => f.folder !== 'lifecycle' && /\bfinishAttempts\s*\(/.test(f.text)).map((f) => f.file);
    assert.deepEqual(callers, ['attempts/ends.ts']);
  });

  it('routes are mounted in one place (app.ts)', () => {
    const mounting = files.filter((f) => /\bregister(Tenants|Templates|Configurations|Numbers|Blacklist|Leads|Webhooks|Analytics|WebRtc|CallbackRoutes|AuthRoutes|FlagRoutes|MetricsRoute)\(scoped/.test(f.text));
    assert.deepEqual(mounting.map((f) => f.file), ['app.ts']);
  });

  it('the environment is read only by config.ts and the settings modules in src/config/', () => {
    const readers = files.filter((f) => f.folder !== 'config' && /process\.env\b/.test(f.text)).map((f) => f.file);
    assert.deepEqual(readers, []);
  });

  it('no source file is over 400 lines (the service and the dashboard)', () => {
    const dashboard = webFiles().map((file) => ({ file, text: fs.readFileSync(path.join(SRC, '..', file), 'utf8') }));
    const long = [...files, ...dashboard].map((f) => ({ file: f.file, lines: f.text.split('\n').length })).filter((f) => f.lines > 400);
    assert.deepEqual(long, []);
  });
});

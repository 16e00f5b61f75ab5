/**
 * The shape of the source tree, kept true by test: imports run downhill, each table has its owners
 * (the lead's rows one: the lifecycle), a rule or list named here has one home, the environment is
 * read in one place, and files stay small enough to read.
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
/**
 * Each table and the folders that may write its rows. A write elsewhere goes through the owner's
 * service or a door it documents (a feature's rules, such as a flow's validation or the release of
 * held leads, would be skipped otherwise).
 */
const TABLE_WRITERS: Record<string, readonly string[]> = {
  leads: ['lifecycle'],
  call_attempts: ['lifecycle'],
  rate_limit_events: ['lifecycle'],
  // The pool: a claim takes a number and a finish gives it back, inside their own statements.
  outbound_numbers: ['numbers', 'lifecycle'],
  // Each number's health, as the lifecycle's health round last measured it.
  outbound_number_health: ['lifecycle'],
  // A callee's opt-out, added by the finish in its transaction.
  blacklist: ['blacklist', 'lifecycle'],
  resellers: ['tenants'],
  merchants: ['tenants'],
  users: ['tenants'],
  templates: ['templates'],
  configurations: ['configurations'],
  sip_trunks: ['trunks'],
  s2s_tokens: ['auth'],
  login_failures: ['auth'],
  audit_log: ['auth'],
  settings: ['auth'],
  webhook_deliveries: ['webhooks'],
  webhook_attempts: ['webhooks'],
  webrtc_sessions: ['webrtc'],
  lead_stats: ['analytics'],
  lead_stats_delta: ['analytics'],
  lead_stats_breakdown: ['analytics'],
  lead_stats_breakdown_delta: ['analytics'],
  lead_stats_breakdown_daily: ['analytics'],
  lead_terms_pending: ['analytics'],
  lead_payload_terms: ['analytics'],
  lead_owners: ['analytics'],
  campaigns: ['campaigns'],
  dnc_lists: ['compliance'],
  dnc_numbers: ['compliance'],
  knowledge_documents: ['knowledge'],
  knowledge_chunks: ['knowledge'],
  privacy_retention: ['privacy'],
  idempotency_keys: ['leads'],
  live_transcript_lines: ['leads'],
  template_tests: ['template-tests'],
  template_test_runs: ['template-tests'],
  schema_migrations: ['db'],
};

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

  it('a table is written (INSERT, UPDATE, DELETE) only by the feature that owns it: a lead row only by src/lifecycle', () => {
    const strays: string[] = [];
    const unowned = new Set<string>();
    for (const f of files) {
      const code = f.text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
      for (const [, , table] of code.matchAll(/\b(INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+([a-z_][a-z0-9_]*)\b/g)) {
        const owners = TABLE_WRITERS[table!];
        if (!owners) unowned.add(`${table} (${f.file})`);
        else if (!owners.includes(f.folder)) strays.push(`${f.file} writes ${table}`);
      }
    }
    assert.deepEqual(strays, []);
    assert.deepEqual([...unowned], [], 'every table written has its owners in TABLE_WRITERS');
  });

  it('the lead statements stay few: UPDATE leads in at most two files (taking and ending)', () => {
    const writers = files.filter((f) => /UPDATE\s+leads\b/.test(f.text)).map((f) => f.file);
    assert.deepEqual(writers, ['lifecycle/claim-statements.ts', 'lifecycle/finish.ts']);
  });

  it('a lead may be called by one rule (mayCall, MAY_CALL_SQL), spelled nowhere else', () => {
    const spelled = files.filter((f) => f.file !== 'configurations/effective.ts' && /enable_calling\s*(OR|\|\|)\s*[\w.]*is_playground|is_playground\s*(OR|\|\|)\s*[\w.]*enable_calling/.test(f.text));
    assert.deepEqual(spelled.map((f) => f.file), []);
  });

  it('the lead statuses are listed once (src/lifecycle/types.ts)', () => {
    const lists = files.filter((f) => /\[\s*'BACKLOG',\s*'PROCESSING',\s*'RETRY',\s*'FINISHED'\s*\]/.test(f.text)).map((f) => f.file);
    assert.deepEqual(lists, ['lifecycle/types.ts']);
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

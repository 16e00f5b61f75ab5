/**
 * `dialer serve` as a newcomer runs it: a real process on embedded PGlite, a real port. Data written
 * through the API survives a restart; a second process on the same data directory is refused.
 * The first two tests start on empty data directories (the first start: initdb, every migration);
 * the others, whose subject is the running service, on one that holds the migrated database.
 */
import { TEST_OUTBOUND_ALLOW } from '../helpers/app.js';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { verifyWebhookSignature } from '../../src/webhooks/index.js';
import { migratedDataDir } from '../helpers/db.js';

const root = path.resolve(import.meta.dirname, '../..');
const PREFIX = '/agent/voice/dialer';

interface Serving {
  child: ChildProcess;
  url: string;
  /** What it has written to stdout so far. */
  readonly stdout: string;
}

const children: ChildProcess[] = [];

/** `node`: how node is started (e.g. `taskset -c 0 node --single-threaded-gc`). */
function serve(env: Record<string, string>, node: string[] = [process.execPath]): Promise<Serving> {
  return new Promise((resolve, reject) => {
    const [cmd, ...args] = [...node, '--import', 'tsx', 'src/cli.ts', 'serve'];
    const child = spawn(cmd!, args, {
      cwd: root,
      // The webhook receiver listens on loopback, which the outbound URL policy allows only when told to.
      env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', DATABASE_URL: '', DIALER_SANDBOX: 'false', DIALER_OUTBOUND_ALLOW: TEST_OUTBOUND_ALLOW, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => {
      stdout += d;
      const m = /"url":"(http:\/\/[^"]+?)\/agent\/voice\/dialer"/.exec(stdout);
      if (m) resolve({ child, url: m[1]!, get stdout() { return stdout; } });
    });
    child.stderr!.on('data', (d) => (stderr += d));
    child.on('exit', (code) => reject(Object.assign(new Error(`exited ${code}: ${stderr}`), { code, stderr, stdout })));
  });
}

function stop(s: Serving): Promise<number | null> {
  return new Promise((resolve) => {
    s.child.removeAllListeners('exit');
    s.child.on('exit', (code) => resolve(code));
    s.child.kill('SIGTERM');
  });
}

async function json(url: string, init: RequestInit = {}) {
  const res = await fetch(url, { ...init, headers: { 'content-type': 'application/json', ...(init.headers ?? {}) } });
  return { status: res.status, body: (await res.json()) as any };
}

const dirs: string[] = [];
/** A new data directory; `migrated`: with the migrated embedded database in it, as a second start finds it. */
async function dataDirectory(migrated: boolean): Promise<string> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-serve-'));
  dirs.push(dataDir);
  if (migrated) await migratedDataDir(dataDir);
  return dataDir;
}

/** Waits until `s` has written a line that `pattern` matches (what it logs is written in order). */
async function waitForOutput(s: Serving, pattern: RegExp): Promise<void> {
  for (let waited = 0; !pattern.test(s.stdout) && waited < 10_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
}

after(() => {
  children.forEach((c) => c.exitCode === null && c.kill('SIGKILL'));
  dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true }));
});

describe('dialer serve (embedded PGlite)', () => {
  it('keeps data across a restart and refuses a second process on the same data directory', async () => {
    const dataDir = await dataDirectory(false);
    const env = { DIALER_DATA_DIR: dataDir, DIALER_ADMIN_EMAIL: 'boss@example.com', DIALER_ADMIN_PASSWORD: 'boss-password' };
    const first = await serve(env);
    const health = await json(`${first.url}${PREFIX}/health`);
    assert.equal(health.body.status, 'ok');
    assert.equal(health.body.database, 'pglite');
    // No LLM (nor provider) configured: this Dialer says it cannot place calls, and why.
    assert.equal(health.body.calls.ready, false);
    assert.match(health.body.calls.reason, /no LLM is configured: set LLM_API_KEY/);
    const login = await json(`${first.url}${PREFIX}/login`, { method: 'POST', body: JSON.stringify({ email: 'boss@example.com', password: 'boss-password' }) });
    assert.equal(login.status, 200);
    const auth = { authorization: `Bearer ${login.body.access_token}` };
    const created = await json(`${first.url}${PREFIX}/resellers`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'Survivor' }) });
    assert.equal(created.status, 200);

    const second = await serve(env).then(
      () => assert.fail('a second process must not start'),
      (err: { code: number; stderr: string }) => err,
    );
    assert.equal(second.code, 1);
    assert.match(second.stderr, /in use by another Dialer process/);

    assert.equal(await stop(first), 0);
    assert.equal(fs.existsSync(path.join(dataDir, 'dialer.lock')), false);

    const again = await serve(env);
    // The signing key was kept in the data directory: the old token still works.
    const read = await json(`${again.url}${PREFIX}/resellers/${created.body.id}`, { headers: auth });
    assert.equal(read.status, 200);
    assert.equal(read.body.name, 'Survivor');
    assert.equal(await stop(again), 0);
  });

  it('creates admin@localhost with a generated password, shown once, when no admin is configured', async () => {
    const dataDir = await dataDirectory(false);
    const s = await serve({ DIALER_DATA_DIR: dataDir, DIALER_ADMIN_EMAIL: '', DIALER_ADMIN_PASSWORD: '' });
    await waitForOutput(s, /Created the first admin: admin@localhost \/ \S+\n/);
    const m = /Created the first admin: admin@localhost \/ (\S+)/.exec(s.stdout);
    assert.ok(m, s.stdout);
    const login = await json(`${s.url}${PREFIX}/login`, { method: 'POST', body: JSON.stringify({ email: 'admin@localhost', password: m[1] }) });
    assert.equal(login.status, 200);
    assert.equal(await stop(s), 0);
  });

  it('says when it runs on one CPU with the garbage collector on helper threads, and not with --single-threaded-gc', async () => {
    const serving = (stdout: string) => stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    // One CPU, as `taskset` (or a cpuset, a container's quota) gives it.
    const oneCpu = ['taskset', '-c', String(os.cpus().length - 1)];
    for (const nodeArgs of [[], ['--single-threaded-gc']]) {
      const dataDir = await dataDirectory(true);
      const s = await serve({ DIALER_DATA_DIR: dataDir }, [...oneCpu, process.execPath, ...nodeArgs]);
      assert.equal((await json(`${s.url}${PREFIX}/health`)).body.status, 'ok');
      // The log is written in order: once the health request's line is out, so is anything logged at start.
      await waitForOutput(s, new RegExp(`${PREFIX}/health`));
      const lines = serving(s.stdout);
      const line = lines.find((l) => l.msg === 'Dialer is serving');
      assert.equal(line.cpus, 1, s.stdout);
      assert.equal(line.gc, nodeArgs.length ? 'single-threaded' : 'parallel');
      assert.equal(line.heap_growth_percent, 100, 'the old generation grows to twice the live heap');
      const advice = lines.find((l) => l.level === 40 && /--single-threaded-gc/.test(l.msg));
      assert.equal(Boolean(advice), nodeArgs.length === 0, s.stdout);
      assert.equal(await stop(s), 0);
    }
  });

  it('delivers the reporting webhook of an aborted lead from the running service, signed', async () => {
    const dataDir = await dataDirectory(true);
    const got: { headers: http.IncomingHttpHeaders; body: string }[] = [];
    const receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => (got.push({ headers: req.headers, body }), res.writeHead(204).end()));
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    try {
      const secret = 'serve-test-webhook-secret';
      const s = await serve({ DIALER_DATA_DIR: dataDir, DIALER_ADMIN_EMAIL: 'boss@example.com', DIALER_ADMIN_PASSWORD: 'boss-password', DIALER_WEBHOOK_SECRET: secret });
      const api = `${s.url}${PREFIX}`;
      const login = await json(`${api}/login`, { method: 'POST', body: JSON.stringify({ email: 'boss@example.com', password: 'boss-password' }) });
      const headers = { authorization: `Bearer ${login.body.access_token}` };
      const post = (p: string, body: unknown) => json(`${api}${p}`, { method: 'POST', headers, body: JSON.stringify(body) });
      const reseller = (await post('/resellers', { name: 'Hooked' })).body.id;
      await post('/templates', { name: 'hooked', reseller_id: reseller, flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] } });
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      const pushed = await post('/leads', { request_id: 'o-1', template: 'hooked', reseller_id: reseller, payload: { customer_mobile_number: '+14155550123' }, reporting_webhook_url: url });
      assert.equal(pushed.status, 201);
      const aborted = await post('/lead/abort', { leads: [{ lead_id: pushed.body.lead_call_tracker_id, cancellation_reason: 'not needed' }] });
      assert.equal(aborted.body.leads[0].status, 'success');
      for (let i = 0; i < 100 && got.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
      assert.equal(got.length, 1);
      assert.ok(verifyWebhookSignature(secret, got[0]!.headers['x-dialer-signature'] as string, got[0]!.body));
      assert.deepEqual(JSON.parse(got[0]!.body), { orderId: 'o-1', leadId: pushed.body.lead_call_tracker_id, outcome: 'aborted', attemptCount: 0, failureReason: 'The lead was aborted: not needed' });
      assert.equal(await stop(s), 0, 'SIGTERM: a clean exit');
    } finally {
      receiver.close();
    }
  });
});

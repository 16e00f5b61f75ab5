/**
 * Login throttling across processes: failed logins are counted in the database, so a second
 * `dialer serve` process (a real child process with its own connections) on the same PostgreSQL
 * database sees the failures this process counted. The sixth wrong password meets 429 with
 * Retry-After there; after the wait a correct login there succeeds, and the success resets the
 * account here too.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, it } from 'node:test';
import { API_PREFIX } from '../../src/app.js';
import type { Db } from '../../src/db/index.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDb } from '../helpers/db.js';
import { freePort } from '../helpers/net.js';
import { buildWorld } from '../helpers/world.js';

/** Long enough that the other process's answer comes within the wait, whatever the machine's load. */
const BACKOFF_SECONDS = 15;
const EMAIL = 'guessed@example.com';
const PASSWORD = 'right-password-1';

let db: Db & { url?: string };
let t: TestApp;
let other: ChildProcess;
let otherUrl: string;
let otherLogs = '';
let dataDir: string;

before(async () => {
  db = await createTestDb('postgres');
  const env = { DIALER_LOGIN_BACKOFF_SECONDS: String(BACKOFF_SECONDS) };
  t = await buildTestApp({ db, env });
  const w = await buildWorld(t);
  const user = await t.admin.post('/users', { email: EMAIL, password: PASSWORD, role: 'reseller', reseller_id: w.r1 });
  assert.equal(user.status, 200, JSON.stringify(user.body));

  const port = await freePort();
  otherUrl = `http://127.0.0.1:${port}${API_PREFIX}`;
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-throttle-'));
  other = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve', '--role', 'api'], {
    cwd: path.resolve(import.meta.dirname, '../..'),
    env: {
      ...process.env,
      DATABASE_URL: db.url!,
      PORT: String(port),
      HOST: '127.0.0.1',
      DIALER_DATA_DIR: dataDir,
      DIALER_JWT_SECRET: 'throttle-secret-throttle-secret-throttle',
      DIALER_LOGIN_BACKOFF_SECONDS: String(BACKOFF_SECONDS),
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  other.stdout!.on('data', (d) => (otherLogs += d));
  other.stderr!.on('data', (d) => (otherLogs += d));
  const deadline = Date.now() + 120_000;
  for (;;) {
    const up = await fetch(`${otherUrl}/health`).then((r) => r.ok, () => false);
    if (up) break;
    assert.ok(other.exitCode === null && Date.now() < deadline, `the other process did not start: ${otherLogs}`);
    await new Promise((r) => setTimeout(r, 200));
  }
});

after(async () => {
  if (other && other.exitCode === null) {
    const exited = new Promise((r) => other.once('exit', r));
    other.kill('SIGTERM');
    await exited;
  }
  await t?.close();
  await db?.close();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

/** POST /login to the other process, over HTTP. */
async function loginThere(password: string): Promise<{ status: number; body: any; retryAfter: string | null; type: string | null }> {
  const res = await fetch(`${otherUrl}/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: EMAIL, password }) });
  return { status: res.status, body: await res.json(), retryAfter: res.headers.get('retry-after'), type: res.headers.get('content-type') };
}

const loginHere = (password: string) => t.anon.post('/login', { email: EMAIL, password });

it('another process on the same database sees the failures counted here: 429 with Retry-After, then a login after the wait', async () => {
  for (let i = 1; i <= 5; i++) {
    const res = await loginHere(`wrong-${i}`);
    assert.equal(res.status, 422, `attempt ${i}: ${JSON.stringify(res.body)}`);
  }
  const sixth = await loginThere('wrong-6');
  assert.equal(sixth.status, 429, `the other process answered ${sixth.status}: ${JSON.stringify(sixth.body)}`);
  assert.equal(sixth.body.code, 'login_throttled');
  assert.match(sixth.type ?? '', /application\/problem\+json/);
  const wait = Number(sixth.retryAfter);
  assert.ok(wait >= 1 && wait <= BACKOFF_SECONDS, `Retry-After ${sixth.retryAfter}`);
  // The right password waits too, in either process.
  assert.equal((await loginThere(PASSWORD)).status, 429);
  assert.equal((await loginHere(PASSWORD)).status, 429);

  // After the wait (Retry-After, asked again until it has passed), the right password gets in there.
  let ok = await loginThere(PASSWORD);
  while (ok.status === 429) {
    await new Promise((r) => setTimeout(r, (Number(ok.retryAfter) + 0.2) * 1000));
    ok = await loginThere(PASSWORD);
  }
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.ok(ok.body.access_token);
  // The success there reset the account here: a wrong password is an ordinary failure again.
  assert.equal((await loginHere('wrong-again')).status, 422);
});

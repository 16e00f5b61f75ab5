/**
 * Login throttling (in the database: shared by every process, kept across a restart) and request
 * limits (@fastify/rate-limit): the sixth wrong password meets 429 with Retry-After, another
 * process on the same database sees the same count, a correct login after the wait succeeds and
 * resets the account; request limits answer 429 problems with their headers, per principal and
 * per address, and never limit provider callbacks.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openPostgres, type Db } from '../../src/db/index.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDb, testBackend } from '../helpers/db.js';
import { buildWorld, issueToken, type World } from '../helpers/world.js';

const BACKOFF_SECONDS = 4;
let db: Db & { url?: string };
let first: TestApp;
let second: TestApp | undefined;
let secondDb: Db | undefined;
let w: World;

before(async () => {
  db = await createTestDb();
  const env = { DIALER_LOGIN_BACKOFF_SECONDS: String(BACKOFF_SECONDS), DIALER_RATE_LIMIT: '40', DIALER_RATE_LIMIT_ANONYMOUS: '1000', DIALER_RATE_LIMIT_LOGIN: '1000' };
  first = await buildTestApp({ db, env });
  w = await buildWorld(first);
  const user = await first.admin.post('/users', { email: 'guessed@example.com', password: 'right-password-1', role: 'reseller', reseller_id: w.r1 });
  assert.equal(user.status, 200, JSON.stringify(user.body));
});
after(async () => {
  await second?.close();
  if (secondDb !== db) await secondDb?.close();
  await first.close();
  await db.close();
});

const login = (t: TestApp, password: string, email = 'guessed@example.com') => t.anon.post('/login', { email, password });

describe('login throttling', () => {
  it('the sixth wrong password meets 429 with Retry-After; another process sees the same count; a correct login after the wait succeeds', async () => {
    // "Another process": a second app on the same database (its own connections on PostgreSQL).
    // It starts first, so that its start (seconds on a loaded machine) does not outlast the
    // backoff; it serves none of the failures, so it holds nothing of them in memory.
    secondDb = testBackend() === 'postgres' ? await openPostgres(db.url!) : db;
    second = await buildTestApp({ db: secondDb, env: { DIALER_LOGIN_BACKOFF_SECONDS: String(BACKOFF_SECONDS) } });
    for (let i = 1; i <= 5; i++) {
      const res = await login(first, `wrong-${i}`);
      assert.equal(res.status, 422, `attempt ${i}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.code, 'invalid_credentials');
    }
    const sixth = await login(first, 'wrong-6');
    assert.equal(sixth.status, 429, JSON.stringify(sixth.body));
    assert.equal(sixth.body.code, 'login_throttled');
    assert.match(String(sixth.headers['content-type']), /application\/problem\+json/);
    const retryAfter = Number(sixth.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= BACKOFF_SECONDS, `Retry-After ${sixth.headers['retry-after']}`);
    // Even the right password waits: the throttle is decided before the password is looked at.
    assert.equal((await login(first, 'right-password-1')).status, 429);

    const elsewhere = await login(second, 'right-password-1');
    assert.equal(elsewhere.status, 429, 'the other process sees the same count');

    await new Promise((r) => setTimeout(r, (Number(elsewhere.headers['retry-after']) + 0.2) * 1000));
    const ok = await login(second, 'right-password-1');
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    // The success reset the account: a wrong password is an ordinary failure again, not a wait.
    assert.equal((await login(first, 'wrong-again')).status, 422);
  });

  it('an unknown email is counted the same way as a wrong password', async () => {
    for (let i = 1; i <= 5; i++) assert.equal((await login(first, 'x', 'nobody@example.com')).status, 422);
    assert.equal((await login(first, 'x', 'NOBODY@example.com')).status, 429);
  });

  it('parallel guesses cannot slip past the count', async () => {
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => login(first, `p-${i}`, 'parallel@example.com')));
    const statuses = answers.map((a) => a.status);
    assert.equal(statuses.filter((s) => s === 422).length, 5, statuses.join(','));
    assert.equal(statuses.filter((s) => s === 429).length, 7);
  });
});

describe('request limits', () => {
  it('limit a principal per minute with headers, and answer a 429 problem with Retry-After', async () => {
    const token = await issueToken(first.admin, { role: 'user', reseller_id: w.r1, merchant_id: w.m1, name: 'busy crm' });
    const crm = first.as(token);
    const other = first.as(await issueToken(first.admin, { role: 'user', reseller_id: w.r1, merchant_id: w.m1, name: 'quiet crm' }));
    let res = await crm.get('/leads');
    assert.equal(res.headers['x-ratelimit-limit'], '40');
    assert.equal(res.headers['x-ratelimit-remaining'], '39');
    assert.ok(Number(res.headers['x-ratelimit-reset']) > 0);
    for (let i = 0; i < 39; i++) res = await crm.get('/leads');
    assert.equal(res.status, 200);
    res = await crm.get('/leads');
    assert.equal(res.status, 429);
    assert.equal(res.body.code, 'rate_limited');
    assert.match(String(res.headers['content-type']), /application\/problem\+json/);
    assert.ok(Number(res.headers['retry-after']) >= 1);
    assert.equal((await other.get('/leads')).status, 200, 'another principal has its own count');
  });

  it('do not limit provider callbacks or the health check', async () => {
    const strict = await buildTestApp({ db, env: { DIALER_RATE_LIMIT_ANONYMOUS: '2' } });
    try {
      for (let i = 0; i < 5; i++) {
        const cb = await strict.anon.post('/provider_a/callback/status', { CallSid: 'CA-none', CallStatus: 'completed' });
        assert.notEqual(cb.status, 429);
        assert.equal(cb.headers['x-ratelimit-limit'], undefined);
        assert.equal((await strict.anon.get('/health')).status, 200);
      }
      const docs = [await strict.anon.get('/openapi.json'), await strict.anon.get('/openapi.json'), await strict.anon.get('/openapi.json')];
      assert.deepEqual(docs.map((d) => d.status), [200, 200, 429], 'anonymous requests are limited per address');
    } finally {
      await strict.close();
    }
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { ADMIN_EMAIL, ADMIN_PASSWORD, buildTestApp, type TestApp } from '../helpers/app.js';
import { buildWorld, issueToken, type World } from '../helpers/world.js';

let t: TestApp;
let w: World;
before(async () => {
  t = await buildTestApp();
  w = await buildWorld(t);
});
after(() => t.close());

describe('POST /login', () => {
  it('returns a bearer JWT and the user', async () => {
    const res = await t.anon.post('/login', { email: ADMIN_EMAIL, password: ADMIN_PASSWORD });
    assert.equal(res.status, 200);
    assert.equal(res.body.token_type, 'bearer');
    assert.match(res.body.access_token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
    assert.equal(res.body.expires_in, 3600);
    assert.deepEqual(Object.keys(res.body.user).sort(), ['email', 'id', 'merchant_id', 'reseller_id', 'role']);
    assert.equal(res.body.user.role, 'admin');
    assert.equal(res.body.user.email, ADMIN_EMAIL);
  });

  it('is case-insensitive on the email', async () => {
    const res = await t.anon.post('/login', { email: ADMIN_EMAIL.toUpperCase(), password: ADMIN_PASSWORD });
    assert.equal(res.status, 200);
  });

  for (const [name, body] of [
    ['wrong password', { email: ADMIN_EMAIL, password: 'nope-nope' }],
    ['unknown email', { email: 'ghost@example.com', password: ADMIN_PASSWORD }],
    ['missing password', { email: ADMIN_EMAIL }],
    ['missing email', { password: ADMIN_PASSWORD }],
    ['malformed email', { email: 'not-an-email', password: ADMIN_PASSWORD }],
    ['wrong types', { email: 1, password: true }],
  ] as const) {
    it(`answers 422 for ${name}`, async () => {
      const res = await t.anon.post('/login', body);
      assert.equal(res.status, 422);
      assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
      assert.equal(res.body.status, 422);
      assert.ok(res.body.detail.length > 0);
    });
  }

  it('answers 400 for malformed JSON, never 500', async () => {
    const res = await t.anon.raw({ method: 'POST', path: '/login', payload: '{"email":', headers: { 'content-type': 'application/json' } });
    assert.equal(res.status, 400);
    assert.equal(res.body.status, 400);
  });

  it('a user created through the API can log in with its scope', async () => {
    const created = await t.admin.post('/users', { email: 'rs1@example.com', password: 'password-rs1', role: 'reseller', reseller_id: w.r1 });
    assert.equal(created.status, 200);
    const res = await t.anon.post('/login', { email: 'rs1@example.com', password: 'password-rs1' });
    assert.equal(res.status, 200);
    assert.equal(res.body.user.role, 'reseller');
    assert.equal(res.body.user.reseller_id, w.r1);
    const row = await t.db.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE email = $1', ['rs1@example.com']);
    assert.match(row.rows[0]!.password_hash, /^\$argon2id\$/);
  });
});

describe('bearer tokens (401)', () => {
  it('401 without a token', async () => {
    const res = await t.anon.get('/merchants');
    assert.equal(res.status, 401);
    assert.equal(res.body.status, 401);
  });
  it('401 for a malformed header or token', async () => {
    assert.equal((await t.anon.raw({ method: 'GET', path: '/resellers', headers: { authorization: 'Token abc' } })).status, 401);
    assert.equal((await t.as('not.a.jwt').get('/resellers')).status, 401);
    assert.equal((await t.as('s2s_unknown').get('/resellers')).status, 401);
  });
  it('401 for an expired JWT and for one signed with another key', async () => {
    const key = new TextEncoder().encode(t.config.jwtSecret!);
    const me = (await t.anon.post('/login', { email: ADMIN_EMAIL, password: ADMIN_PASSWORD })).body.user.id;
    const expired = await new SignJWT({ typ: 'access' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(me)
      .setIssuer('dialer')
      .setIssuedAt(Math.floor(Date.now() / 1000) - 7200)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 3600)
      .sign(key);
    const res = await t.as(expired).get('/resellers');
    assert.equal(res.status, 401);
    assert.match(res.body.detail, /expired/i);
    const forged = await new SignJWT({ typ: 'access' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(me)
      .setIssuer('dialer')
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('another-secret-another-secret-another'));
    assert.equal((await t.as(forged).get('/resellers')).status, 401);
  });
});

describe('POST /s2s-token', () => {
  it('issues s2s_ tokens that carry their scope and are stored only as hashes', async () => {
    const res = await t.admin.post('/s2s-token', { name: 'crm', role: 'merchant', reseller_id: w.r1, merchant_id: w.m1 });
    assert.equal(res.status, 200);
    assert.match(res.body.token, /^s2s_/);
    assert.equal(res.body.name, 'crm');
    assert.equal(res.body.role, 'merchant');
    assert.equal(res.body.reseller_id, w.r1);
    assert.equal(res.body.merchant_id, w.m1);
    assert.ok(!Number.isNaN(Date.parse(res.body.created_at)));
    const stored = await t.db.query('SELECT * FROM s2s_tokens WHERE id = $1', [res.body.id]);
    const text = JSON.stringify(stored.rows);
    assert.ok(!text.includes(res.body.token), 'the secret is not stored');
    const merchants = await t.as(res.body.token).get('/merchants');
    assert.equal(merchants.status, 200);
    assert.deepEqual(merchants.body.data.map((m: { id: string }) => m.id), [w.m1]);
  });

  it('422 when merchant_id is missing for merchant and user roles', async () => {
    for (const role of ['merchant', 'user']) {
      const res = await t.admin.post('/s2s-token', { name: 'x', role, reseller_id: w.r1 });
      assert.equal(res.status, 422, role);
      assert.match(res.body.detail, /merchant_id/);
    }
  });

  it('422 for an unknown reseller_id, missing fields or bad types', async () => {
    assert.equal((await t.admin.post('/s2s-token', { name: 'x', role: 'reseller', reseller_id: 'nope' })).status, 422);
    assert.equal((await t.admin.post('/s2s-token', { role: 'reseller', reseller_id: w.r1 })).status, 422);
    assert.equal((await t.admin.post('/s2s-token', { name: 'x', role: 'reseller', reseller_id: 5 })).status, 422);
  });

  it('403 when the role cannot be issued or the scope is not the caller\'s', async () => {
    assert.equal((await t.admin.post('/s2s-token', { name: 'x', role: 'admin', reseller_id: w.r1 })).status, 403);
    // A reseller cannot issue for another reseller; a merchant not for another merchant or for its reseller.
    assert.equal((await w.reseller1.post('/s2s-token', { name: 'x', role: 'reseller', reseller_id: w.r2 })).status, 403);
    assert.equal((await w.reseller1.post('/s2s-token', { name: 'x', role: 'merchant', reseller_id: w.r1, merchant_id: w.m1 })).status, 200);
    assert.equal((await w.merchant1.post('/s2s-token', { name: 'x', role: 'merchant', reseller_id: w.r1, merchant_id: w.m1b })).status, 403);
    assert.equal((await w.merchant1.post('/s2s-token', { name: 'x', role: 'reseller', reseller_id: w.r1 })).status, 403);
    assert.equal((await w.merchant1.post('/s2s-token', { name: 'x', role: 'user', reseller_id: w.r1, merchant_id: w.m1 })).status, 200);
    // A user may not issue tokens at all.
    assert.equal((await w.user1.post('/s2s-token', { name: 'x', role: 'user', reseller_id: w.r1, merchant_id: w.m1 })).status, 403);
  });

  it('lists tokens in scope without secrets, and revoking one stops it at once', async () => {
    const token = await issueToken(t.admin, { role: 'reseller', reseller_id: w.r2, name: 'to revoke' });
    assert.equal((await t.as(token).get('/merchants')).status, 200);
    const list1 = await w.reseller1.get('/s2s-token');
    assert.equal(list1.status, 200);
    assert.ok(list1.body.data.every((x: { reseller_id: string }) => x.reseller_id === w.r1));
    assert.ok(!JSON.stringify(list1.body).includes('s2s_'.concat('')) || list1.body.data.every((x: Record<string, unknown>) => !('token' in x)));
    const all = await t.admin.get('/s2s-token?page_size=1000');
    const record = all.body.data.find((x: { name: string }) => x.name === 'to revoke');
    assert.ok(record);
    assert.equal(record.revoked_at, null);
    assert.ok(record.last_used_at, 'last use is recorded');
    // Another reseller cannot see or revoke it.
    assert.equal((await w.reseller1.delete(`/s2s-token/${record.id}`)).status, 404);
    const revoked = await t.admin.delete(`/s2s-token/${record.id}`);
    assert.equal(revoked.status, 200);
    assert.ok(revoked.body.revoked_at);
    const after = await t.as(token).get('/merchants');
    assert.equal(after.status, 401);
    assert.match(after.body.detail, /revoked/i);
  });
});

describe('requests in flight together', () => {
  // Requests arriving together share the lookups of their tokens (one query for all of them):
  // each must still be answered as its own caller, and a change must apply to the next request.
  it('each request is answered in its own scope, whoever else is asking at the same moment', async () => {
    const login = async (email: string, password: string, reseller_id: string) => {
      assert.equal((await t.admin.post('/users', { email, password, role: 'reseller', reseller_id })).status, 200);
      return t.as((await t.anon.post('/login', { email, password })).body.access_token as string);
    };
    const jwt1 = await login('together-1@example.com', 'password-together-1', w.r1);
    const jwt2 = await login('together-2@example.com', 'password-together-2', w.r2);
    const callers = [
      { client: w.reseller1, resellers: [w.r1] },
      { client: w.reseller2, resellers: [w.r2] },
      { client: jwt1, resellers: [w.r1] },
      { client: jwt2, resellers: [w.r2] },
      { client: w.merchant2, resellers: [w.r2] },
    ];
    const asked = Array.from({ length: 60 }, (_, i) => callers[i % callers.length]!);
    const answers = await Promise.all(asked.map((c) => c.client.get('/merchants?page_size=1000')));
    answers.forEach((res, i) => {
      assert.equal(res.status, 200);
      const seen = [...new Set(res.body.data.map((m: { reseller_id: string }) => m.reseller_id))];
      assert.deepEqual(seen, asked[i]!.resellers, `request ${i} saw only its own reseller`);
    });
  });

  it('a deleted user\'s token is refused at once, though its signature was checked before', async () => {
    const created = await t.admin.post('/users', { email: 'gone-soon@example.com', password: 'password-gone-soon', role: 'reseller', reseller_id: w.r1 });
    const jwt = t.as((await t.anon.post('/login', { email: 'gone-soon@example.com', password: 'password-gone-soon' })).body.access_token as string);
    assert.equal((await jwt.get('/merchants')).status, 200);
    assert.equal((await t.admin.delete(`/users/${created.body.id}`)).status, 200);
    const after = await jwt.get('/merchants');
    assert.equal(after.status, 401);
    assert.match(after.body.detail, /no longer exists/);
  });
});

describe('permission matrix (403)', () => {
  it('refuses roles that lack the permission', async () => {
    assert.equal((await w.reseller1.post('/resellers', { name: 'Nope' })).status, 403);
    assert.equal((await w.merchant1.get('/resellers')).status, 403);
    assert.equal((await w.user1.get('/merchants')).status, 403);
    assert.equal((await w.user1.get('/s2s-token')).status, 403);
    assert.equal((await w.merchant1.get('/users')).status, 403);
  });
});

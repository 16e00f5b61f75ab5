import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { buildWorld, type World } from '../helpers/world.js';

let t: TestApp;
let w: World;
before(async () => {
  t = await buildTestApp();
  w = await buildWorld(t);
});
after(() => t.close());

describe('resellers', () => {
  it('admin creates, lists and reads; names are unique case-insensitively', async () => {
    const created = await t.admin.post('/resellers', { name: 'Gamma' });
    assert.equal(created.status, 200);
    assert.deepEqual(Object.keys(created.body).sort(), ['created_at', 'id', 'name', 'updated_at']);
    const dup = await t.admin.post('/resellers', { name: 'gamma' });
    assert.equal(dup.status, 409);
    assert.equal(dup.body.code, 'duplicate_reseller');
    const list = await t.admin.get('/resellers');
    assert.equal(list.status, 200);
    assert.equal(list.body.total, 3);
    assert.equal((await t.admin.get(`/resellers/${created.body.id}`)).body.name, 'Gamma');
  });

  it('a reseller sees only itself; another reseller id answers 404', async () => {
    const list = await w.reseller1.get('/resellers');
    assert.deepEqual(list.body.data.map((r: { id: string }) => r.id), [w.r1]);
    assert.equal((await w.reseller1.get(`/resellers/${w.r2}`)).status, 404);
    assert.equal((await w.reseller1.get(`/resellers/${w.r1}`)).status, 200);
  });

  it('400 for a missing, blank or mistyped name and unknown fields', async () => {
    for (const body of [{}, { name: '' }, { name: '   ' }, { name: 7 }, { name: 'X', extra: 1 }]) {
      const res = await t.admin.post('/resellers', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.ok(res.body.errors?.length > 0);
    }
  });

  it('paginates', async () => {
    const page = await t.admin.get('/resellers?page=2&page_size=1');
    assert.equal(page.status, 200);
    assert.equal(page.body.page, 2);
    assert.equal(page.body.page_size, 1);
    assert.equal(page.body.data.length, 1);
    assert.equal((await t.admin.get('/resellers?page_size=1001')).status, 400);
    assert.equal((await t.admin.get('/resellers?page=0')).status, 400);
    assert.equal((await t.admin.get('/resellers?page=abc')).status, 400);
  });
});

describe('merchants', () => {
  it('creates with name, reseller_id, contact_email and reads it back', async () => {
    const res = await w.reseller1.post('/merchants', { name: 'Shop', reseller_id: w.r1, contact_email: 'shop@example.com' });
    assert.equal(res.status, 200);
    assert.equal(res.body.reseller_id, w.r1);
    assert.equal(res.body.contact_email, 'shop@example.com');
    const read = await w.reseller1.get(`/merchants/${res.body.id}`);
    assert.deepEqual(read.body, res.body);
  });

  it('400 for missing fields, a bad email or an unknown reseller', async () => {
    const missing = await t.admin.post('/merchants', { name: 'NoMail', reseller_id: w.r1 });
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body.errors, [{ path: '/contact_email', message: 'is required' }]);
    assert.equal((await t.admin.post('/merchants', { name: 'BadMail', reseller_id: w.r1, contact_email: 'nope' })).status, 400);
    const unknown = await t.admin.post('/merchants', { name: 'Lost', reseller_id: 'no-such', contact_email: 'a@example.com' });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.errors[0].path, '/reseller_id');
  });

  it('409 for a duplicate name within a reseller; the same name in another reseller is fine', async () => {
    const dup = await t.admin.post('/merchants', { name: 'merchantone', reseller_id: w.r1, contact_email: 'x@example.com' });
    assert.equal(dup.status, 409);
    const other = await t.admin.post('/merchants', { name: 'MerchantOne', reseller_id: w.r2, contact_email: 'x@example.com' });
    assert.equal(other.status, 200);
  });

  it('scoping: lists and reads are filtered, out-of-scope ids answer 404, creating elsewhere 403', async () => {
    const r1 = await w.reseller1.get('/merchants?page_size=100');
    assert.ok(r1.body.data.every((m: { reseller_id: string }) => m.reseller_id === w.r1));
    assert.ok(r1.body.data.some((m: { id: string }) => m.id === w.m1));
    assert.equal((await w.reseller2.get(`/merchants/${w.m1}`)).status, 404);
    assert.equal((await w.merchant1.get(`/merchants/${w.m1b}`)).status, 404);
    assert.deepEqual((await w.merchant1.get('/merchants')).body.data.map((m: { id: string }) => m.id), [w.m1]);
    const elsewhere = await w.reseller2.post('/merchants', { name: 'Sneaky', reseller_id: w.r1, contact_email: 's@example.com' });
    assert.equal(elsewhere.status, 403);
    assert.equal((await w.merchant1.post('/merchants', { name: 'Self', reseller_id: w.r1, contact_email: 's@example.com' })).status, 403);
    // reseller_id filter narrows, never widens.
    const filtered = await w.reseller1.get(`/merchants?reseller_id=${w.r2}`);
    assert.equal(filtered.body.total, 0);
  });

  it('PUT replaces name and contact_email; reseller_id cannot move; 404 out of scope', async () => {
    const created = (await t.admin.post('/merchants', { name: 'Before', reseller_id: w.r1, contact_email: 'b@example.com' })).body;
    const updated = await w.reseller1.put(`/merchants/${created.id}`, { ...created, name: 'After', contact_email: 'a@example.com' });
    assert.equal(updated.status, 200);
    assert.equal(updated.body.name, 'After');
    assert.equal((await t.admin.get(`/merchants/${created.id}`)).body.contact_email, 'a@example.com');
    const moved = await t.admin.put(`/merchants/${created.id}`, { name: 'After', contact_email: 'a@example.com', reseller_id: w.r2 });
    assert.equal(moved.status, 400);
    assert.equal((await t.admin.put(`/merchants/${created.id}`, { id: 'other', name: 'After', contact_email: 'a@example.com' })).status, 400);
    assert.equal((await w.reseller2.put(`/merchants/${created.id}`, { name: 'Hijack', contact_email: 'h@example.com' })).status, 404);
    assert.equal((await t.admin.put('/merchants/unknown', { name: 'X', contact_email: 'x@example.com' })).status, 404);
    assert.equal((await t.admin.put(`/merchants/${created.id}`, { name: 'MerchantOneB', contact_email: 'x@example.com' })).status, 409);
  });

  it('DELETE removes an unused merchant and refuses one still referenced (409)', async () => {
    const created = (await t.admin.post('/merchants', { name: 'Temp', reseller_id: w.r1, contact_email: 't@example.com' })).body;
    assert.equal((await w.reseller2.delete(`/merchants/${created.id}`)).status, 404);
    const del = await w.reseller1.delete(`/merchants/${created.id}`);
    assert.equal(del.status, 200);
    assert.deepEqual(del.body, { id: created.id, deleted: true });
    assert.equal((await t.admin.get(`/merchants/${created.id}`)).status, 404);
    // m1 has tokens issued for it: still referenced.
    const inUse = await t.admin.delete(`/merchants/${w.m1}`);
    assert.equal(inUse.status, 409);
    assert.equal((await t.admin.get(`/merchants/${w.m1}`)).status, 200);
  });
});

describe('users', () => {
  it('a reseller creates users inside its reseller only', async () => {
    const ok = await w.reseller1.post('/users', { email: 'm1user@example.com', password: 'password-1', role: 'user', reseller_id: w.r1, merchant_id: w.m1 });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.merchant_id, w.m1);
    assert.equal('password_hash' in ok.body, false);
    assert.equal((await w.reseller1.post('/users', { email: 'x@example.com', password: 'password-1', role: 'reseller', reseller_id: w.r2 })).status, 403);
    assert.equal((await w.reseller1.post('/users', { email: 'y@example.com', password: 'password-1', role: 'admin' })).status, 403);
    const list = await w.reseller1.get('/users');
    assert.ok(list.body.data.every((u: { reseller_id: string }) => u.reseller_id === w.r1));
  });

  it('400 for a merchant user without merchant_id or with another reseller\'s merchant; 409 duplicate email', async () => {
    assert.equal((await t.admin.post('/users', { email: 'z@example.com', password: 'password-1', role: 'merchant', reseller_id: w.r1 })).status, 400);
    assert.equal((await t.admin.post('/users', { email: 'z@example.com', password: 'password-1', role: 'merchant', reseller_id: w.r1, merchant_id: w.m2 })).status, 400);
    assert.equal((await t.admin.post('/users', { email: 'z@example.com', password: 'short', role: 'admin' })).status, 400);
    assert.equal((await t.admin.post('/users', { email: 'M1USER@example.com', password: 'password-1', role: 'admin' })).status, 409);
  });

  it('deletes users in scope; refuses to delete oneself or the last admin', async () => {
    const u = (await t.admin.post('/users', { email: 'gone@example.com', password: 'password-1', role: 'reseller', reseller_id: w.r1 })).body;
    assert.equal((await w.reseller2.delete(`/users/${u.id}`)).status, 404);
    assert.equal((await w.reseller1.delete(`/users/${u.id}`)).status, 200);
    assert.equal((await t.anon.post('/login', { email: 'gone@example.com', password: 'password-1' })).status, 422);
    const me = (await t.admin.get('/users?page_size=1000')).body.data.find((x: { role: string }) => x.role === 'admin');
    const self = await t.admin.delete(`/users/${me.id}`);
    assert.equal(self.status, 409);
  });

  it('a deleted user\'s token stops working', async () => {
    await t.admin.post('/users', { email: 'short-lived@example.com', password: 'password-1', role: 'reseller', reseller_id: w.r2 });
    const login = await t.anon.post('/login', { email: 'short-lived@example.com', password: 'password-1' });
    const token = login.body.access_token;
    assert.equal((await t.as(token).get('/merchants')).status, 200);
    await t.admin.delete(`/users/${login.body.user.id}`);
    assert.equal((await t.as(token).get('/merchants')).status, 401);
  });
});

describe('editing users', () => {
  it('an admin changes a user\'s email and role; the change takes effect at once and is audited', async () => {
    const u = (await t.admin.post('/users', { email: 'mover@example.com', password: 'password-1', role: 'merchant', reseller_id: w.r1, merchant_id: w.m1 })).body;
    const token = (await t.anon.post('/login', { email: 'mover@example.com', password: 'password-1' })).body.access_token;
    assert.equal((await t.as(token).get('/users')).status, 403, 'a merchant may not read users');
    const changed = await t.admin.put(`/users/${u.id}`, { email: 'Mover@example.com', role: 'reseller', reseller_id: w.r1 });
    assert.equal(changed.status, 200, JSON.stringify(changed.body));
    assert.equal(changed.body.role, 'reseller');
    assert.equal(changed.body.merchant_id, null, 'a reseller belongs to no merchant');
    assert.equal(changed.body.email, 'Mover@example.com');
    assert.equal((await t.as(token).get('/users')).status, 200, 'the same session has the new role');
    // The whole record read back (as the dashboard sends it) is accepted as is.
    assert.equal((await t.admin.put(`/users/${u.id}`, changed.body)).status, 200);
    const audit = (await t.admin.get(`/audit?resource=users&resource_id=${u.id}&action=update`)).body;
    assert.ok(audit.total >= 2);
    assert.equal(audit.data[0].route, '/users/:id');
    assert.equal(audit.data[0].status, 200);
  });

  it('refuses what the caller may not do: another reseller\'s user (404), the admin role (403), one\'s own role or the last admin\'s (409)', async () => {
    const u = (await t.admin.post('/users', { email: 'r1-user@example.com', password: 'password-1', role: 'user', reseller_id: w.r1, merchant_id: w.m1 })).body;
    assert.equal((await w.reseller2.put(`/users/${u.id}`, { email: u.email, role: 'merchant', reseller_id: w.r1, merchant_id: w.m1 })).status, 404);
    assert.equal((await w.reseller1.put(`/users/${u.id}`, { email: u.email, role: 'admin' })).status, 403);
    assert.equal((await w.reseller1.put(`/users/${u.id}`, { email: u.email, role: 'reseller', reseller_id: w.r2 })).status, 403, 'not into another reseller');
    const ok = await w.reseller1.put(`/users/${u.id}`, { email: u.email, role: 'merchant', reseller_id: w.r1, merchant_id: w.m1b });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(ok.body.merchant_id, w.m1b);
    // A reseller user manages the users of its reseller, but not admins (it does not see them).
    const admins = (await t.admin.get('/users?page_size=1000')).body.data.filter((x: { role: string }) => x.role === 'admin');
    assert.equal((await w.reseller1.put(`/users/${admins[0].id}`, { email: 'x@example.com', role: 'admin' })).status, 404);
    // The only admin may not demote itself (its own role), nor may another admin demote the last one.
    const self = await t.admin.put(`/users/${admins[0].id}`, { email: admins[0].email, role: 'reseller', reseller_id: w.r1 });
    assert.equal(self.status, 409);
    assert.equal(self.body.code, 'self_role');
    const second = (await t.admin.post('/users', { email: 'second-admin@example.com', password: 'password-1', role: 'admin' })).body;
    const secondToken = (await t.anon.post('/login', { email: 'second-admin@example.com', password: 'password-1' })).body.access_token;
    assert.equal((await t.as(secondToken).put(`/users/${admins[0].id}`, { email: admins[0].email, role: 'reseller', reseller_id: w.r1 })).status, 200, 'two admins: one may demote the other');
    const last = await t.admin.put(`/users/${second.id}`, { email: second.email, role: 'reseller', reseller_id: w.r1 });
    assert.equal(last.status, 404, 'the demoted admin is a reseller now and does not see admins');
    await t.as(secondToken).put(`/users/${admins[0].id}`, { email: admins[0].email, role: 'admin' });
    assert.equal((await t.admin.delete(`/users/${second.id}`)).status, 200);
    const lastAdmin = await t.as(secondToken).get('/me');
    assert.equal(lastAdmin.status, 401, 'a deleted user\'s session ends');
  });

  it('400 for a bad body: a missing merchant, an unknown field, a body id that is not the path\'s, a duplicate email 409', async () => {
    const u = (await t.admin.post('/users', { email: 'shape@example.com', password: 'password-1', role: 'merchant', reseller_id: w.r1, merchant_id: w.m1 })).body;
    const noMerchant = await t.admin.put(`/users/${u.id}`, { email: u.email, role: 'user', reseller_id: w.r1 });
    assert.equal(noMerchant.status, 400);
    assert.deepEqual(noMerchant.body.errors, [{ path: '/merchant_id', message: 'is required' }]);
    assert.equal((await t.admin.put(`/users/${u.id}`, { email: u.email, role: 'user', reseller_id: w.r1, merchant_id: w.m1, password: 'sneaky-1' })).status, 400);
    assert.equal((await t.admin.put(`/users/${u.id}`, { id: 'other', email: u.email, role: 'merchant', reseller_id: w.r1, merchant_id: w.m1 })).status, 400);
    assert.equal((await t.admin.put('/users/no-such-user', { email: 'n@example.com', role: 'admin' })).status, 404);
    const dup = await t.admin.put(`/users/${u.id}`, { email: 'M1USER@example.com', role: 'merchant', reseller_id: w.r1, merchant_id: w.m1 });
    assert.equal(dup.status, 409);
    assert.equal(dup.body.code, 'duplicate_user');
  });

  it('resets a password: the old one and the sessions opened with it stop working; audited without the password', async () => {
    const u = (await t.admin.post('/users', { email: 'forgetful@example.com', password: 'password-1', role: 'merchant', reseller_id: w.r1, merchant_id: w.m1 })).body;
    // A session opened a minute ago (a token's issue time is kept in whole seconds: one opened in
    // the second of the reset survives it).
    const old = await new SignJWT({ typ: 'access' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(u.id)
      .setIssuer('dialer')
      .setIssuedAt(Math.floor(Date.now() / 1000) - 60)
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(t.config.jwtSecret));
    assert.equal((await t.as(old).get('/me')).status, 200);
    assert.equal((await w.reseller2.post(`/users/${u.id}/password`, { password: 'new-password-2' })).status, 404);
    assert.equal((await w.merchant1.post(`/users/${u.id}/password`, { password: 'new-password-2' })).status, 403);
    assert.equal((await t.admin.post(`/users/${u.id}/password`, { password: 'short' })).status, 400);
    const reset = await w.reseller1.post(`/users/${u.id}/password`, { password: 'new-password-2' });
    assert.equal(reset.status, 200, JSON.stringify(reset.body));
    assert.equal(reset.body.id, u.id);
    assert.equal((await t.anon.post('/login', { email: 'forgetful@example.com', password: 'password-1' })).status, 422);
    const ended = await t.as(old).get('/me');
    assert.equal(ended.status, 401);
    assert.match(ended.body.detail, /password .* was reset/);
    const fresh = (await t.anon.post('/login', { email: 'forgetful@example.com', password: 'new-password-2' })).body.access_token;
    assert.equal((await t.as(fresh).get('/me')).status, 200);
    // The refused attempts are in the trail as well, each with its answer.
    const entries = (await t.admin.get(`/audit?action=password.reset&resource_id=${u.id}`)).body.data;
    assert.deepEqual(entries.map((e: { status: number }) => e.status).sort(), [200, 400, 403, 404]);
    assert.ok(entries.every((e: { resource: string }) => e.resource === 'users'));
    assert.doesNotMatch(JSON.stringify(entries), /new-password-2|password-1/);
  });
});

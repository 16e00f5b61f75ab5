/**
 * The audit trail: a push by an s2s token is recorded under the token's name, with its role, scope,
 * route, resource id and address; logins (success and failure), token issue and revoke, aborts and
 * deletes are recorded; no secret or password is ever stored; resellers read only their own
 * principals' entries and cannot read another reseller's; merchants cannot read the trail;
 * filters and paging work, and retention deletes old entries.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AuditService } from '../../src/auth/index.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { buildWorld, issueToken, type World } from '../helpers/world.js';

let t: TestApp;
let w: World;

before(async () => {
  t = await buildTestApp();
  w = await buildWorld(t);
  const tpl = await w.reseller1.post('/templates', { name: 'audited', reseller_id: w.r1, flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] } });
  assert.equal(tpl.status, 200);
});
after(() => t.close());

describe('audit trail', () => {
  it('records a push by an s2s token under its name, and a reseller cannot read another reseller\'s entries', async () => {
    const token = await issueToken(t.admin, { role: 'merchant', reseller_id: w.r1, merchant_id: w.m1, name: 'Acme CRM integration' });
    const crm = t.as(token);
    const pushed = await crm.post('/leads', { request_id: 'audit-1', template: 'audited', reseller_id: w.r1, payload: { customer_mobile_number: '+14155550199' } });
    assert.equal(pushed.status, 201, JSON.stringify(pushed.body));
    const id = pushed.body.lead_call_tracker_id;

    const mine = await w.reseller1.get(`/audit?resource_id=${id}`);
    assert.equal(mine.status, 200, JSON.stringify(mine.body));
    assert.equal(mine.body.total, 1);
    const entry = mine.body.data[0];
    assert.equal(entry.principal_kind, 's2s');
    assert.equal(entry.principal_name, 'Acme CRM integration');
    assert.equal(entry.role, 'merchant');
    assert.equal(entry.reseller_id, w.r1);
    assert.equal(entry.merchant_id, w.m1);
    assert.equal(entry.action, 'create');
    assert.equal(entry.method, 'POST');
    assert.equal(entry.route, '/leads');
    assert.equal(entry.resource, 'leads');
    assert.equal(entry.status, 201);
    assert.equal(entry.client_ip, '127.0.0.1');
    assert.ok(Date.parse(entry.at) > Date.now() - 60_000);

    const theirs = await w.reseller2.get(`/audit?resource_id=${id}`);
    assert.equal(theirs.status, 200);
    assert.equal(theirs.body.total, 0, 'reseller two sees nothing of reseller one');
    const all = await w.reseller2.get('/audit?page_size=1000');
    assert.ok(all.body.data.every((e: { reseller_id: string }) => e.reseller_id === w.r2), 'only its own principals');
    assert.equal((await w.merchant1.get('/audit')).status, 403);
    assert.equal((await w.user1.get('/audit')).status, 403);
    assert.equal((await t.admin.get(`/audit?resource_id=${id}`)).body.total, 1, 'the admin sees everything');
  });

  it('records logins, token issue and revoke, aborts, deletes and refused writes, never a secret', async () => {
    const user = await t.admin.post('/users', { email: 'audited@example.com', password: 'audited-password-1', role: 'reseller', reseller_id: w.r1 });
    assert.equal(user.status, 200);
    assert.equal((await t.anon.post('/login', { email: 'audited@example.com', password: 'not-the-password' })).status, 422);
    const login = await t.anon.post('/login', { email: 'audited@example.com', password: 'audited-password-1' });
    assert.equal(login.status, 200);
    const me = t.as(login.body.access_token);
    const issued = await me.post('/s2s-token', { name: 'short-lived', role: 'user', reseller_id: w.r1, merchant_id: w.m1 });
    assert.equal(issued.status, 200);
    assert.equal((await me.delete(`/s2s-token/${issued.body.id}`)).status, 200);
    const pushed = await me.post('/leads', { request_id: 'audit-2', template: 'audited', reseller_id: w.r1, payload: { customer_mobile_number: '+14155550198' } });
    const aborted = await me.post('/lead/abort', { leads: [{ lead_id: pushed.body.lead_call_tracker_id, cancellation_reason: 'test' }] });
    assert.equal(aborted.status, 200);
    assert.equal((await me.post('/numbers', { phone_number: '+12125550000', provider: 'PROVIDER_A' })).status, 403);

    const trail = await t.admin.get('/audit?principal_name=audited@example.com&page_size=100');
    const actions = (trail.body.data as Array<{ action: string; status: number; resource_id: string | null; details: unknown }>).map((e) => `${e.action} ${e.status}`).reverse();
    assert.deepEqual(actions, ['login.failure 422', 'login.success 200', 'token.issue 200', 'token.revoke 200', 'create 201', 'abort 200', 'create 403']);
    const abort = trail.body.data.find((e: { action: string }) => e.action === 'abort');
    assert.deepEqual(abort.details, { lead_ids: [pushed.body.lead_call_tracker_id] });
    const revoke = trail.body.data.find((e: { action: string }) => e.action === 'token.revoke');
    assert.equal(revoke.resource_id, issued.body.id);

    const stored = JSON.stringify((await t.db.query('SELECT * FROM audit_log')).rows);
    for (const secret of ['audited-password-1', 'not-the-password', issued.body.token, login.body.access_token]) {
      assert.ok(!stored.includes(secret), 'no secret in the audit log');
    }
  });

  it('records refused writes carrying text the database cannot hold (NUL, lone surrogates), with a replacement character', async () => {
    const revoke = await w.reseller1.raw({ method: 'DELETE', path: '/agent/voice/dialer/s2s-token/a%00b' });
    assert.equal(revoke.status, 400);
    const abort = await w.reseller1.post('/lead/abort', { leads: [{ lead_id: 'x\ud800y', cancellation_reason: 'test' }] });
    assert.equal(abort.status, 400);
    const login = await t.anon.post('/login', { email: 'nul\u0000@example.com', password: 'whatever-1' });
    assert.equal(login.status, 400);
    // Entries written together share one INSERT: one unstorable entry must not lose the others.
    const together = await Promise.all([
      w.reseller1.post('/lead/abort', { leads: [{ lead_id: '\udfffz', cancellation_reason: 'test' }] }),
      w.reseller1.post('/merchants', { name: 'Beside', reseller_id: w.r1, contact_email: 'beside@example.com' }),
    ]);
    assert.deepEqual(together.map((r) => r.status), [400, 200]);

    const entries = (await t.admin.get('/audit?page_size=100')).body.data as Array<{ action: string; status: number; resource_id: string | null; principal_name: string | null; details: { lead_ids?: string[] } | null }>;
    assert.ok(entries.some((e) => e.action === 'token.revoke' && e.status === 400 && e.resource_id === 'a\ufffdb'), 'the revoke with a NUL in its id');
    assert.ok(entries.some((e) => e.action === 'abort' && e.status === 400 && e.details?.lead_ids?.[0] === 'x\ufffdy'), 'the abort with a lone surrogate');
    assert.ok(entries.some((e) => e.action === 'login.failure' && e.status === 400 && e.principal_name === 'nul\ufffd@example.com'), 'the login with a NUL');
    assert.ok(entries.some((e) => e.action === 'abort' && e.status === 400 && e.details?.lead_ids?.[0] === '\ufffdz'), 'the abort beside the write');
    assert.ok(entries.some((e) => e.action === 'create' && e.status === 200 && e.resource_id === together[1]!.body.id), 'the write beside it');
  });

  it('filters by action, resource and time, and pages', async () => {
    const logins = await t.admin.get('/audit?action=login.success');
    assert.ok(logins.body.total >= 1);
    assert.ok(logins.body.data.every((e: { action: string }) => e.action === 'login.success'));
    const future = await t.admin.get(`/audit?from=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`);
    assert.equal(future.body.total, 0);
    const paged = await t.admin.get('/audit?page=2&page_size=2');
    assert.equal(paged.body.page, 2);
    assert.equal(paged.body.page_size, 2);
    assert.equal(paged.body.data.length, 2);
    assert.equal((await t.admin.get('/audit?from=yesterday')).status, 400);
  });

  it('deletes entries past their retention', async () => {
    const before = (await t.admin.get('/audit')).body.total;
    await t.db.query(`UPDATE audit_log SET at = now() - interval '400 days' WHERE id IN (SELECT id FROM audit_log ORDER BY id LIMIT 3)`);
    assert.equal(await new AuditService(t.db).prune(365), 3);
    assert.equal((await t.admin.get('/audit')).body.total, before - 3, 'three gone (reads are not audited)');
  });
});

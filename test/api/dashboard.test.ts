/**
 * The dashboard as served by Dialer, and the API it reads who the caller is from: GET / leads to
 * the app; the page carries a strict CSP; assets are content-hashed, cached for a year and gzipped;
 * GET /me reports the caller's role and permission matrix; GET /overview and GET /calls/live keep
 * to the caller's scope.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PERMISSIONS } from '../../src/auth/index.js';
import { buildTestApp, PREFIX, type TestApp } from '../helpers/app.js';
import { buildWorld, type World } from '../helpers/world.js';

let t: TestApp;
let w: World;

before(async () => {
  t = await buildTestApp();
  w = await buildWorld(t);
});
after(() => t?.close());

describe('serving the dashboard', () => {
  it('GET / redirects to the app; the old playground URL to its Templates screen', async () => {
    const root = await t.app.inject({ method: 'GET', url: '/' });
    assert.equal(root.statusCode, 302);
    assert.equal(root.headers.location, `${PREFIX}/app/`);
    const playground = await t.anon.get('/playground');
    assert.equal(playground.status, 302);
    assert.equal(playground.headers.location, `${PREFIX}/app/templates`);
  });

  it('the page and any screen of it answer the app with a strict Content-Security-Policy', async () => {
    for (const path of ['/app/', '/app/leads/some-lead', '/app/templates']) {
      const res = await t.anon.get(path);
      assert.equal(res.status, 200, path);
      assert.match(String(res.headers['content-type']), /text\/html/);
      const csp = String(res.headers['content-security-policy']);
      assert.match(csp, /script-src 'self'(;|$)/, 'scripts only from the origin: no inline script, no eval, no CDN');
      assert.match(csp, /default-src 'none'/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:/);
      const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
      assert.ok(nonce, 'a per-page style nonce');
      assert.ok(String(res.body).includes(`content="${nonce}"`), 'the page knows its nonce');
      assert.doesNotMatch(String(res.body), /<script>(?!<\/script>)|<script [^>]*>[^<]/, 'no inline script');
      assert.equal(res.headers['cache-control'], 'no-store');
    }
  });

  it('assets are named by content hash, cached for a year, gzipped when asked; unknown files 404', async () => {
    const page = String((await t.anon.get('/app/')).body);
    const script = /src="([^"]+\/assets\/main-[A-Z0-9]+\.js)"/.exec(page)?.[1];
    const style = /href="([^"]+\/assets\/main-[A-Z0-9]+\.css)"/.exec(page)?.[1];
    assert.ok(script && style, page);
    const plain = await t.anon.raw({ method: 'GET', path: script! });
    assert.equal(plain.status, 200);
    assert.match(String(plain.headers['content-type']), /javascript/);
    assert.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(plain.headers['content-encoding'], undefined);
    const gz = await t.anon.raw({ method: 'GET', path: script!, headers: { 'accept-encoding': 'gzip, br' } });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    const css = await t.anon.raw({ method: 'GET', path: style! });
    assert.match(String(css.headers['content-type']), /text\/css/);
    const missing = await t.anon.get('/app/assets/nothing-here.js');
    assert.equal(missing.status, 404);
    assert.match(String(missing.headers['content-type']), /application\/problem\+json/);
  });
});

describe('GET /me', () => {
  it('answers each role with its scope and its row of the permission matrix', async () => {
    const admin = await t.admin.get('/me');
    assert.equal(admin.status, 200);
    assert.equal(admin.body.role, 'admin');
    assert.equal(admin.body.kind, 'user');
    assert.deepEqual(admin.body.create_user_roles, ['admin', 'reseller', 'merchant', 'user']);
    for (const [client, role, canWriteConfig] of [
      [w.reseller1, 'reseller', true],
      [w.merchant1, 'merchant', false],
      [w.user1, 'user', false],
    ] as const) {
      const me = await client.get('/me');
      assert.equal(me.status, 200, JSON.stringify(me.body));
      assert.equal(me.body.role, role);
      assert.equal(me.body.kind, 's2s');
      assert.equal(me.body.reseller_id, w.r1);
      assert.equal(me.body.permissions.configurations.write, canWriteConfig);
      for (const [resource, cell] of Object.entries(PERMISSIONS)) {
        assert.equal(me.body.permissions[resource].read, cell.read.includes(role), `${role} ${resource} read`);
        assert.equal(me.body.permissions[resource].write, cell.write.includes(role), `${role} ${resource} write`);
      }
    }
    assert.deepEqual((await w.merchant1.get('/me')).body.issue_token_roles, ['merchant', 'user']);
    assert.deepEqual((await w.user1.get('/me')).body.issue_token_roles, []);
    assert.deepEqual((await w.reseller1.get('/me')).body.create_user_roles, ['reseller', 'merchant', 'user']);
  });

  it('401 without a valid token', async () => {
    assert.equal((await t.anon.get('/me')).status, 401);
    assert.equal((await t.as('not-a-token').get('/me')).status, 401);
  });
});

describe('GET /overview and GET /calls/live', () => {
  it('keep to the caller\'s scope: failures and live calls of other merchants are not shown', async () => {
    const tpl = await t.admin.post('/templates', { name: 'overview-tpl', reseller_id: w.r1, flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'hi' }] }] } });
    assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
    const push = async (merchant: string) => {
      const res = await t.admin.post('/leads', { request_id: `ov-${merchant}`, template: 'overview-tpl', reseller_id: w.r1, merchant_id: merchant, payload: { customer_mobile_number: '+14155550100' } });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body.lead_call_tracker_id as string;
    };
    const failedM1 = await push(w.m1);
    const failedM1b = await push(w.m1b);
    const liveM1 = await push(w.m1);
    await t.db.query(`UPDATE leads SET status = 'FINISHED', outcome = 'error', meta_data = '{"last_error": {"message": "the line dropped"}}' WHERE id = ANY($1)`, [[failedM1, failedM1b]]);
    await t.db.query(`UPDATE leads SET status = 'PROCESSING', attempt_count = 1, cost = 0.25, call_end_time = now() WHERE id = $1`, [liveM1]);
    const merchant = await w.merchant1.get('/overview?timezone=Europe/Paris');
    assert.equal(merchant.status, 200, JSON.stringify(merchant.body));
    assert.deepEqual(merchant.body.failures.leads.map((l: any) => l.id), [failedM1]);
    assert.equal(merchant.body.failures.leads[0].error, 'the line dropped');
    assert.equal(merchant.body.live_calls, 1);
    assert.equal(merchant.body.cost_since, 0.25);
    const reseller = await w.reseller1.get('/overview');
    assert.deepEqual(new Set(reseller.body.failures.leads.map((l: any) => l.id)), new Set([failedM1, failedM1b]));
    const other = await w.reseller2.get('/overview');
    assert.deepEqual(other.body.failures.leads, []);
    assert.equal(other.body.live_calls, 0);
    const live = await w.merchant1.get('/calls/live');
    assert.deepEqual(live.body.data.map((c: any) => c.lead_id), [liveM1]);
    assert.equal(live.body.data[0].to_number, '+14155550100');
    assert.deepEqual((await w.merchant1b.get('/calls/live')).body.data, []);
  });

  it('400 for a time zone that is not one', async () => {
    const res = await t.admin.get('/overview?timezone=Mars/Olympus');
    assert.equal(res.status, 400);
    assert.equal(res.body.errors[0].path, '/timezone');
  });
});

describe('the sandbox API without a sandbox line', () => {
  it('GET /sandbox says it is off; POST /sandbox/call answers 409 saying why', async () => {
    const info = await w.user1.get('/sandbox');
    assert.equal(info.status, 200);
    assert.equal(info.body.enabled, false);
    assert.deepEqual(info.body.providers, []);
    const call = await w.user1.post('/sandbox/call', {});
    assert.equal(call.status, 409);
    assert.equal(call.body.code, 'sandbox_off');
    assert.equal((await t.admin.get('/health')).body.sandbox.enabled, false);
  });
});

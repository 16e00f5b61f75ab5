/**
 * A playground lead's configurations_override is honoured only for a role that may change
 * configurations: a user- or merchant-role push carrying one (rate limits, pre-checks) is refused
 * with 403 naming the fields, and the configuration's rate limit holds for everything pushed.
 * Pre-check results keep only a short compared value, never an internal service's body.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../src/lib/logger.js';
import { Scheduler } from '../../src/scheduler/index.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ScriptedDriver } from '../helpers/drivers.js';
import { buildWorld, type World } from '../helpers/world.js';

const log = createLogger('silent');
let t: TestApp;
let w: World;
let seq = 0;
let checkServer: http.Server;
let checkUrl: string;

before(async () => {
  t = await buildTestApp();
  w = await buildWorld(t);
  checkServer = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ allowed: false, profile: { ssn: '123-45-6789', notes: 'x'.repeat(500) }, code: 'A'.repeat(200) }));
  });
  await new Promise<void>((r) => checkServer.listen(0, '127.0.0.1', r));
  checkUrl = `http://127.0.0.1:${(checkServer.address() as AddressInfo).port}/check`;
});
after(async () => {
  checkServer.closeAllConnections();
  await new Promise<void>((r) => checkServer.close(() => r()));
  await t.close();
});

async function setup(config: Record<string, unknown>) {
  const name = `ov-${++seq}`;
  const tpl = await w.reseller1.post('/templates', { name, reseller_id: w.r1, flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] } });
  assert.equal(tpl.status, 200);
  const cfg = await w.reseller1.post('/configurations', { reseller_id: w.r1, template: tpl.body.id, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00', max_retry: 0, ...config });
  assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
  await t.db.query(`UPDATE outbound_numbers SET status = 'DISABLED', lead_id = NULL`);
  for (let i = 0; i < 3; i++) assert.equal((await t.admin.post('/numbers', { phone_number: `+1212555${String(3000 + seq * 10 + i)}`, provider: 'PROVIDER_A' })).status, 200);
  return name;
}

const pushAs = (client: typeof w.user1, template: string, extra: Record<string, unknown> = {}) =>
  client.post('/leads', { request_id: `o-${++seq}`, template, reseller_id: w.r1, merchant_id: w.m1, payload: { customer_mobile_number: `+1646555${String(4000 + seq)}` }, ...extra });

describe('configurations_override', () => {
  it('is refused with 403 naming the fields for user and merchant tokens, and the rate limit holds', async () => {
    const template = await setup({ rate_limit_enabled: true, rate_limit_max_calls: 1, rate_limit_window_seconds: 3600 });
    const before = (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM leads')).rows[0]!.n;
    for (const [client, override] of [
      [w.user1, { rate_limit_enabled: false }],
      [w.user1, { pre_checks: [] }],
      [w.merchant1, { rate_limit_max_calls: 1000, calling_provider: 'PROVIDER_B' }],
    ] as const) {
      const res = await pushAs(client, template, { is_playground: true, configurations_override: override });
      assert.equal(res.status, 403, JSON.stringify(res.body));
      assert.equal(res.body.code, 'override_not_allowed');
      assert.deepEqual(res.body.errors.map((e: { path: string }) => e.path), Object.keys(override).map((k) => `/configurations_override/${k}`));
    }
    assert.equal((await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM leads')).rows[0]!.n, before, 'nothing written');

    // What a user may push: ordinary and playground leads without an override, and an empty override.
    const pushed = [await pushAs(w.user1, template), await pushAs(w.user1, template, { is_playground: true }), await pushAs(w.user1, template, { is_playground: true, configurations_override: {} })];
    for (const p of pushed) assert.equal(p.status, 201, JSON.stringify(p.body));
    const driver = new ScriptedDriver('PROVIDER_A');
    await new Scheduler({ db: t.db, drivers: new Map([['PROVIDER_A', driver]]), log, recoverEveryMs: 0, outbound: t.outbound }).drain();
    assert.equal(driver.dials.length, 1, 'one call per hour, whoever pushed');
  });

  it('is honoured for a reseller (who may change the configuration), with its URLs checked by the outbound policy', async () => {
    const template = await setup({});
    const ok = await pushAs(w.reseller1, template, { is_playground: true, configurations_override: { max_retry: 3 } });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    const lead = (await w.reseller1.get(`/leads/${ok.body.lead_call_tracker_id}`)).body;
    assert.deepEqual(lead.configurations_override, { max_retry: 3 });
    const refused = await pushAs(w.reseller1, template, { is_playground: true, configurations_override: { service_callback_url: 'http://169.254.169.254/latest' } });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.errors[0].path, '/configurations_override/service_callback_url');
  });
});

describe('pre-check read-back', () => {
  it('keeps the compared value only when it is a short scalar: never objects or long text', async () => {
    const check = (field: string) => ({ name: field, type: 'external_api', default_on_failure: 'proceed', http_request: { url: checkUrl }, response_config: { response_field: field, response_field_value: 'yes' } });
    const stored: Record<string, { result: string; value?: unknown }> = {};
    for (const field of ['profile', 'code', 'allowed']) {
      const template = await setup({ pre_checks: [check(field)] });
      const pushed = await pushAs(w.reseller1, template);
      await new Scheduler({ db: t.db, drivers: new Map([['PROVIDER_A', new ScriptedDriver('PROVIDER_A')]]), log, recoverEveryMs: 0, outbound: t.outbound }).drain();
      const lead = (await w.reseller1.get(`/leads/${pushed.body.lead_call_tracker_id}`)).body;
      stored[field] = lead.metaData.pre_check_results[0];
      assert.doesNotMatch(JSON.stringify(lead.metaData), /123-45-6789|xxxxxxxx|AAAAAAAA/, field);
    }
    for (const field of ['profile', 'code']) {
      assert.equal(stored[field]!.result, 'failed');
      assert.ok(!('value' in stored[field]!), `${field}: not read back`);
    }
    assert.equal(stored.allowed!.value, false, 'a boolean is kept');
  });
});

/**
 * Every URL a tenant controls, against a real local service on 127.0.0.1 with an empty
 * DIALER_OUTBOUND_ALLOW: reporting webhooks, service callbacks, pre-checks and template hooks are
 * refused when written with a literal loopback or metadata address (400 naming the field, nothing
 * written), and blocked when sent to a name that resolves to loopback (recorded as blocked), while
 * the local service sees no request at all.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createLogger } from '../../src/lib/logger.js';
import { Scheduler } from '../../src/scheduler/index.js';
import { createFlowSession } from '../../src/voice/flow/index.js';
import { enqueueReportingWebhook, queueFinishNotifications, WebhookDispatcher } from '../../src/webhooks/index.js';
import { webhookSettings } from '../../src/config/webhooks.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ScriptedDriver } from '../helpers/drivers.js';
import { ScriptedLLM } from '../helpers/scripted-llm.js';
import { buildWorld, type World } from '../helpers/world.js';

const log = createLogger('silent');
let t: TestApp;
let w: World;
let internal: http.Server;
let port: number;
const seen: string[] = [];
let templateId: string;
let seq = 0;

const flow = (hookUrl?: string) => ({
  initial_node: 'a',
  nodes: [
    {
      node_name: 'a',
      task_messages: [{ role: 'system', content: 'Hi' }],
      ...(hookUrl ? { functions: [{ name: 'save', properties: {}, required: [], hooks: [{ name: 'crm', http_request: { url: hookUrl, method: 'GET' } }] }] } : {}),
    },
  ],
});
const configuration = (extra: Record<string, unknown> = {}) => ({
  reseller_id: w.r1,
  template: templateId,
  calling_provider: 'PROVIDER_A',
  call_start_time: '00:00',
  call_end_time: '00:00',
  max_retry: 0,
  ...extra,
});
const preCheck = (url: string) => ({
  name: 'internal',
  type: 'external_api',
  default_on_failure: 'skip',
  http_request: { url, method: 'GET' },
  response_config: { response_field: 'secret', response_field_value: 'x' },
});
const count = async (table: string) => (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n;
const push = (extra: Record<string, unknown> = {}) =>
  w.reseller1.post('/leads', { request_id: `o-${++seq}`, template: 'ssrf', reseller_id: w.r1, payload: { customer_mobile_number: `+1646555${String(6000 + seq)}` }, ...extra });

before(async () => {
  t = await buildTestApp({ env: { DIALER_OUTBOUND_ALLOW: '' } });
  w = await buildWorld(t);
  internal = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"secret":"internal","ok":true}');
  });
  await new Promise<void>((r) => internal.listen(0, '127.0.0.1', r));
  port = (internal.address() as AddressInfo).port;
  const tpl = await w.reseller1.post('/templates', { name: 'ssrf', reseller_id: w.r1, flow: flow() });
  assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
  templateId = tpl.body.id;
  assert.equal((await t.admin.post('/numbers', { phone_number: '+12125556001', provider: 'PROVIDER_A' })).status, 200);
});
after(async () => {
  internal.closeAllConnections();
  await new Promise<void>((r) => internal.close(() => r()));
  await t.close();
});
beforeEach(() => {
  seen.length = 0;
});

describe('outbound URL policy at write time (literal addresses: 400 naming the field, nothing written)', () => {
  it('refuses a reporting webhook at loopback, the metadata service or a private address, single and in a batch', async () => {
    const before = await count('leads');
    for (const url of [`http://127.0.0.1:${port}/hook`, 'http://169.254.169.254/latest/meta-data/', `http://2130706433:${port}/`, 'http://[::1]/x', 'https://10.1.2.3/x']) {
      const res = await push({ reporting_webhook_url: url });
      assert.equal(res.status, 400, `${url}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.code, 'outbound_url_refused');
      assert.equal(res.body.errors[0].path, '/reporting_webhook_url');
    }
    const batch = await w.reseller1.post('/leads/batch', { leads: [{ request_id: 'b', template: 'ssrf', reseller_id: w.r1, payload: {}, reporting_webhook_url: `http://127.0.0.1:${port}/` }] });
    assert.equal(batch.body.results[0].status, 400);
    assert.equal(await count('leads'), before);
  });

  it('refuses pre-check and service callback URLs of a configuration, on create and on replace', async () => {
    const created = await w.reseller1.post('/configurations', configuration({ pre_checks: [preCheck(`http://127.0.0.1:${port}/check`)], service_callback_url: 'http://169.254.169.254/' }));
    assert.equal(created.status, 400, JSON.stringify(created.body));
    assert.deepEqual(created.body.errors.map((e: { path: string }) => e.path).sort(), ['/pre_checks/0/http_request/url', '/service_callback_url']);
    assert.equal(await count('configurations'), 0);
    const ok = await w.reseller1.post('/configurations', configuration());
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    const replaced = await w.reseller1.put(`/configurations/${ok.body.id}`, { ...ok.body, service_callback_url: `http://[::ffff:127.0.0.1]:${port}/` });
    assert.equal(replaced.status, 400);
    assert.equal(replaced.body.errors[0].path, '/service_callback_url');
    assert.equal((await w.reseller1.delete(`/configurations/${ok.body.id}`)).status, 200);
  });

  it('refuses a template hook at loopback', async () => {
    const res = await w.reseller1.post('/templates', { name: 'hooked', reseller_id: w.r1, flow: flow(`http://127.0.0.1:${port}/secret`) });
    assert.equal(res.status, 400);
    assert.equal(res.body.errors[0].path, '/flow/nodes/0/functions/0/hooks/0/http_request/url');
    assert.match(res.body.errors[0].message, /loopback/);
    assert.equal((await w.reseller1.get('/templates?name=hooked')).body.total, 0);
  });
});

describe('outbound URL policy at send time (a name resolving to loopback: blocked, recorded, never sent)', () => {
  it('blocks a pre-check and a service callback, and records them as blocked', async () => {
    const cfg = await w.reseller1.post('/configurations', configuration({ pre_checks: [preCheck(`http://localhost:${port}/check`)] }));
    assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
    const pushed = await push();
    assert.equal(pushed.status, 201);
    const driver = new ScriptedDriver('PROVIDER_A');
    await new Scheduler({ db: t.db, drivers: new Map([['PROVIDER_A', driver]]), log, recoverEveryMs: 0, outbound: t.outbound }).drain();
    const lead = (await w.reseller1.get(`/leads/${pushed.body.lead_call_tracker_id}`)).body;
    assert.equal(lead.outcome, 'PRECHECK_FAILED');
    assert.equal(driver.dials.length, 0);
    const [result] = lead.metaData.pre_check_results;
    assert.equal(result.result, 'blocked');
    assert.equal(result.error, 'blocked: localhost resolves to a loopback address');
    assert.equal(result.value, undefined);

    // The configuration's callback at a name resolving to loopback: queued when a conversation ends, then blocked.
    const put = await w.reseller1.put(`/configurations/${cfg.body.id}`, { ...cfg.body, pre_checks: [], service_callback_url: `http://localhost:${port}/callback` });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    const second = await push({ reporting_webhook_url: `http://localhost:${port}/webhook` });
    const talk = new ScriptedDriver('PROVIDER_A', () => ({ kind: 'completed', outcome: 'confirmed', durationSeconds: 5, metaData: { call_ended_by: 'agent' } }));
    await new Scheduler({ db: t.db, drivers: new Map([['PROVIDER_A', talk]]), log, recoverEveryMs: 0, outbound: t.outbound, onFinished: queueFinishNotifications(undefined) }).drain();
    await new WebhookDispatcher({ db: t.db, log, settings: { ...webhookSettings({}), timeoutMs: 2000 }, workerId: 'w', outbound: t.outbound }).runOnce();
    const deliveries = (await w.reseller1.get(`/leads/${second.body.lead_call_tracker_id}/webhooks`)).body.data as Array<{ kind: string; status: string; attempts: number; attempt_log: Array<{ error: string }> }>;
    assert.deepEqual(deliveries.map((d) => d.kind).sort(), ['service_callback', 'success']);
    for (const d of deliveries) {
      assert.equal(d.status, 'failed', JSON.stringify(d));
      assert.equal(d.attempts, 1, 'a blocked delivery is not retried');
      assert.equal(d.attempt_log[0]!.error, 'blocked: localhost resolves to a loopback address');
    }
    assert.deepEqual(seen, []);
    assert.equal((await w.reseller1.delete(`/configurations/${cfg.body.id}`)).status, 200);
  });

  it('blocks a reporting webhook whose host resolves to loopback', async () => {
    const pushed = await push({ reporting_webhook_url: `http://LOCALHOST:${port}/webhook` });
    assert.equal(pushed.status, 201, JSON.stringify(pushed.body));
    const id = pushed.body.lead_call_tracker_id;
    await t.db.tx(async (q) => {
      await q.query(`UPDATE leads SET status = 'FINISHED', outcome = 'no_answer' WHERE id = $1`, [id]);
      await enqueueReportingWebhook(q, id);
    });
    await new WebhookDispatcher({ db: t.db, log, settings: { ...webhookSettings({}), timeoutMs: 2000 }, workerId: 'w', outbound: t.outbound }).runOnce();
    const [d] = (await w.reseller1.get(`/leads/${id}/webhooks`)).body.data;
    assert.equal(d.status, 'failed');
    assert.match(d.attempt_log[0].error, /^blocked: /);
    assert.deepEqual(seen, []);
  });

  it('blocks a template hook whose host resolves to loopback: the record says blocked and holds no response', async () => {
    const tpl = await w.merchant1.post('/templates', { name: 'hook-send', reseller_id: w.r1, flow: flow(`http://localhost:${port}/secret`) });
    assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
    const session = createFlowSession(tpl.body.flow, { llm: new ScriptedLLM([{ tools: [{ name: 'save', arguments: {} }] }, { text: ['Done.'] }]), variables: {}, fetch: t.outbound.fetch });
    for await (const _ of session.start(new AbortController().signal));
    const [call] = session.record.function_calls;
    assert.equal(call!.hooks[0]!.ok, false);
    assert.equal(call!.hooks[0]!.blocked, true);
    assert.equal(call!.hooks[0]!.response, undefined);
    assert.match(call!.hooks[0]!.error!, /^blocked: localhost resolves to a loopback address/);
    assert.deepEqual(seen, []);
  });
});

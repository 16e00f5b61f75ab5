/**
 * Redirects under the outbound URL policy: the operator allows one receiver (DIALER_OUTBOUND_ALLOW
 * =127.0.0.2); a pre-check and a template hook sent to it are answered with a 302 to 127.0.0.1 (by
 * literal or through `localhost`). Each hop is checked again: the redirect is recorded as blocked,
 * nothing reaches the service on 127.0.0.1, and no part of its answer is kept. The allowed
 * receiver itself is reached (the control).
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createLogger } from '../../src/lib/logger.js';
import { Scheduler } from '../../src/scheduler/index.js';
import { createFlowSession } from '../../src/voice/flow/index.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ScriptedDriver } from '../helpers/drivers.js';
import { ScriptedLLM } from '../helpers/scripted-llm.js';
import { buildWorld, type World } from '../helpers/world.js';

const log = createLogger('silent');
let t: TestApp;
let w: World;
let internal: http.Server;
let receiver: http.Server;
let receiverUrl: string;
const seenInternal: string[] = [];
const seenReceiver: string[] = [];
let templateId: string;
let seq = 0;

const listen = async (server: http.Server, host: string) => {
  await new Promise<void>((r) => server.listen(0, host, r));
  return (server.address() as AddressInfo).port;
};
const close = async (server: http.Server) => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
};

before(async () => {
  t = await buildTestApp({ env: { DIALER_OUTBOUND_ALLOW: '127.0.0.2' } });
  w = await buildWorld(t);
  internal = http.createServer((req, res) => {
    seenInternal.push(`${req.method} ${req.url}`);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"secret":"internal"}');
  });
  const internalPort = await listen(internal, '127.0.0.1');
  receiver = http.createServer((req, res) => {
    seenReceiver.push(`${req.method} ${req.url}`);
    if (req.url === '/to-literal') return void res.writeHead(302, { location: `http://127.0.0.1:${internalPort}/secret` }).end();
    if (req.url === '/to-name') return void res.writeHead(302, { location: `http://localhost:${internalPort}/secret` }).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"secret":"x"}');
  });
  receiverUrl = `http://127.0.0.2:${await listen(receiver, '127.0.0.2')}`;
  const tpl = await w.reseller1.post('/templates', { name: 'redirect', reseller_id: w.r1, flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] } });
  assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
  templateId = tpl.body.id;
  assert.equal((await t.admin.post('/numbers', { phone_number: '+12125556101', provider: 'PROVIDER_A' })).status, 200);
});
after(async () => {
  await close(internal);
  await close(receiver);
  await t.close();
});
beforeEach(() => {
  seenInternal.length = 0;
  seenReceiver.length = 0;
});

/** A lead whose configuration has one pre-check at `url`, run by a scheduler: its pre-check result and whether it was dialled. */
async function preCheckThrough(url: string): Promise<{ result: Record<string, unknown>; dialled: boolean }> {
  const cfg = await w.reseller1.post('/configurations', {
    reseller_id: w.r1,
    template: templateId,
    calling_provider: 'PROVIDER_A',
    call_start_time: '00:00',
    call_end_time: '00:00',
    max_retry: 0,
    pre_checks: [{ name: 'crm', type: 'external_api', default_on_failure: 'skip', http_request: { url, method: 'GET' }, response_config: { response_field: 'secret', response_field_value: 'x' } }],
  });
  assert.equal(cfg.status, 200, `the allowed receiver's URL is accepted when written: ${JSON.stringify(cfg.body)}`);
  const pushed = await w.reseller1.post('/leads', { request_id: `r-${++seq}`, template: 'redirect', reseller_id: w.r1, payload: { customer_mobile_number: `+1646555${String(7000 + seq)}` } });
  assert.equal(pushed.status, 201, JSON.stringify(pushed.body));
  const driver = new ScriptedDriver('PROVIDER_A');
  await new Scheduler({ db: t.db, drivers: new Map([['PROVIDER_A', driver]]), log, recoverEveryMs: 0, outbound: t.outbound }).drain();
  const lead = (await w.reseller1.get(`/leads/${pushed.body.lead_call_tracker_id}`)).body;
  assert.equal((await w.reseller1.delete(`/configurations/${cfg.body.id}`)).status, 200);
  return { result: lead.metaData.pre_check_results[0], dialled: driver.dials.length > 0 };
}

describe('a redirect from an allowed receiver to 127.0.0.1', () => {
  it('the allowed receiver itself is reached (control)', async () => {
    const { result, dialled } = await preCheckThrough(`${receiverUrl}/fine`);
    assert.equal(result.result, 'passed', JSON.stringify(result));
    assert.equal(dialled, true);
    assert.deepEqual(seenReceiver, ['GET /fine']);
  });

  it('is blocked for a pre-check, by literal address and through localhost; 127.0.0.1 sees nothing', async () => {
    for (const path of ['/to-literal', '/to-name']) {
      const { result, dialled } = await preCheckThrough(`${receiverUrl}${path}`);
      assert.equal(result.result, 'blocked', JSON.stringify(result));
      assert.match(String(result.error), /^blocked: (127\.0\.0\.1 is|localhost resolves to) a loopback address/);
      assert.equal(result.value, undefined, 'nothing of the internal answer is kept');
      assert.equal(dialled, false);
    }
    assert.deepEqual(seenReceiver, ['GET /to-literal', 'GET /to-name'], 'the allowed receiver was asked');
    assert.deepEqual(seenInternal, [], 'the service on 127.0.0.1 was never reached');
  });

  it('is blocked for a template hook: the record says blocked and holds no response', async () => {
    for (const path of ['/to-literal', '/to-name']) {
      const flow = {
        initial_node: 'a',
        nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }], functions: [{ name: 'save', properties: {}, required: [], hooks: [{ name: 'crm', http_request: { url: `${receiverUrl}${path}`, method: 'GET' } }] }] }],
      };
      const tpl = await w.merchant1.post('/templates', { name: `hook${path.replace('/', '-')}`, reseller_id: w.r1, flow });
      assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
      const session = createFlowSession(tpl.body.flow, { llm: new ScriptedLLM([{ tools: [{ name: 'save', arguments: {} }] }, { text: ['Done.'] }]), variables: {}, fetch: t.outbound.fetch });
      for await (const _ of session.start(new AbortController().signal));
      const hook = session.record.function_calls[0]!.hooks[0]!;
      assert.equal(hook.ok, false);
      assert.equal(hook.blocked, true, JSON.stringify(hook));
      assert.equal(hook.response, undefined);
      assert.match(hook.error!, /^blocked: /);
    }
    assert.deepEqual(seenReceiver, ['GET /to-literal', 'GET /to-name']);
    assert.deepEqual(seenInternal, []);
  });
});

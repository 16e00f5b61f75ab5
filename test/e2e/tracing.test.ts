/**
 * Tracing end to end: `dialer serve` with OTEL_EXPORTER_OTLP_ENDPOINT pointing at an in-process
 * OTLP/HTTP receiver (shaped like Langfuse's /api/public/otel) makes a template-driven call through
 * the provider emulator, as test/e2e/voice.test.ts does. The receiver decodes what the real
 * exporter sends: the call's span tree (call > dial, call > turn > stt/llm/tts/hook), its
 * attributes, and the scores that also land on the lead's trace_scores. Then the same call with
 * tracing unconfigured: it works and nothing is exported.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { API_PREFIX } from '../../src/app.js';
import type { RunningServer } from '../../src/server.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import type { Client } from '../helpers/app.js';
import { startOpenAIServer, type OpenAIServer } from '../helpers/openai-server.js';
import { freePort } from '../helpers/net.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { serveDialer } from '../helpers/serve.js';

const TWILIO = { accountSid: 'AC00000000000000000000000000000003', authToken: 'tracing-e2e-token' };
const AUTH = `Basic ${Buffer.from('pk-lf-test:sk-lf-test').toString('base64')}`;


type AttrValue = string | number | boolean | AttrValue[] | undefined;
interface ReceivedSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  startMs: number;
  endMs: number;
  status: number | undefined;
  attributes: Record<string, AttrValue>;
  resource: Record<string, AttrValue>;
  scope: string;
}

/** An OTLP AnyValue in its JSON encoding. */
function value(v: any): AttrValue {
  if (v === undefined || v === null) return undefined;
  if ('stringValue' in v) return v.stringValue;
  if ('boolValue' in v) return v.boolValue;
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return Number(v.doubleValue);
  if ('arrayValue' in v) return (v.arrayValue.values ?? []).map(value);
  return undefined;
}
const attributes = (list: any[] | undefined) => Object.fromEntries((list ?? []).map((a) => [a.key, value(a.value)]));

/** A local OTLP/HTTP (JSON) traces endpoint, at Langfuse's path. */
async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const requests: Array<{ path: string; contentType: string | undefined; authorization: string | undefined }> = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      requests.push({ path: req.url!, contentType: req.headers['content-type'], authorization: req.headers.authorization });
      const request = JSON.parse(body);
      for (const rs of request.resourceSpans ?? []) {
        const resource = attributes(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              name: s.name,
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId || undefined,
              startMs: Number(BigInt(s.startTimeUnixNano) / 1_000_000n),
              endMs: Number(BigInt(s.endTimeUnixNano) / 1_000_000n),
              status: s.status?.code,
              attributes: attributes(s.attributes),
              resource,
              scope: ss.scope?.name,
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`, spans, requests, close: () => new Promise<void>((r) => server.close(() => r())) };
}

let port: number;
let emulator: Emulator;
let ai: OpenAIServer;
let hooks: Receiver;
let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
const dataDirs: string[] = [];
const servers: RunningServer[] = [];

const BASE_ENV = () => ({
  PORT: String(port),
  HOST: '127.0.0.1',
  DIALER_JWT_SECRET: 'tracing-secret-tracing-secret-tracing-01',
  DIALER_ADMIN_EMAIL: 'admin@example.com',
  DIALER_ADMIN_PASSWORD: 'admin-password-1',
  DIALER_POLL_MS: '100',
  LOG_LEVEL: 'silent' as const,
  TWILIO_ACCOUNT_SID: TWILIO.accountSid,
  TWILIO_AUTH_TOKEN: TWILIO.authToken,
  TWILIO_API_URL: emulator.url,
  LLM_BASE_URL: ai.url,
  STT_BASE_URL: ai.url,
});
const OTEL_KEYS = ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_SERVICE_NAME'];

async function serve(env: Record<string, string>): Promise<{ server: RunningServer; admin: Client }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-tracing-'));
  dataDirs.push(dataDir);
  const full = { ...env, DIALER_DATA_DIR: dataDir };
  for (const k of OTEL_KEYS) delete process.env[k];
  const { server, admin } = await serveDialer({ ...full, DIALER_ADMIN_EMAIL: env.DIALER_ADMIN_EMAIL!, DIALER_ADMIN_PASSWORD: env.DIALER_ADMIN_PASSWORD! });
  servers.push(server);
  return { server, admin };
}

async function closeServer(server: RunningServer): Promise<void> {
  servers.splice(servers.indexOf(server), 1);
  await server.close();
}

/** Sets up a template, configuration and number, pushes a lead and waits for its end. */
async function callOnce(admin: Client, label: string): Promise<any> {
  const reseller = await prepare(admin, label);
  ai.chat.push({ text: 'Hello Ana! Shall I confirm order A-42?' }, { tools: [{ name: 'confirm_order', arguments: { confirmed: true } }] });
  ai.transcripts.push('Yes, please confirm it. Thank you, that is great!');
  const callee = '+14155550400';
  emulator.script(callee, { answer: 'answer', steps: [{ waitForAudio: 15_000 }, { say: 'Yes, please confirm it. Thank you, that is great!' }, { waitForAudio: 15_000 }], maxSeconds: 45 });
  const lead = await push(admin, reseller, label, callee);
  assert.equal(lead.status, 'FINISHED', JSON.stringify(lead.metaData));
  assert.equal(lead.outcome, 'confirmed', JSON.stringify(lead.metaData));
  return { lead, reseller };
}

/** Pushes a lead to `callee` and waits until its attempt is over. */
async function push(admin: Client, reseller: string, label: string, callee: string, requestId = `tracing-${label}`): Promise<any> {
  const pushed = await admin.post('/leads', { request_id: requestId, template: `confirm-${label}`, reseller_id: reseller, payload: { customer_mobile_number: callee, customer_name: 'Ana', order_id: 'A-42' } });
  assert.equal(pushed.status, 201, JSON.stringify(pushed.body));
  const leadId = pushed.body.lead_call_tracker_id;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const lead = (await admin.get(`/leads/${leadId}`)).body;
    if (lead.status === 'FINISHED' || lead.status === 'RETRY') return lead;
    assert.ok(Date.now() < deadline, `lead still ${lead.status}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A pre-check against the local hook server, which answers {"crm":"updated"}: it passes when `expect` is "updated". */
const preCheck = (expect: string) => {
  const url = `http://127.0.0.1:${hooks.port}/allowed/{lead_id}`;
  return { name: 'allowed', type: 'external_api', default_on_failure: 'skip', http_request: { url, method: 'GET' }, response_config: { response_field: 'crm', response_field_value: expect } };
};

async function prepare(admin: Client, label: string, options: { number?: string; preCheckExpects?: string } = {}): Promise<string> {
  const hookUrl = `http://127.0.0.1:${hooks.port}`;
  const reseller = (await admin.post('/resellers', { name: `Tracing ${label}` })).body.id;
  const flow = {
    initial_node: 'greet',
    // The scripted LLM answers requests in order: no speculative replies to use its answers up early.
    turn_taking: { mode: 'vad' },
    nodes: [
      {
        node_name: 'greet',
        role_messages: [{ role: 'system', content: 'You call {customer_name} for Acme. Be brief.' }],
        task_messages: [{ role: 'system', content: 'Ask {customer_name} to confirm order {order_id}.' }],
        functions: [
          {
            name: 'confirm_order',
            properties: { confirmed: { type: 'boolean' } },
            required: ['confirmed'],
            transition_to: 'end_confirmed',
            hooks: [{ name: 'crm', http_request: { url: `${hookUrl}/orders/{order_id}`, method: 'POST', body: { order: '{order_id}' } } }],
          },
        ],
      },
      {
        node_name: 'end_confirmed',
        task_messages: [{ role: 'system', content: 'Thank them.' }],
        pre_actions: [{ type: 'tts_say', text: 'Thank you {customer_name}. Goodbye!' }, { type: 'end_conversation', outcome: 'confirmed' }],
      },
    ],
  };
  const tpl = await admin.post('/templates', { name: `confirm-${label}`, reseller_id: reseller, flow });
  assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
  const cfg = await admin.post('/configurations', {
    reseller_id: reseller,
    template: tpl.body.id,
    calling_provider: 'PROVIDER_A',
    call_start_time: '00:00',
    call_end_time: '00:00',
    pre_checks: [preCheck(options.preCheckExpects ?? 'updated')],
    enable_inbound: true,
    inbound_call_start_time: '00:00',
    inbound_call_end_time: '00:00',
  });
  assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
  assert.equal((await admin.post('/numbers', { phone_number: options.number ?? '+12125550400', provider: 'PROVIDER_A' })).status, 200);
  return reseller;
}

before(async () => {
  port = await freePort();
  ai = await startOpenAIServer();
  receiver = await startOtlpReceiver();
  emulator = await startEmulator({
    dialerUrl: `http://127.0.0.1:${port}${API_PREFIX}`,
    twilio: TWILIO,
    plivo: { authId: 'MAX', authToken: 'x' },
    exotel: { accountSid: 'x', apiKey: 'x', apiToken: 'x' },
  });
  hooks = await startReceiver({ crm: 'updated' });
});

after(async () => {
  for (const server of [...servers]) await server.close();
  await emulator?.close();
  await ai?.close();
  await receiver?.close();
  await hooks?.close();
  for (const dir of dataDirs) fs.rmSync(dir, { recursive: true, force: true });
  for (const k of OTEL_KEYS) delete process.env[k];
});

describe('tracing a call', () => {
  it('exports the call as one trace over OTLP/HTTP: call > dial, call > turn > stt/llm/tts/hook, with attributes and the lead trace_scores as scores', async () => {
    const { server, admin } = await serve({
      ...BASE_ENV(),
      OTEL_EXPORTER_OTLP_ENDPOINT: `${receiver.url}/api/public/otel`,
      OTEL_EXPORTER_OTLP_HEADERS: `Authorization=${encodeURIComponent(AUTH)}`,
      OTEL_SERVICE_NAME: 'dialer-test',
    });
    const { lead, reseller } = await callOnce(admin, 'traced');
    // An attempt that does not reach the callee is traced too.
    emulator.script('+14155550401', { answer: 'busy' });
    const busy = await push(admin, reseller, 'traced', '+14155550401', 'tracing-busy');
    // A pre-check that stops the lead: the attempt is traced up to it.
    const stopping = await prepare(admin, 'stopped', { number: '+12125550402', preCheckExpects: 'blocked' });
    const stopped = await push(admin, stopping, 'stopped', '+14155550402');
    assert.equal(stopped.outcome, 'PRECHECK_FAILED');
    // The person calls back: an inbound call on a new lead, traced from its answer.
    ai.chat.push({ text: 'Hello again Ana!' });
    emulator.script('+14155550400', { answer: 'answer', steps: [{ waitForAudio: 15_000 }], maxSeconds: 4 });
    const callBack = await emulator.inbound({ provider: 'PROVIDER_A', from: '+14155550400', to: '+12125550400' });
    await callBack.ended;
    let inbound: any;
    for (let i = 0; i < 100 && inbound?.status !== 'FINISHED'; i++) {
      const { rows } = await server.db.query<{ id: string }>('SELECT id FROM leads WHERE call_id = $1', [callBack.callSid]);
      if (rows[0]) inbound = (await admin.get(`/leads/${rows[0].id}`)).body;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(inbound?.status, 'FINISHED', 'the inbound lead finished');
    // Closing flushes the batch processor.
    await closeServer(server);

    const inboundTrace = receiver.spans.filter((s) => s.traceId === inbound.metaData.trace_id);
    const inboundRoot = inboundTrace.find((s) => s.parentSpanId === undefined)!;
    assert.equal(inboundRoot.name, 'call');
    assert.equal(inboundRoot.attributes['dialer.call_direction'], 'inbound');
    assert.equal(inboundRoot.attributes['dialer.lead_id'], inbound.id);
    assert.equal(inboundRoot.attributes['dialer.call_id'], callBack.callSid);
    assert.deepEqual(
      Object.fromEntries(Object.entries(inboundRoot.attributes).filter(([k]) => k.startsWith('dialer.score.')).map(([k, v]) => [k.slice('dialer.score.'.length), v])),
      inbound.trace_scores,
    );
    assert.ok(Object.keys(inbound.trace_scores).length > 0, 'the inbound lead has trace_scores');
    assert.ok(!inboundTrace.some((s) => s.name === 'dial'), 'an inbound call is not dialled');
    const inboundTurn = inboundTrace.find((s) => s.name === 'turn' && s.parentSpanId === inboundRoot.spanId)!;
    assert.equal(inboundTurn.attributes['dialer.turn.kind'], 'greeting');
    assert.ok(inboundTrace.some((s) => s.name === 'llm' && s.parentSpanId === inboundTurn.spanId));

    const stoppedTrace = receiver.spans.filter((s) => s.traceId === stopped.metaData.trace_id);
    assert.deepEqual(stoppedTrace.map((s) => s.name).sort(), ['call', 'pre_check']);
    const stoppedRoot = stoppedTrace.find((s) => s.name === 'call')!;
    assert.equal(stoppedRoot.attributes['dialer.outcome'], 'PRECHECK_FAILED');
    assert.equal(stoppedRoot.attributes['dialer.lead_id'], stopped.id);
    const stoppedCheck = stoppedTrace.find((s) => s.name === 'pre_check')!;
    assert.equal(stoppedCheck.parentSpanId, stoppedRoot.spanId);
    assert.deepEqual(
      [stoppedCheck.attributes['dialer.pre_check.name'], stoppedCheck.attributes['dialer.pre_check.result'], stoppedCheck.attributes['dialer.pre_check.action']],
      ['allowed', 'failed', 'skip'],
    );

    const busyTrace = receiver.spans.filter((s) => s.traceId === busy.metaData.trace_id);
    assert.match(busy.metaData.trace_id, /^[0-9a-f]{32}$/);
    assert.deepEqual(busyTrace.map((s) => s.name).sort(), ['Twilio call creation', 'call', 'dial', 'pre_check']);
    const busyRoot = busyTrace.find((s) => s.name === 'call')!;
    assert.equal(busyRoot.attributes['dialer.outcome'], 'busy');
    assert.equal(busyRoot.attributes['dialer.lead_id'], busy.id);
    assert.equal(busyRoot.attributes['dialer.call_id'], busy.call_id);
    assert.equal(Object.keys(busyRoot.attributes).filter((k) => k.startsWith('dialer.score.')).length, 0);
    assert.deepEqual(busy.trace_scores, {});
    const busyDial = busyTrace.find((s) => s.name === 'dial')!;
    assert.equal(busyDial.parentSpanId, busyRoot.spanId);
    assert.equal(busyDial.attributes['dialer.dial.result'], 'busy');

    // What the exporter sent, as Langfuse would receive it.
    assert.ok(receiver.requests.length > 0, 'spans were exported');
    for (const r of receiver.requests) {
      assert.equal(r.path, '/api/public/otel/v1/traces');
      assert.match(r.contentType ?? '', /application\/json/);
      assert.equal(r.authorization, AUTH);
    }
    const traceId = lead.metaData.trace_id;
    assert.match(traceId, /^[0-9a-f]{32}$/, 'the lead names its trace');
    const spans = receiver.spans.filter((s) => s.traceId === traceId);
    assert.equal(spans.length + busyTrace.length + inboundTrace.length + stoppedTrace.length, receiver.spans.length, 'every exported span belongs to one of the four attempts');
    assert.equal(spans[0]!.resource['service.name'], 'dialer-test');

    const byName = (name: string) => spans.filter((s) => s.name === name);
    const childrenOf = (parent: ReceivedSpan, name?: string) => spans.filter((s) => s.parentSpanId === parent.spanId && (name === undefined || s.name === name));

    // The root: one call span, found from the lead by its trace id, call id and lead id.
    const [root, ...otherRoots] = spans.filter((s) => s.parentSpanId === undefined);
    assert.equal(otherRoots.length, 0);
    assert.equal(root!.name, 'call');
    const a = root!.attributes;
    assert.equal(a['dialer.lead_id'], lead.id);
    assert.equal(a['dialer.call_id'], lead.call_id);
    assert.equal(a['langfuse.session.id'], lead.call_id);
    assert.equal(a['langfuse.user.id'], lead.id);
    assert.equal(a['user.id'], lead.id);
    assert.equal(a['session.id'], lead.call_id);
    assert.equal(a['langfuse.trace.name'], 'call');
    assert.equal(a['langfuse.trace.metadata.call_id'], lead.call_id);
    assert.equal(a['dialer.attempt'], 1);
    assert.equal(a['dialer.provider'], 'PROVIDER_A');
    assert.equal(a['dialer.template'], 'confirm-traced');
    assert.equal(typeof a['dialer.execution_mode'], 'string');
    assert.equal(a['dialer.outcome'], 'confirmed');
    assert.equal(a['langfuse.trace.metadata.outcome'], 'confirmed');
    assert.equal(a['dialer.end_kind'], 'completed');
    assert.equal(typeof a['dialer.duration_ms'], 'number');
    assert.deepEqual(a['langfuse.trace.tags'], ['PROVIDER_A', 'confirm-traced', a['dialer.execution_mode']]);

    // Scores: the lead's trace_scores, one attribute each, and as Langfuse trace metadata.
    const scores = lead.trace_scores as Record<string, number>;
    for (const name of ['sentiment', 'turn_latency_p50_ms', 'turn_latency_p95_ms', 'interruptions', 'turns']) assert.equal(typeof scores[name], 'number', `trace_scores.${name}`);
    const spanScores = Object.fromEntries(Object.entries(a).filter(([k]) => k.startsWith('dialer.score.')).map(([k, v]) => [k.slice('dialer.score.'.length), v]));
    assert.deepEqual(spanScores, scores);
    assert.deepEqual(JSON.parse(a['langfuse.trace.metadata.trace_scores'] as string), scores);
    assert.deepEqual(JSON.parse(a['langfuse.trace.output'] as string), { outcome: 'confirmed', trace_scores: scores });

    // call > pre_check: the configuration's check, before the dial.
    const [check] = childrenOf(root!, 'pre_check');
    assert.equal(check!.attributes['dialer.pre_check.result'], 'passed');
    assert.equal(check!.attributes['http.response.status_code'], 200);

    // call > dial: the placement, until answered.
    const [dial, ...moreDials] = childrenOf(root!, 'dial');
    assert.equal(moreDials.length, 0);
    assert.equal(dial!.attributes['dialer.dial.result'], 'answered');
    assert.equal(dial!.attributes['dialer.call_id'], lead.call_id);
    assert.equal(dial!.attributes['dialer.provider'], 'PROVIDER_A');
    assert.equal(typeof dial!.attributes['dialer.duration_ms'], 'number');

    // call > the provider's REST request that created the call (sent with the call's traceparent).
    const [creation, ...moreCreations] = childrenOf(root!, 'Twilio call creation');
    assert.equal(moreCreations.length, 0);
    assert.equal(creation!.attributes['http.request.method'], 'POST');
    assert.equal(typeof creation!.attributes['http.response.status_code'], 'number');
    assert.equal(creation!.attributes['http.request.resend_count'], 0);

    // call > turn: the greeting, then the caller's answer.
    const turns = childrenOf(root!, 'turn').sort((x, y) => Number(x.attributes['dialer.turn.index']) - Number(y.attributes['dialer.turn.index']));
    assert.deepEqual(turns.map((t) => t.attributes['dialer.turn.kind']), ['greeting', 'user']);
    assert.equal(byName('turn').length, 2, 'no turn span outside the call span');
    const [greeting, answer] = turns as [ReceivedSpan, ReceivedSpan];
    assert.equal(greeting.attributes['dialer.node'], 'greet');
    assert.equal(greeting.attributes['langfuse.observation.output'], 'Hello Ana! Shall I confirm order A-42?');
    assert.equal(answer.attributes['langfuse.observation.input'], 'Yes, please confirm it. Thank you, that is great!');
    assert.equal(answer.attributes['dialer.node'], 'end_confirmed');
    assert.equal(answer.attributes['dialer.turn.interrupted'], false);
    for (const t of turns) {
      assert.equal(typeof t.attributes['dialer.turn.latency_ms'] === 'number' || t === greeting, true);
      assert.equal(typeof t.attributes['dialer.duration_ms'], 'number');
    }
    // The turn latency on the span is the one the scores summarise.
    assert.ok(Math.abs((answer.attributes['dialer.turn.latency_ms'] as number) - scores.turn_latency_p50_ms!) <= 0.5, 'the turn latency is the p50 of a one-answer call');

    // The greeting: an LLM generation and its sentences spoken; no speech from the caller yet.
    assert.deepEqual(childrenOf(greeting).map((s) => s.name).sort(), ['llm', 'tts', 'tts']);
    // The answer: what the caller said, the LLM calling the function, its hook, the goodbye spoken.
    assert.deepEqual(childrenOf(answer).map((s) => s.name).sort(), ['hook', 'llm', 'stt', 'tts', 'tts']);
    const all = (name: string) => spans.filter((s) => s.name === name);
    for (const name of ['stt', 'llm', 'tts', 'hook']) {
      for (const s of all(name)) assert.ok(turns.some((t) => t.spanId === s.parentSpanId), `${name} is a child of a turn`);
    }

    const [stt] = childrenOf(answer, 'stt');
    assert.equal(stt!.attributes['langfuse.observation.output'], 'Yes, please confirm it. Thank you, that is great!');
    assert.equal(stt!.attributes['dialer.stt.characters'], 'Yes, please confirm it. Thank you, that is great!'.length);
    assert.match(String(stt!.attributes['dialer.stt.service']), /openai/);
    for (const k of ['dialer.stt.speech_ms', 'dialer.stt.final_wait_ms', 'dialer.duration_ms']) assert.equal(typeof stt!.attributes[k], 'number', k);

    const [llm] = childrenOf(answer, 'llm');
    const g = llm!.attributes;
    assert.equal(g['langfuse.observation.type'], 'generation');
    assert.equal(g['gen_ai.operation.name'], 'chat');
    assert.equal(g['gen_ai.request.model'], ai.chatRequests[1]!.body.model);
    assert.equal(g['gen_ai.usage.input_tokens'], 100);
    assert.equal(g['gen_ai.usage.output_tokens'], 20);
    assert.deepEqual(JSON.parse(g['langfuse.observation.usage_details'] as string), { input: 100, output: 20 });
    assert.deepEqual(g['dialer.llm.tool_calls'], ['confirm_order']);
    assert.deepEqual(g['gen_ai.response.finish_reasons'], ['tool_calls']);
    assert.equal(g['dialer.node'], 'greet');
    assert.equal(typeof g['dialer.llm.time_to_first_token_ms'], 'number');
    assert.match(g['langfuse.observation.completion_start_time'] as string, /^\d{4}-\d\d-\d\dT[\d:.]+Z$/);
    assert.equal(JSON.parse(g['langfuse.observation.input'] as string)[0].content, 'You call Ana for Acme. Be brief.');
    const [greetLlm] = childrenOf(greeting, 'llm');
    assert.equal(JSON.parse(greetLlm!.attributes['langfuse.observation.output'] as string).content, 'Hello Ana! Shall I confirm order A-42?');

    const [hook] = childrenOf(answer, 'hook');
    const h = hook!.attributes;
    assert.equal(h['dialer.hook.name'], 'crm');
    assert.equal(h['dialer.hook.function'], 'confirm_order');
    assert.equal(h['http.request.method'], 'POST');
    assert.equal(h['server.address'], '127.0.0.1');
    assert.equal(h['server.port'], hooks.port);
    assert.equal(h['http.response.status_code'], 200);
    assert.equal(h['dialer.hook.attempts'], 1);
    assert.equal(typeof h['dialer.duration_ms'], 'number');

    const goodbye = childrenOf(answer, 'tts').map((s) => s.attributes);
    assert.deepEqual(goodbye.map((t) => t['langfuse.observation.input']).sort(), ['Goodbye!', 'Thank you Ana.']);
    for (const t of [...goodbye, ...childrenOf(greeting, 'tts').map((s) => s.attributes)]) {
      assert.equal(t['dialer.tts.characters'], (t['langfuse.observation.input'] as string).length);
      assert.match(String(t['dialer.tts.service']), /^flite/);
      for (const k of ['dialer.tts.time_to_first_audio_ms', 'dialer.tts.audio_ms', 'dialer.duration_ms']) assert.equal(typeof t[k], 'number', k);
      assert.equal(t['dialer.aborted'], false);
    }
    // Children lie within their parents (the clocks agree).
    for (const s of spans) {
      const parent = spans.find((p) => p.spanId === s.parentSpanId);
      if (parent) assert.ok(s.startMs >= parent.startMs - 1 && s.endMs <= parent.endMs + 1, `${s.name} within ${parent.name}`);
    }
  });

  it('with tracing unconfigured, the call works and nothing is exported', async () => {
    const exported = receiver.requests.length;
    const { server, admin } = await serve(BASE_ENV());
    const { lead } = await callOnce(admin, 'untraced');
    await closeServer(server);
    assert.equal(lead.metaData.trace_id, undefined);
    assert.equal(typeof lead.trace_scores.turn_latency_p50_ms, 'number');
    assert.equal(receiver.requests.length, exported, 'no request reached the OTLP receiver');
  });
});

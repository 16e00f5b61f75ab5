/**
 * The operational surface end to end, on `dialer serve` with the voice engine and the provider
 * emulator: the service callback received by a real local server with its signature;
 * feature flags flipped by the flag system's signed webhook and seen by the next dial
 * (the per-reseller kill switch, voicemail detection, recording upload to an S3 stand-in); and
 * Prometheus /metrics, parsed, moving as calls happen.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { API_PREFIX } from '../../src/app.js';
import { signFlagWebhook } from '../../src/flags/index.js';
import type { RunningServer } from '../../src/server.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { verifyWebhookSignature } from '../../src/webhooks/index.js';
import { client, type Client } from '../helpers/app.js';
import { startOpenAIServer, type OpenAIServer } from '../helpers/openai-server.js';
import { startS3Server, type S3Server } from '../helpers/s3-server.js';
import { freePort } from '../helpers/net.js';
import { startReceiver, type Receiver, type ReceivedRequest } from '../helpers/receiver.js';
import { serveDialer } from '../helpers/serve.js';

const TWILIO = { accountSid: 'AC00000000000000000000000000000003', authToken: 'ops-e2e-token' };
const WEBHOOK_SECRET = 'reporting-secret-0123456789';
const FLAG_SECRET = 'flag-webhook-secret-0123456789';
const METRICS_TOKEN = 'metrics-token-0123456789abcdef';



/** Prometheus text format -> samples; every non-comment line must be `name{labels} value`. */
function parseProm(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (-?[0-9.eE+-]+|NaN|\+Inf|-Inf)$/.exec(line);
    assert.ok(m, `not Prometheus text: ${line}`);
    samples.set(`${m[1]}${m[2] ?? ''}`, Number(m[3]));
  }
  return samples;
}

/** The sum of a metric's samples whose labels include every given pair. */
function sum(samples: Map<string, number>, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const [key, value] of samples) {
    const m = /^([^{]+)(?:\{(.*)\})?$/.exec(key)!;
    if (m[1] !== name) continue;
    const have = m[2] ?? '';
    if (Object.entries(labels).every(([k, v]) => have.includes(`${k}="${v}"`))) total += value;
  }
  return total;
}

let server: RunningServer;
let emulator: Emulator;
let ai: OpenAIServer;
let s3: S3Server;
let receiver: Receiver;
let receiverUrl: string;
let received: ReceivedRequest[] = [];
let admin: Client;
let anon: Client;
let dataDir: string;
let flagFile: string;
let reseller: string;
let killed: string;
/** Every JSON log line the server wrote. */
const logLines: any[] = [];

before(async () => {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  ai = await startOpenAIServer();
  s3 = await startS3Server('ops-recordings');
  emulator = await startEmulator({
    dialerUrl: `${base}${API_PREFIX}`,
    twilio: TWILIO,
    plivo: { authId: 'MAX', authToken: 'x' },
    exotel: { accountSid: 'x', apiKey: 'x', apiToken: 'x' },
  });
  receiver = await startReceiver();
  receiverUrl = receiver.url;
  received = receiver.requests;
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-ops-'));
  flagFile = path.join(dataDir, 'flags.json');
  fs.writeFileSync(flagFile, JSON.stringify({ flags: {} }));
  const env = {
    PORT: String(port),
    HOST: '127.0.0.1',
    DIALER_DATA_DIR: dataDir,
    DIALER_JWT_SECRET: 'ops-secret-ops-secret-ops-secret-ops-01',
    DIALER_ADMIN_EMAIL: 'admin@example.com',
    DIALER_ADMIN_PASSWORD: 'admin-password-1',
    DIALER_POLL_MS: '100',
    LOG_LEVEL: 'silent',
    TWILIO_ACCOUNT_SID: TWILIO.accountSid,
    TWILIO_AUTH_TOKEN: TWILIO.authToken,
    TWILIO_API_URL: emulator.url,
    LLM_BASE_URL: ai.url,
    STT_BASE_URL: ai.url,
    DIALER_WEBHOOK_SECRET: WEBHOOK_SECRET,
    DIALER_SERVICE_CALLBACK_URL: `${receiverUrl}/deployment-callback`,
    DIALER_METRICS_TOKEN: METRICS_TOKEN,
    DIALER_FLAGS_FILE: flagFile,
    DIALER_FLAGS_WEBHOOK_SECRET: FLAG_SECRET,
    // Only the webhook refreshes the flags here, so a refused webhook provably changes nothing.
    DIALER_FLAGS_POLL_SECONDS: '0',
    RECORDINGS_S3_BUCKET: s3.bucket,
    RECORDINGS_S3_ENDPOINT: s3.url,
    AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'secret-example',
  };
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line) logLines.push(JSON.parse(line));
      done();
    },
  });
  ({ server, admin, anon } = await serveDialer(env, pino({ level: 'debug', base: { service: 'dialer' } }, sink)));
  reseller = (await admin.post('/resellers', { name: 'Ops' })).body.id;
  killed = (await admin.post('/resellers', { name: 'Switched off' })).body.id;
  assert.equal((await admin.post('/numbers', { phone_number: '+12125550400', provider: 'PROVIDER_A' })).status, 200);
});

after(async () => {
  await server?.close();
  await emulator?.close();
  await ai?.close();
  await s3?.close();
  await receiver?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function metrics(): Promise<Map<string, number>> {
  const res = await fetch(`${server.url}${API_PREFIX}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
  return parseProm(await res.text());
}

async function flagWebhook(body: string, signature?: string): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (signature !== undefined) headers['x-hub-signature-256'] = signature;
  const res = await fetch(`${server.url}${API_PREFIX}/feature-flags/webhook`, { method: 'POST', headers, body });
  return { status: res.status, body: await res.json() };
}

function writeFlags(flags: Record<string, unknown>): void {
  fs.writeFileSync(flagFile, JSON.stringify({ flags }));
}

const boolFlag = (defaultVariant: 'on' | 'off', targeting?: unknown) => ({
  state: 'ENABLED',
  variants: { on: true, off: false },
  defaultVariant,
  ...(targeting ? { targeting } : {}),
});

async function waitForLead(id: string, done: (lead: any) => boolean, what: string): Promise<any> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const lead = (await admin.get(`/leads/${id}`)).body;
    if (done(lead)) return lead;
    assert.ok(Date.now() < deadline, `${what}: lead still ${lead.status} ${JSON.stringify(lead.metaData)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function template(resellerId: string, name: string): Promise<string> {
  const flow = {
    initial_node: 'greet',
    // The scripted LLM answers requests in order: no speculative replies to use its answers up early.
    turn_taking: { mode: 'vad' },
    nodes: [
      {
        node_name: 'greet',
        task_messages: [{ role: 'system', content: 'Ask {customer_name} to confirm order {order_id}.' }],
        functions: [
          {
            name: 'confirm_order',
            properties: { confirmed: { type: 'boolean' } },
            required: ['confirmed'],
            transition_to: 'done',
            hooks: [{ name: 'crm', http_request: { url: `${receiverUrl}/hook/{order_id}`, method: 'POST', body: { order: '{order_id}' } } }],
          },
        ],
      },
      { node_name: 'done', task_messages: [{ role: 'system', content: 'Say goodbye.' }], pre_actions: [{ type: 'tts_say', text: 'Confirmed. Goodbye!' }, { type: 'end_conversation', outcome: 'confirmed' }] },
    ],
  };
  const res = await admin.post('/templates', { name, reseller_id: resellerId, flow });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.id;
}

describe('metrics', () => {
  it('answers Prometheus text to its own token only', async () => {
    assert.equal((await fetch(`${server.url}${API_PREFIX}/metrics`)).status, 401);
    assert.equal((await fetch(`${server.url}${API_PREFIX}/metrics`, { headers: { authorization: 'Bearer wrong-token-wrong-token' } })).status, 401);
    // A user's login token is not the metrics token.
    assert.equal((await fetch(`${server.url}${API_PREFIX}/metrics`, { headers: { authorization: `Bearer ${admin.token}` } })).status, 401);
    const samples = await metrics();
    assert.ok(sum(samples, 'dialer_http_requests_total') > 0, 'requests are counted');
    assert.ok(samples.has('dialer_leads{status="BACKLOG"}'), 'queue depth by status');
    assert.ok(samples.has('dialer_live_calls'));
    // What waits for the analytics folder, by kind.
    assert.ok(samples.has('dialer_analytics_backlog{kind="rollup_deltas"}'), 'the rollup deltas waiting');
    assert.ok(samples.has('dialer_analytics_backlog{kind="pending_terms"}'), 'the payload terms waiting');
    assert.ok(sum(samples, 'dialer_process_cpu_seconds_total') > 0, 'process metrics');
    // Every garbage-collection pause, with a bucket at the 20 ms from which a caller hears it.
    const pauses = sum(samples, 'dialer_nodejs_gc_duration_seconds_count');
    assert.ok(pauses > 0, 'collections are counted');
    assert.ok(sum(samples, 'dialer_nodejs_gc_duration_seconds_bucket', { le: '0.02' }) <= pauses);
    assert.equal(sum(samples, 'dialer_nodejs_gc_duration_seconds_bucket', { le: '+Inf' }), pauses);
    assert.ok([...samples.keys()].some((k) => k.startsWith('dialer_nodejs_gc_duration_seconds_bucket{le="0.02"')), 'a 20 ms bucket');
  });
});

describe('feature flags', () => {
  it('refuses a webhook with a missing or wrong signature and changes nothing', async () => {
    writeFlags({ 'dialling-enabled': boolFlag('off') });
    const body = JSON.stringify({ flags: { updated: { 'dialling-enabled': { old_value: true, new_value: false } } } });
    const missing = await flagWebhook(body);
    assert.equal(missing.status, 401);
    assert.equal(missing.body.code, 'unauthorized');
    const wrong = await flagWebhook(body, signFlagWebhook('not-the-secret-at-all', body));
    assert.equal(wrong.status, 401);
    // Signed over another body: refused too.
    assert.equal((await flagWebhook(body, signFlagWebhook(FLAG_SECRET, `${body} `))).status, 401);
    assert.deepEqual((await admin.get('/feature-flags')).body.flags, {});
    writeFlags({});
  });

  it('is readable by admins only', async () => {
    assert.equal((await anon.get('/feature-flags')).status, 401);
    const token = (await admin.post('/s2s-token', { name: 'r', role: 'reseller', reseller_id: reseller })).body.token;
    assert.equal((await client(server.app, token).get('/feature-flags')).status, 403);
  });

  it('keeps a reseller switched off from dialling, and a signed webhook switches it back on for the next dial, with voicemail detection off', async () => {
    const tpl = await template(killed, 'killed-confirm');
    await admin.post('/configurations', { reseller_id: killed, template: tpl, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00' });
    writeFlags({ 'dialling-enabled': boolFlag('on', { if: [{ in: [{ var: 'reseller_id' }, [killed]] }, 'off', 'on'] }) });
    const body = '{"event":"flags updated"}';
    const ok = await flagWebhook(body, signFlagWebhook(FLAG_SECRET, body));
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.deepEqual(ok.body, { refreshed: true, changed: ['dialling-enabled'], flags: ['dialling-enabled'] });

    const callee = '+14155550401';
    emulator.script(callee, { answer: 'busy' });
    const pushed = await admin.post('/leads', { request_id: 'killed-1', template: 'killed-confirm', reseller_id: killed, payload: { customer_mobile_number: callee, customer_name: 'Kay', order_id: 'K-1' } });
    assert.equal(pushed.status, 201);
    const id = pushed.body.lead_call_tracker_id;
    // The scheduler looked at it and put it off: still BACKLOG, no attempt, nothing dialled.
    await waitForLead(id, (l) => l.status === 'BACKLOG' && l.attempt_count === 0, 'held');
    const { rows } = await server.db.query<{ held: boolean }>('SELECT next_attempt_at > now() AS held FROM leads WHERE id = $1', [id]);
    const deadline = Date.now() + 10_000;
    while (!(await server.db.query<{ held: boolean }>('SELECT next_attempt_at > now() AS held FROM leads WHERE id = $1', [id])).rows[0]!.held) {
      assert.ok(Date.now() < deadline, `never held: ${JSON.stringify(rows)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(emulator.calls.filter((c) => c.to === callee).length, 0);
    assert.equal((await admin.get(`/leads/${id}`)).body.status, 'BACKLOG');

    writeFlags({ 'dialling-enabled': boolFlag('on'), 'voicemail-detection': boolFlag('on', { if: [{ '==': [{ var: 'reseller_id' }, killed] }, 'off', 'on'] }) });
    const flip = await flagWebhook(body, signFlagWebhook(FLAG_SECRET, body));
    assert.deepEqual(flip.body.changed, ['dialling-enabled', 'voicemail-detection']);
    const call = await emulator.nextCall((c) => c.to === callee, 30_000);
    await waitForLead(id, (l) => l.attempt_count === 1 && l.status !== 'PROCESSING', 'dialled');
    // The dial asked Twilio for no answering-machine detection: the flag, not DIALER_MACHINE_DETECTION.
    const create = call.rest.find((r) => r.method === 'POST')!;
    assert.equal(create.params.MachineDetection, undefined, JSON.stringify(create.params));
    writeFlags({});
    await flagWebhook(body, signFlagWebhook(FLAG_SECRET, body));
  });

  it('answers 422 for a malformed flag file and keeps the flags in force', async () => {
    writeFlags({ 'dialling-enabled': boolFlag('on') });
    const body = '{}';
    assert.equal((await flagWebhook(body, signFlagWebhook(FLAG_SECRET, body))).status, 200);
    fs.writeFileSync(flagFile, '{"flags": {"dialling-enabled": ');
    const bad = await flagWebhook(body, signFlagWebhook(FLAG_SECRET, body));
    assert.equal(bad.status, 422);
    assert.match(bad.body.detail, /not JSON/);
    assert.deepEqual(Object.keys((await admin.get('/feature-flags')).body.flags), ['dialling-enabled']);
    writeFlags({});
    await flagWebhook(body, signFlagWebhook(FLAG_SECRET, body));
  });
});

describe('service callback', () => {
  it('delivers the final conversation state, signed, to the configuration\'s endpoint, records the attempt, and the metrics move', async () => {
    const before = await metrics();
    // Recordings go to the bucket from this call on: the flag, without a restart.
    writeFlags({ 'upload-recordings-to-cloud': boolFlag('on') });
    const body = '{}';
    assert.equal((await flagWebhook(body, signFlagWebhook(FLAG_SECRET, body))).status, 200);

    const tpl = await template(reseller, 'ops-confirm');
    const cfg = await admin.post('/configurations', {
      reseller_id: reseller,
      template: tpl,
      calling_provider: 'PROVIDER_A',
      call_start_time: '00:00',
      call_end_time: '00:00',
      service_callback_url: `${receiverUrl}/configuration-callback`,
    });
    assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
    assert.equal(cfg.body.service_callback_url, `${receiverUrl}/configuration-callback`);

    ai.chat.push({ text: 'Hello Ana, shall I confirm order B-7?' }, { tools: [{ name: 'confirm_order', arguments: { confirmed: true } }] });
    ai.transcripts.push('Yes please, confirm it.');
    const callee = '+14155550402';
    emulator.script(callee, { answer: 'answer', steps: [{ waitForAudio: 15_000 }, { say: 'Yes please, confirm it.' }, { waitForAudio: 15_000 }], maxSeconds: 45 });
    const pushed = await admin.post('/leads', {
      request_id: 'ops-1',
      template: 'ops-confirm',
      reseller_id: reseller,
      payload: { customer_mobile_number: callee, customer_name: 'Ana', order_id: 'B-7', reporting_webhook_url: `${receiverUrl}/reporting` },
    });
    assert.equal(pushed.status, 201);
    const id = pushed.body.lead_call_tracker_id;
    const lead = await waitForLead(id, (l) => l.status === 'FINISHED', 'conversation');
    assert.equal(lead.outcome, 'confirmed', JSON.stringify(lead.metaData));

    // Both notifications arrive (the reporting webhook and the service callback), each signed.
    const deadline = Date.now() + 20_000;
    while (!received.some((r) => r.path === '/configuration-callback') || !received.some((r) => r.path === '/reporting')) {
      assert.ok(Date.now() < deadline, `received: ${received.map((r) => r.path).join(', ')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(!received.some((r) => r.path === '/deployment-callback'), "the configuration's endpoint wins over the deployment's");
    const cb = received.find((r) => r.path === '/configuration-callback')!;
    assert.equal(cb.headers['x-dialer-event'], 'service_callback');
    assert.ok(verifyWebhookSignature(WEBHOOK_SECRET, cb.headers['x-dialer-signature'] as string, cb.raw), 'signed like the reporting webhook');
    assert.equal(received.find((r) => r.path === '/reporting')!.headers['x-dialer-event'], 'reporting');
    const state = cb.body;
    assert.equal(state.event, 'conversation.finished');
    assert.equal(state.leadId, id);
    assert.equal(state.orderId, 'ops-1');
    assert.equal(state.callId, lead.call_id);
    assert.equal(state.outcome, 'confirmed');
    assert.equal(state.status, 'FINISHED');
    assert.equal(state.callEndedBy, 'agent');
    assert.deepEqual(state.nodeTraversal, ['greet', 'done']);
    assert.deepEqual(
      state.transcription.map((t: any) => t.role),
      ['assistant', 'user', 'assistant'],
    );
    assert.equal(state.functionCalls[0].name, 'confirm_order');
    assert.equal(state.functionCalls[0].hooks[0].status, 200);
    assert.deepEqual(state.errors, []);
    assert.equal(state.timings.callInitiatedAt, lead.call_initiated_time);
    assert.equal(state.timings.callEndedAt, lead.call_end_time);
    assert.ok(state.timings.turnLatencyMs.length >= 1);
    assert.deepEqual(state.traceScores, lead.trace_scores);
    assert.equal(state.recordingUrl, lead.recording_url);

    // Recorded with its attempt, beside the reporting webhook.
    const deliveries = (await admin.get(`/leads/${id}/webhooks`)).body.data;
    const service = deliveries.find((d: any) => d.kind === 'service_callback');
    assert.equal(service.status, 'delivered');
    assert.equal(service.url, `${receiverUrl}/configuration-callback`);
    assert.equal(service.attempt_log[0].status_code, 200);
    assert.deepEqual(
      deliveries.map((d: any) => d.kind).sort(),
      ['service_callback', 'success'],
    );

    // The recording went to the bucket (the flag), and is served from there.
    assert.ok(s3.objects.has(`recordings/${lead.call_id}.wav`), [...s3.objects.keys()].join(', '));
    const rec = await fetch(lead.recording_url, { headers: { authorization: `Bearer ${admin.token}` } });
    assert.equal(rec.status, 200);

    // And the counters moved.
    const after = await metrics();
    const delta = (name: string, labels: Record<string, string> = {}) => sum(after, name, labels) - sum(before, name, labels);
    assert.ok(delta('dialer_dials_total', { provider: 'PROVIDER_A' }) >= 1);
    assert.ok(delta('dialer_call_attempts_ended_total', { kind: 'completed' }) >= 1);
    assert.ok(delta('dialer_turn_latency_seconds_count') >= 1);
    assert.ok(delta('dialer_webhook_attempts_total', { kind: 'service_callback', result: 'delivered' }) >= 1);
    assert.ok(delta('dialer_http_requests_total', { route: `${API_PREFIX}/leads`, method: 'POST', status_code: '201' }) >= 1);
    assert.ok(sum(after, 'dialer_leads', { status: 'FINISHED' }) >= 1);

    // Logs: JSON lines; requests carry their request id, and the call's lines its lead and call ids.
    assert.ok(logLines.some((l) => l.reqId && l.msg === 'request completed'), 'request lines carry reqId');
    const callLines = logLines.filter((l) => l.leadId === id);
    assert.ok(callLines.length > 0, 'the call logged');
    assert.ok(callLines.some((l) => l.callId === lead.call_id && l.msg === 'call ended at the provider'), JSON.stringify(callLines));
    writeFlags({});
    await flagWebhook(body, signFlagWebhook(FLAG_SECRET, body));
  });
});

/**
 * Whole calls through each provider's real wire protocols: `dialer serve` (API, scheduler, callback
 * routes, media WebSocket) against the local provider emulator, which places nothing on any
 * network but speaks Twilio's, Exotel's and Plivo's REST APIs, signed callbacks and media streams,
 * with a callee that talks (espeak-ng audio), interrupts, presses keys and hangs up.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { API_PREFIX } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { decodeWav, rms } from '../../src/lib/audio.js';
import { createLogger } from '../../src/lib/logger.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { startEmulator, type CalleeScript, type Emulator } from '../../src/telephony/emulator/index.js';
import { twilioSignature } from '../../src/telephony/twilio/index.js';
import { client, type TestApp } from '../helpers/app.js';
import { buildWorld, type World } from '../helpers/world.js';

const CREDS = {
  twilio: { accountSid: 'AC00000000000000000000000000000001', authToken: 'twilio-auth-token-e2e' },
  plivo: { authId: 'MAE2E0000000000000001', authToken: 'plivo-auth-token-e2e' },
  exotel: { accountSid: 'dialer-e2e', apiKey: 'exotel-key', apiToken: 'exotel-token' },
};
const PROVIDERS = ['PROVIDER_A', 'PROVIDER_B', 'PROVIDER_C'] as const;
type Provider = (typeof PROVIDERS)[number];
const PATH: Record<Provider, string> = { PROVIDER_A: 'provider_a', PROVIDER_B: 'provider_b', PROVIDER_C: 'provider_c' };

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

let server: RunningServer;
let emulator: Emulator;
let t: TestApp;
let w: World;
let dataDir: string;
let base: string;
let seq = 0;

before(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  emulator = await startEmulator({ dialerUrl: base, ...CREDS });
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-e2e-'));
  const env = {
    PORT: String(port),
    HOST: '127.0.0.1',
    DIALER_DATA_DIR: dataDir,
    DIALER_JWT_SECRET: 'e2e-secret-e2e-secret-e2e-secret-012345',
    DIALER_ADMIN_EMAIL: 'admin@example.com',
    DIALER_ADMIN_PASSWORD: 'admin-password-1',
    DIALER_POLL_MS: '100',
    LOG_LEVEL: 'silent',
    TWILIO_ACCOUNT_SID: CREDS.twilio.accountSid,
    TWILIO_AUTH_TOKEN: CREDS.twilio.authToken,
    TWILIO_API_URL: emulator.url,
    PLIVO_AUTH_ID: CREDS.plivo.authId,
    PLIVO_AUTH_TOKEN: CREDS.plivo.authToken,
    PLIVO_API_URL: emulator.url,
    EXOTEL_ACCOUNT_SID: CREDS.exotel.accountSid,
    EXOTEL_API_KEY: CREDS.exotel.apiKey,
    EXOTEL_API_TOKEN: CREDS.exotel.apiToken,
    EXOTEL_API_URL: emulator.url,
    EXOTEL_FLOW_URL: emulator.exotelFlowUrl,
  };
  for (const [k, v] of Object.entries(env)) process.env[k] = v;
  server = await startServer(loadConfig(env), createLogger('silent'));
  const anon = client(server.app);
  const login = await anon.post('/login', { email: env.DIALER_ADMIN_EMAIL, password: env.DIALER_ADMIN_PASSWORD });
  assert.equal(login.status, 200);
  t = {
    app: server.app,
    db: server.db,
    config: loadConfig(env),
    admin: client(server.app, login.body.access_token),
    anon,
    as: (token) => client(server.app, token),
    close: async () => undefined,
  };
  w = await buildWorld(t);
  for (const [i, provider] of PROVIDERS.entries()) {
    const res = await t.admin.post('/numbers', { phone_number: `+1212555010${i}`, provider });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  }
});

after(async () => {
  await server?.close();
  await emulator?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** A template and configuration calling through `provider`. */
async function configure(provider: Provider, extra: Record<string, unknown> = {}): Promise<string> {
  const name = `e2e-${++seq}`;
  const tpl = await w.reseller1.post('/templates', {
    name,
    reseller_id: w.r1,
    flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Greet the customer.' }] }] },
  });
  assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
  const cfg = await w.reseller1.post('/configurations', {
    reseller_id: w.r1,
    template: tpl.body.id,
    calling_provider: provider,
    call_start_time: '00:00',
    call_end_time: '00:00',
    retry_offset: 3600,
    max_retry: 2,
    ...extra,
  });
  assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
  return name;
}

async function push(template: string, callee: string): Promise<string> {
  const res = await w.reseller1.post('/leads', { request_id: `r-${callee}-${seq}`, template, reseller_id: w.r1, payload: { customer_mobile_number: callee } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.lead_call_tracker_id as string;
}

async function settled(leadId: string, timeoutMs = 45_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await w.reseller1.get(`/leads/${leadId}`);
    assert.equal(res.status, 200);
    if (res.body.status === 'FINISHED' || res.body.status === 'RETRY') return res.body;
    assert.ok(Date.now() < deadline, `lead ${leadId} still ${res.body.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const talkative: CalleeScript = {
  answer: 'answer',
  steps: [{ wait: 1200 }, { say: 'Hello? Who is calling?' }, { dtmf: '5' }, { waitForAudio: 10_000 }],
  maxSeconds: 25,
};

describe('a whole call through each provider', () => {
  for (const [i, provider] of PROVIDERS.entries()) {
    it(`${provider}: dialled, answered, audio both ways, barge-in clears playout, hang-up, FINISHED with a playable recording`, async () => {
      const template = await configure(provider);
      const callee = `+1646555100${i}`;
      emulator.script(callee, talkative);
      const leadId = await push(template, callee);
      const call = await emulator.nextCall((c) => c.to === callee, 20_000);
      const lead = await settled(leadId);
      await call.ended;

      assert.equal(lead.status, 'FINISHED');
      assert.equal(lead.outcome, 'conversation_completed');
      assert.equal(lead.call_id, call.requestUuid ?? call.callSid);
      assert.equal(lead.provider, provider);
      assert.ok(lead.call_initiated_time && lead.call_end_time, 'call times set');
      assert.ok(lead.duration_seconds > 0, `duration ${lead.duration_seconds}`);
      const meta = lead.metaData;
      assert.ok(meta.barge_ins >= 1, `barge-ins ${JSON.stringify(meta)}`);
      assert.equal(meta.dtmf, '5');
      assert.equal(meta.call_ended_by, 'agent');
      assert.match(meta.transcription[0].content, /interrupted/, 'the greeting was cut short');

      // What the callee heard: Dialer's speech, a clear while it spoke, marks echoed.
      assert.ok(call.received.audioFrames > 10 && call.received.pcm.length > 8000, `${call.received.audioFrames} audio frames, ${call.received.pcm.length} samples`);
      assert.ok(rms(call.received.pcm) > 300, 'Dialer sent speech');
      assert.ok(call.received.clears.length >= 1, 'barge-in sent a clear');
      assert.ok(call.received.marks.length >= 1, 'marks came back');
      assert.ok(rms(call.sent.pcm) > 100, 'the callee spoke');

      // The recording: both sides, as a WAV served by the API, with ranges.
      assert.ok(lead.recording_url?.endsWith(`/leads/recording/${encodeURIComponent(lead.call_id)}`), lead.recording_url);
      const rec = await fetch(lead.recording_url, { headers: { authorization: `Bearer ${w.reseller1.token}` } });
      assert.equal(rec.status, 200);
      assert.equal(rec.headers.get('content-type'), 'audio/wav');
      const wav = decodeWav(new Uint8Array(await rec.arrayBuffer()));
      assert.equal(wav.sampleRateHz, 8000);
      assert.ok(wav.pcm.length / 8000 > 2, `recording of ${wav.pcm.length / 8000} s`);
      assert.ok(rms(wav.pcm) > 200, 'the recording holds speech');
    });
  }
});

describe('unreached callees', () => {
  const cases: Array<[Provider, CalleeScript['answer'], string, string]> = [
    ['PROVIDER_A', 'busy', 'RETRY', 'busy'],
    ['PROVIDER_C', 'no_answer', 'RETRY', 'no_answer'],
    ['PROVIDER_B', 'busy', 'RETRY', 'busy'],
    ['PROVIDER_A', 'voicemail', 'FINISHED', 'voicemail'],
    ['PROVIDER_C', 'voicemail', 'FINISHED', 'voicemail'],
  ];
  for (const [n, [provider, answer, status, outcome]] of cases.entries()) {
    it(`${provider}: ${answer} -> ${status} ${outcome}`, async () => {
      const template = await configure(provider);
      const callee = `+1646555200${n}`;
      emulator.script(callee, { answer, ringMs: 100 });
      const leadId = await push(template, callee);
      const lead = await settled(leadId);
      assert.equal(lead.status, status);
      if (status === 'FINISHED') assert.equal(lead.outcome, outcome);
      assert.ok(lead.call_id, 'the call id is kept');
      const { rows } = await t.db.query<{ outcome: string; call_id: string }>('SELECT outcome, call_id FROM call_attempts WHERE lead_id = $1', [leadId]);
      assert.deepEqual(rows, [{ outcome, call_id: lead.call_id }]);
    });
  }
});

describe('callbacks and streams that do not belong', () => {
  it('answers 403 unsigned, 400 malformed, 404 unknown call; a replayed final status changes nothing', async () => {
    const url = (p: string) => `${base}${API_PREFIX}/provider_a${p}`;
    const form = (params: Record<string, string>) => new URLSearchParams(params).toString();
    const post = (p: string, params: Record<string, string>, signature?: string) =>
      fetch(url(p), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...(signature ? { 'x-twilio-signature': signature } : {}) },
        body: form(params),
      });
    const sign = (p: string, params: Record<string, string>) => twilioSignature(CREDS.twilio.authToken, url(p), params);

    const status = { CallSid: 'CA0000000000000000000000000000dead', AccountSid: CREDS.twilio.accountSid, CallStatus: 'completed', CallDuration: '3' };
    assert.equal((await post('/callback/status', status)).status, 403);
    assert.equal((await post('/callback/status', status, 'bm90IGEgc2lnbmF0dXJl')).status, 403);
    assert.equal((await post('/callback/status', status, sign('/callback/status', status))).status, 404);
    const malformed = { AccountSid: CREDS.twilio.accountSid, CallStatus: 'no-such-status' };
    assert.equal((await post('/callback/status', malformed, sign('/callback/status', malformed))).status, 400);
    const bad = await fetch(url('/callback/status'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"oops' });
    assert.ok([400, 403].includes(bad.status), String(bad.status));

    // An ended call's status, sent again or out of order (providers retry): 200, and the lead stays as it was.
    const template = await configure('PROVIDER_A');
    const callee = '+16465553001';
    emulator.script(callee, { answer: 'busy', ringMs: 50 });
    const leadId = await push(template, callee);
    const lead = await settled(leadId);
    const replay = { CallSid: lead.call_id, AccountSid: CREDS.twilio.accountSid, CallStatus: 'completed', CallDuration: '30' };
    const replayed = await post('/callback/status', replay, sign('/callback/status', replay));
    assert.equal(replayed.status, 200);
    const again = await w.reseller1.get(`/leads/${leadId}`);
    assert.equal(again.body.outcome, lead.outcome);
    assert.equal(again.body.status, lead.status);
  });

  it('refuses a media WebSocket with a wrong token', async () => {
    const ws = new WebSocket(`${base.replace('http', 'ws')}${API_PREFIX}/provider_a/media/not-a-real-token-0123456789`);
    const outcome = await new Promise<string>((resolve) => {
      ws.on('open', () => resolve('open'));
      ws.on('unexpected-response', (_req, res) => resolve(`refused ${res.statusCode}`));
      ws.on('error', (err) => resolve(`error ${err.message}`));
    });
    assert.equal(outcome, 'refused 403');
  });
});

/**
 * Whole calls through each provider's real wire protocols: `dialer serve` (API, scheduler, callback
 * routes, media WebSocket) against the local provider emulator, which places nothing on any
 * network but speaks Twilio's, Exotel's and Plivo's REST APIs, signed callbacks and media streams,
 * with a callee that talks (espeak-ng audio), interrupts, presses keys and hangs up.
 */
import { OutboundClient } from '../../src/lib/outbound/index.js';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { API_PREFIX } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { decodeWav, rms } from '../../src/lib/audio.js';
import { createLogger } from '../../src/lib/logger.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { startEmulator, type CalleeScript, type Emulator } from '../../src/emulator/index.js';
import { twilioSignature } from '../../src/telephony/twilio/index.js';
import { client, type TestApp } from '../helpers/app.js';
import { buildWorld, type World } from '../helpers/world.js';
import { migratedDataDir } from '../helpers/db.js';
import { freePort } from '../helpers/net.js';

const CREDS = {
  twilio: { accountSid: 'AC00000000000000000000000000000001', authToken: 'twilio-auth-token-e2e' },
  plivo: { authId: 'MAE2E0000000000000001', authToken: 'plivo-auth-token-e2e' },
  exotel: { accountSid: 'dialer-e2e', apiKey: 'exotel-key', apiToken: 'exotel-token' },
};
const PROVIDERS = ['PROVIDER_A', 'PROVIDER_B', 'PROVIDER_C'] as const;
type Provider = (typeof PROVIDERS)[number];
const PATH: Record<Provider, string> = { PROVIDER_A: 'provider_a', PROVIDER_B: 'provider_b', PROVIDER_C: 'provider_c' };


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
  emulator = await startEmulator({ dialerUrl: `${base}${API_PREFIX}`, ...CREDS });
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-e2e-'));
  const env = {
    PORT: String(port),
    HOST: '127.0.0.1',
    DIALER_DATA_DIR: dataDir,
    DIALER_JWT_SECRET: 'e2e-secret-e2e-secret-e2e-secret-012345',
    DIALER_ADMIN_EMAIL: 'admin@example.com',
    DIALER_ADMIN_PASSWORD: 'admin-password-1',
    DIALER_POLL_MS: '100',
    DIALER_AGENT: 'greeter',
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
  // The migrated database is in the data directory already: this file is about calls, not a first start.
  await migratedDataDir(dataDir);
  server = await startServer(loadConfig(env), createLogger('silent'));
  const anon = client(server.app);
  const login = await anon.post('/login', { email: env.DIALER_ADMIN_EMAIL, password: env.DIALER_ADMIN_PASSWORD });
  assert.equal(login.status, 200);
  t = {
    app: server.app,
    db: server.db,
    config: loadConfig(env),
    outbound: new OutboundClient(),
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
  return (await configureFull(provider, extra)).name;
}

async function configureFull(provider: Provider, extra: Record<string, unknown> = {}): Promise<{ name: string; id: string; body: Record<string, unknown> }> {
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
  return { name, id: cfg.body.id, body: cfg.body };
}

async function push(template: string, callee: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await w.reseller1.post('/leads', { request_id: `r-${callee}-${seq}`, template, reseller_id: w.r1, payload: { customer_mobile_number: callee, ...extra } });
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
  // The callee speaks once Dialer's greeting has been heard for a moment (however long the greeting
  // takes to start on a busy machine), so it always cuts the greeting short.
  steps: [{ waitForSpeech: { speakingMs: 400, timeoutMs: 20_000 } }, { say: 'Hello? Who is calling?' }, { dtmf: '5' }, { waitForAudio: 10_000 }],
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

describe('warm transfer', () => {
  for (const [i, provider] of PROVIDERS.entries()) {
    it(`${provider}: pressing 0 puts the callee through to a human; the lead finishes TRANSFERRED`, async () => {
      const template = await configure(provider);
      const callee = `+1646555400${i}`;
      const human = `+1415555019${i}`;
      emulator.script(callee, { answer: 'answer', steps: [{ wait: 600 }, { dtmf: '0' }], maxSeconds: 20 });
      const leadId = await push(template, callee, { transfer_number: human });
      const call = await emulator.nextCall((c) => c.to === callee, 20_000);
      const lead = await settled(leadId);
      await call.ended;
      assert.equal(call.redirectedTo, human);
      assert.equal(lead.status, 'FINISHED');
      assert.equal(lead.outcome, 'TRANSFERRED');
      assert.equal(lead.metaData.transferred_to, human);
      assert.equal(lead.metaData.call_ended_by, 'transfer');
      if (provider !== 'PROVIDER_B') {
        // Twilio and Plivo report the human leg on the transfer callbacks (Exotel only in its final status).
        assert.ok(lead.metaData.transfer_events.length >= 2, JSON.stringify(lead.metaData.transfer_events));
        assert.ok(lead.metaData.transfer_events.every((e: Record<string, unknown>) => !('s' in e)), 'no session token in the record');
      }
    });
  }
});

describe('inbound calls', () => {
  it('answers inside the inbound window with the agent on a new INBOUND lead; outside it redirects or rejects with the message', async () => {
    const ours = '+12125550100'; // PROVIDER_A's number
    const caller = '+16465555001';
    const cfg = await configureFull('PROVIDER_A', { enable_inbound: true, inbound_call_start_time: '00:00', inbound_call_end_time: '00:00', inbound_call_timezone: 'UTC' });
    emulator.script(caller, talkative);
    const call = await emulator.inbound({ provider: 'PROVIDER_A', from: caller, to: ours });
    await call.ended;
    let lead: any;
    for (let i = 0; i < 100; i++) {
      const { rows } = await t.db.query<{ id: string; status: string }>(`SELECT id, status FROM leads WHERE call_id = $1`, [call.callSid]);
      if (rows[0]?.status === 'FINISHED') {
        lead = (await w.reseller1.get(`/leads/${rows[0].id}`)).body;
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(lead, 'an inbound lead finished');
    assert.equal(lead.call_direction, 'INBOUND');
    assert.equal(lead.template, cfg.name);
    assert.equal(lead.payload.customer_mobile_number, caller);
    assert.equal(lead.outcome, 'conversation_completed');
    assert.ok(lead.recording_url, 'recorded');
    assert.ok(call.received.clears.length >= 1 && rms(call.received.pcm) > 300, 'the agent spoke and was interrupted');

    // Outside the window: the block message, then the redirect number.
    const hour = new Date().getUTCHours();
    const closed = { inbound_call_start_time: `${String((hour + 2) % 24).padStart(2, '0')}:00`, inbound_call_end_time: `${String((hour + 3) % 24).padStart(2, '0')}:00` };
    const { created_at: _c, updated_at: _u, ...body } = cfg.body as Record<string, unknown>;
    const put = async (extra: Record<string, unknown>) => {
      const res = await w.reseller1.put(`/configurations/${cfg.id}`, { ...body, ...closed, ...extra });
      assert.equal(res.status, 200, JSON.stringify(res.body));
    };
    await put({ inbound_block_action: 'REDIRECT', inbound_redirect_number: '+14155550123', inbound_block_message: 'We are closed. Connecting you to our office.' });
    const redirected = await emulator.inbound({ provider: 'PROVIDER_A', from: caller, to: ours });
    await redirected.ended;
    assert.deepEqual(redirected.said, ['We are closed. Connecting you to our office.']);
    assert.equal(redirected.redirectedTo, '+14155550123');
    await put({ inbound_block_action: 'REJECT', inbound_redirect_number: null, inbound_block_message: 'We are closed.' });
    const rejected = await emulator.inbound({ provider: 'PROVIDER_C', from: caller, to: '+12125550102' });
    await rejected.ended;
    assert.deepEqual(rejected.said, ['We are closed.']);
    assert.equal(rejected.redirectedTo, undefined);
    assert.equal(rejected.received.audioFrames, 0, 'no agent on a blocked call');
    const { rows } = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM leads WHERE call_direction = 'INBOUND'`);
    assert.equal(rows[0]!.n, 1, 'blocked calls make no lead');
  });

  it('answers 404 for a call to a number that is not ours', async () => {
    const call = await emulator.inbound({ provider: 'PROVIDER_A', from: '+16465555002', to: '+12125559999' });
    await call.ended;
    assert.equal(call.callbacks[0]?.status, 404);
  });
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

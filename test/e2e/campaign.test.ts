/**
 * The call's edges end to end: `dialer serve` with the voice engine (Silero VAD, the local
 * OpenAI-compatible LLM and transcription server scripting replies and function calls, espeak-ng
 * speech) calls the emulator's callees over Twilio's, Plivo's and Exotel's protocols: answering
 * machines with a greeting and a beep, phone menus waiting for keys, a person who opts out, a
 * conversation analysed afterwards, a callee who asks to be called back.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { API_PREFIX } from '../../src/app.js';
import type { RunningServer } from '../../src/server.js';
import { calleeScript, startEmulator, type CalleeKind, type EmulatedCall, type Emulator } from '../../src/emulator/index.js';
import type { Client } from '../helpers/app.js';
import { startOpenAIServer, type OpenAIServer } from '../helpers/openai-server.js';
import { freePort } from '../helpers/net.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { serveDialer } from '../helpers/serve.js';

const CREDS = {
  twilio: { accountSid: 'AC00000000000000000000000000000003', authToken: 'campaign-e2e-token' },
  plivo: { authId: 'MACAMPAIGN0000000001', authToken: 'campaign-plivo-token' },
  exotel: { accountSid: 'campaign-e2e', apiKey: 'exotel-key', apiToken: 'exotel-token' },
};
type Provider = 'PROVIDER_A' | 'PROVIDER_B' | 'PROVIDER_C';

let server: RunningServer;
let emulator: Emulator;
let ai: OpenAIServer;
let hooks: Receiver;
let admin: Client;
let dataDir: string;
let reseller: string;
let seq = 0;

before(async () => {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  ai = await startOpenAIServer();
  emulator = await startEmulator({ dialerUrl: `${base}${API_PREFIX}`, ...CREDS });
  hooks = await startReceiver();
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-campaign-'));
  ({ server, admin } = await serveDialer({
    PORT: String(port),
    HOST: '127.0.0.1',
    DIALER_DATA_DIR: dataDir,
    DIALER_JWT_SECRET: 'campaign-secret-campaign-secret-campaign-1',
    DIALER_ADMIN_EMAIL: 'admin@example.com',
    DIALER_ADMIN_PASSWORD: 'admin-password-1',
    DIALER_POLL_MS: '100',
    DIALER_OUTBOUND_ALLOW: '127.0.0.1',
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
    LLM_BASE_URL: ai.url,
    STT_BASE_URL: ai.url,
  }));
  reseller = (await admin.post('/resellers', { name: 'Campaigns' })).body.id;
  for (const [i, provider] of (['PROVIDER_A', 'PROVIDER_B', 'PROVIDER_C'] as const).entries()) {
    assert.equal((await admin.post('/numbers', { phone_number: `+1212555040${i}`, provider })).status, 200);
  }
});

after(async () => {
  await server?.close();
  await emulator?.close();
  await ai?.close();
  await hooks?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** A template (its flow) and its configuration; returns the template's name. */
async function campaign(provider: Provider, flow: Record<string, unknown>, config: Record<string, unknown> = {}): Promise<string> {
  const name = `camp-${++seq}`;
  // The LLM's replies are scripted one per turn: turn-taking in `vad` mode (no speculative replies
  // that would take a scripted reply ahead of its turn); these tests are about the call's edges.
  const tpl = await admin.post('/templates', { name, reseller_id: reseller, flow: { turn_taking: { mode: 'vad' }, ...flow } });
  assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
  const cfg = await admin.post('/configurations', { reseller_id: reseller, template: tpl.body.id, calling_provider: provider, call_start_time: '00:00', call_end_time: '00:00', max_retry: 0, ...config });
  assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
  return name;
}

async function push(template: string, payload: Record<string, unknown>): Promise<string> {
  const res = await admin.post('/leads', { request_id: `camp-${++seq}`, template, reseller_id: reseller, payload: { reporting_webhook_url: `${hooks.url}/report`, ...payload } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.lead_call_tracker_id;
}

async function settled(id: string, statuses = ['FINISHED', 'RETRY'], timeoutMs = 90_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const lead = (await admin.get(`/leads/${id}`)).body;
    if (statuses.includes(lead.status)) return lead;
    assert.ok(Date.now() < deadline, `lead still ${lead.status}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function webhookOf(leadId: string): Promise<any> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const hit = hooks.requests.find((r) => r.path === '/report' && r.body?.leadId === leadId);
    if (hit) return hit.body;
    assert.ok(Date.now() < deadline, 'no reporting webhook');
    await new Promise((r) => setTimeout(r, 200));
  }
}

const callTo = (to: string): EmulatedCall => emulator.calls.filter((c) => c.to === to).at(-1)!;
let callee = 0;
const number = () => `+1415555${String(2000 + ++callee).padStart(4, '0')}`;
function scripted(kind: CalleeKind): string {
  const n = number();
  emulator.script(n, calleeScript(kind));
  return n;
}

/** How long a callee waits for the agent's words: long, so that a loaded machine's slow turn is not taken for silence. */
const LISTEN_MS = 60_000;

const simpleFlow = { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Say hello to {customer_name}.' }] }] };
const MESSAGE = 'Hi {customer_name}, this is Acme about order {order_id}. Please call us back. Goodbye.';
const GREETING = 'Hi, you have reached Ana. Please leave a message after the tone.';

describe('voicemail drop', () => {
  it('Twilio waits for the end of the greeting (DetectMessageEnd); the machine hears the message after its beep: voicemail_left', async () => {
    const template = await campaign('PROVIDER_A', simpleFlow, { voicemail_action: 'leave_message', voicemail_message: MESSAGE });
    const to = scripted({ kind: 'voicemail', greeting: GREETING });
    const id = await push(template, { customer_mobile_number: to, customer_name: 'Ana', order_id: 'A-42' });
    const lead = await settled(id);
    assert.deepEqual([lead.status, lead.outcome], ['FINISHED', 'voicemail_left'], JSON.stringify(lead.metaData));
    const vm = lead.metaData.voicemail;
    assert.deepEqual([vm.detected_by, vm.waited_for, vm.provider_greeting_end, vm.message_played], ['provider', 'provider', 'beep', true]);
    assert.ok(vm.greeting_ms > 1000, JSON.stringify(vm));
    assert.equal(vm.message, 'Hi Ana, this is Acme about order A-42. Please call us back. Goodbye.');
    // The message, stamped with where it begins in the recording.
    assert.deepEqual(lead.metaData.transcription.map(({ role, content }: { role: string; content: string }) => ({ role, content })), [{ role: 'assistant', content: vm.message }]);
    assert.equal(typeof lead.metaData.transcription[0].at_ms, 'number');
    const call = callTo(to);
    assert.equal(call.rest[0]!.params.MachineDetection, 'DetectMessageEnd');
    assert.equal(call.beepsAtMs.length, 1);
    assert.ok(call.firstVoiceAtMs! >= call.beepsAtMs[0]!, `spoke at ${call.firstVoiceAtMs} ms, the beep ended at ${call.beepsAtMs[0]} ms`);
    assert.ok(call.voicedAfterBeepMs > 1500, `${call.voicedAfterBeepMs} ms of the message heard`);
    assert.equal((await webhookOf(id)).outcome, 'voicemail_left');
  });

  it('Plivo says only "machine": Dialer hears the beep itself and speaks after it', async () => {
    const template = await campaign('PROVIDER_C', simpleFlow, { voicemail_action: 'leave_message', voicemail_message: MESSAGE });
    const to = scripted({ kind: 'voicemail', greeting: GREETING, beep: { hz: 850, ms: 700 } });
    const id = await push(template, { customer_mobile_number: to, customer_name: 'Ana', order_id: 'C-7' });
    const lead = await settled(id);
    assert.equal(lead.outcome, 'voicemail_left', JSON.stringify(lead.metaData));
    const vm = lead.metaData.voicemail;
    assert.deepEqual([vm.detected_by, vm.waited_for, vm.message_played], ['provider', 'beep', true]);
    assert.ok(Math.abs(vm.beep_hz - 850) <= 20, JSON.stringify(vm));
    const call = callTo(to);
    assert.ok(call.firstVoiceAtMs! >= call.beepsAtMs[0]!, `spoke at ${call.firstVoiceAtMs} ms, the beep ended at ${call.beepsAtMs[0]} ms`);
    assert.ok(call.voicedAfterBeepMs > 1500);
  });

  it("Exotel has no detection: the greeting's first words give the machine away, then the beep", async () => {
    const template = await campaign('PROVIDER_B', simpleFlow, { voicemail_action: 'leave_message', voicemail_message: MESSAGE });
    const to = scripted({ kind: 'voicemail', greeting: GREETING });
    ai.chat.push({ text: 'Hello Ana!' });
    ai.transcripts.push(GREETING);
    const id = await push(template, { customer_mobile_number: to, customer_name: 'Ana', order_id: 'B-1' });
    const lead = await settled(id);
    assert.equal(lead.outcome, 'voicemail_left', JSON.stringify(lead.metaData));
    const vm = lead.metaData.voicemail;
    assert.deepEqual([vm.detected_by, vm.waited_for, vm.message_played], ['first_words', 'beep', true]);
    assert.ok(callTo(to).voicedAfterBeepMs > 1500);
  });

  it('a machine that hangs up before the beep gets no message: voicemail', async () => {
    const template = await campaign('PROVIDER_C', simpleFlow, { voicemail_action: 'leave_message', voicemail_message: MESSAGE });
    const to = scripted({ kind: 'voicemail', greeting: GREETING, hangupBeforeBeep: true });
    const id = await push(template, { customer_mobile_number: to, customer_name: 'Ana', order_id: 'C-8' });
    const lead = await settled(id);
    assert.deepEqual([lead.status, lead.outcome], ['FINISHED', 'voicemail'], JSON.stringify(lead.metaData));
    assert.deepEqual([lead.metaData.voicemail.waited_for, lead.metaData.voicemail.message_played], ['hangup', false]);
    assert.equal(callTo(to).voicedAfterBeepMs, 0);
    assert.equal((await webhookOf(id)).outcome, 'voicemail');
  });
});

/** A flow that waits for the callee (a menu speaks first) and may press keys. */
const menuFlow = {
  initial_node: 'menu',
  nodes: [
    {
      node_name: 'menu',
      respond_immediately: false,
      task_messages: [{ role: 'system', content: "You call Acme's line. Press the keys a recording asks for to reach orders." }],
      functions: [{ name: 'send_dtmf', type: 'builtin' }],
    },
  ],
};

describe('keypad navigation', () => {
  it('Twilio: the agent gets through a two-level menu; the keys arrive in order by new call instructions, and the conversation goes on over the new stream', async () => {
    const template = await campaign('PROVIDER_A', menuFlow);
    const to = number();
    emulator.script(to, {
      answer: 'answer',
      maxSeconds: 90,
      steps: [
        { say: 'For sales, press one.' },
        { expectDigits: '1', timeoutMs: 30_000, else: [{ hangup: true }] },
        { say: 'For orders, press three.' },
        { expectDigits: '3', timeoutMs: 30_000, else: [{ hangup: true }] },
        { say: 'Orders desk, how can I help?' },
        { waitForAudio: 20_000 },
        { hangup: true },
      ],
    });
    ai.transcripts.push('For sales, press one.', 'For orders, press three.', 'Orders desk, how can I help?');
    ai.chat.push(
      { tools: [{ name: 'send_dtmf', arguments: { digits: '1' } }] },
      {},
      { tools: [{ name: 'send_dtmf', arguments: { digits: '3' } }] },
      {},
      { text: 'Please check order A-42. Thank you, goodbye.' },
    );
    const id = await push(template, { customer_mobile_number: to, customer_name: 'Ana' });
    const lead = await settled(id);
    const call = callTo(to);
    assert.equal(call.dtmfReceived, '13');
    assert.deepEqual(call.dtmfEvents.map((e) => [e.digits, e.via]), [['1', 'markup'], ['3', 'markup']]);
    assert.deepEqual(lead.metaData.dtmf_sent.map((d: any) => [d.digits, d.by, d.via, d.error ?? null]), [['1', 'agent', 'provider', null], ['3', 'agent', 'provider', null]]);
    const lines = lead.metaData.transcription.map((t: any) => `${t.role}: ${t.content}`);
    assert.deepEqual(lines, [
      'user: For sales, press one.',
      'assistant: (pressed 1)',
      'user: For orders, press three.',
      'assistant: (pressed 3)',
      'user: Orders desk, how can I help?',
      'assistant: Please check order A-42. Thank you, goodbye.',
    ]);
    // The callee heard the last reply over the second replacement stream.
    assert.ok(call.voicedAfterBeepMs === 0 && call.firstVoiceAtMs !== undefined);
    assert.equal(call.markup.filter((m) => m.includes('<Play digits=')).length, 2);
  });

  for (const [provider, via] of [['PROVIDER_C', 'rest'], ['PROVIDER_B', 'inband']] as const) {
    it(`${provider === 'PROVIDER_C' ? 'Plivo' : 'Exotel'}: the menu receives the key (${via === 'rest' ? 'Send Digits request' : 'in-band tones'})`, async () => {
      const template = await campaign(provider, menuFlow);
      const to = scripted({ kind: 'menu', prompt: 'For sales, press two.', keys: '2', then: 'Sales, how can I help?' });
      ai.transcripts.push('For sales, press two.', 'Sales, how can I help?');
      ai.chat.push({ tools: [{ name: 'send_dtmf', arguments: { digits: '2' } }] }, {}, { text: 'Goodbye.' });
      const id = await push(template, { customer_mobile_number: to });
      const lead = await settled(id);
      const call = callTo(to);
      assert.equal(call.dtmfReceived, '2');
      assert.deepEqual(call.dtmfEvents.map((e) => e.via), [via]);
      assert.deepEqual(lead.metaData.dtmf_sent.map((d: any) => [d.digits, d.via]), [['2', via === 'rest' ? 'provider' : 'inband']]);
      assert.ok(lead.metaData.transcription.some((t: any) => t.content === 'Sales, how can I help?'), JSON.stringify(lead.metaData.transcription));
    });
  }
});

describe('opt-out', () => {
  it('the callee asks not to be called again: OPTED_OUT, blacklisted, the webhook says so, and the queued lead for the number is not dialled', async () => {
    const template = await campaign('PROVIDER_A', { initial_node: 'offer', nodes: [{ node_name: 'offer', task_messages: [{ role: 'system', content: 'Offer {customer_name} the upgrade.' }] }] });
    const to = scripted({ kind: 'opt_out', says: 'Please do not call me again.', listenMs: LISTEN_MS });
    ai.chat.push({ text: 'Hi Ana, would you like the upgrade?' }, { tools: [{ name: 'opt_out', arguments: { reason: 'asked not to be called again' } }] }, { text: 'Understood, we will not call you again. Goodbye.' });
    ai.transcripts.push('Please do not call me again.');
    const first = await push(template, { customer_mobile_number: to, customer_name: 'Ana' });
    const queued = await push(template, { customer_mobile_number: to, customer_name: 'Ana' });
    const lead = await settled(first);
    assert.deepEqual([lead.status, lead.outcome], ['FINISHED', 'OPTED_OUT'], JSON.stringify(lead.metaData));
    assert.equal(lead.metaData.opted_out.reason, 'asked not to be called again');
    assert.equal(lead.metaData.transcription.at(-1).content, 'Understood, we will not call you again. Goodbye.');
    const hook = await webhookOf(first);
    assert.equal(hook.optedOut, true);
    assert.equal(hook.outcome, 'OPTED_OUT');
    const listed = (await admin.get(`/blacklist?reseller_id=${reseller}&phone_number=${encodeURIComponent(to)}`)).body.data;
    assert.deepEqual(listed.map((b: any) => [b.lead_id, b.reason]), [[first, 'asked not to be called again']]);
    // Listed at the moment the lead finished (the same statement).
    assert.equal(new Date(listed[0].created_at).getTime(), new Date(lead.call_end_time).getTime());
    const second = await settled(queued, ['FINISHED']);
    assert.deepEqual([second.outcome, second.attempt_count], ['BLACKLISTED', 0]);
    assert.equal(emulator.calls.filter((c) => c.to === to).length, 1);
  });
});

describe('post-call analysis', () => {
  const flow = {
    initial_node: 'ask',
    nodes: [
      {
        node_name: 'ask',
        task_messages: [{ role: 'system', content: 'Ask {customer_name} for a delivery date.' }],
        functions: [{ name: 'date_agreed', transition_to: 'bye' }],
      },
      { node_name: 'bye', task_messages: [], pre_actions: [{ type: 'tts_say', text: 'Thank you, goodbye!' }, { type: 'end_conversation', outcome: 'confirmed' }] },
    ],
    post_call_analysis: {
      summary: true,
      fields: { delivery_date: { type: 'string', format: 'date', description: 'The delivery date agreed' }, interested: { type: 'boolean', description: 'Whether they want it' } },
      success_criteria: 'A delivery date was agreed.',
    },
  };
  const ANALYSIS = { summary: 'Ana chose 14 March.', fields: { delivery_date: '2026-03-14', interested: true }, success: true, reason: 'A date was agreed.' };

  it('fills the fields after the call, validated, into metaData.analysis and the reporting webhook', async () => {
    const template = await campaign('PROVIDER_A', flow);
    const to = scripted({ kind: 'person', says: ['The fourteenth of March, please.'], listenMs: LISTEN_MS });
    ai.transcripts.push('The fourteenth of March, please.');
    ai.chat.push({ text: 'Hi Ana, when shall we deliver?' }, { tools: [{ name: 'date_agreed', arguments: {} }] }, { tools: [{ name: 'record_analysis', arguments: ANALYSIS }] });
    const id = await push(template, { customer_mobile_number: to, customer_name: 'Ana' });
    const lead = await settled(id);
    assert.equal(lead.outcome, 'confirmed');
    assert.deepEqual(lead.metaData.analysis, ANALYSIS);
    assert.deepEqual(lead.metaData.errors, []);
    assert.deepEqual((await webhookOf(id)).analysis, ANALYSIS);
    const request = ai.chatRequests.at(-1)!.body;
    assert.equal(request.tools[0].function.name, 'record_analysis');
    assert.match(request.messages[1].content, /Callee: The fourteenth of March, please\./);
  });

  it('an LLM failure leaves the outcome alone and is recorded', async () => {
    const template = await campaign('PROVIDER_A', flow);
    const to = scripted({ kind: 'person', says: ['The fourteenth of March, please.'], listenMs: LISTEN_MS });
    ai.transcripts.push('The fourteenth of March, please.');
    // The client tries a failing LLM twice: both fail.
    ai.chat.push({ text: 'Hi Ana, when shall we deliver?' }, { tools: [{ name: 'date_agreed', arguments: {} }] }, { status: 500, error: 'model overloaded' }, { status: 500, error: 'model overloaded' });
    const id = await push(template, { customer_mobile_number: to, customer_name: 'Ana' });
    const lead = await settled(id);
    assert.equal(lead.outcome, 'confirmed');
    assert.equal(lead.metaData.analysis, undefined);
    assert.ok(lead.metaData.errors.some((e: string) => e.startsWith('post-call analysis failed: the LLM failed')), JSON.stringify(lead.metaData.errors));
    const hook = await webhookOf(id);
    assert.equal(hook.outcome, 'confirmed');
    assert.equal(hook.analysis, undefined);
  });
});

describe('a requested callback', () => {
  it('is dialled at the time the callee chose', async () => {
    const template = await campaign(
      'PROVIDER_A',
      {
        initial_node: 'talk',
        nodes: [
          {
            node_name: 'talk',
            task_messages: [{ role: 'system', content: 'Offer {customer_name} the upgrade.' }],
            functions: [{ name: 'schedule_callback', type: 'builtin' }, { name: 'accepted', transition_to: 'bye' }],
          },
          { node_name: 'bye', task_messages: [], pre_actions: [{ type: 'end_conversation', outcome: 'confirmed' }] },
        ],
      },
      { max_retry: 2 },
    );
    const to = scripted({ kind: 'person', says: ['Not now, call me back later.'], listenMs: LISTEN_MS });
    const callbackAt = new Date(Date.now() + 30_000);
    ai.transcripts.push('Not now, call me back later.', 'Not now, call me back later.');
    ai.chat.push(
      { text: 'Hi Ana, would you like the upgrade?' },
      { tools: [{ name: 'schedule_callback', arguments: { time: callbackAt.toISOString() } }] },
      { text: 'Sure, I will call you back. Goodbye.' },
      // The second call.
      { text: 'Hi Ana, calling back as promised.' },
      { tools: [{ name: 'accepted', arguments: {} }] },
    );
    const id = await push(template, { customer_mobile_number: to, customer_name: 'Ana' });
    const first = await settled(id);
    assert.deepEqual([first.status, first.outcome], ['RETRY', null], JSON.stringify(first.metaData));
    assert.equal(new Date(first.metaData.callback.at).getTime(), callbackAt.getTime());
    const second = await emulator.nextCall((c) => c.to === to && c !== emulator.calls.find((x) => x.to === to), 90_000);
    assert.ok(Date.now() >= callbackAt.getTime(), 'the second call came at the callback time, not before');
    await second.ended;
    const done = await settled(id, ['FINISHED']);
    assert.deepEqual([done.outcome, done.attempt_count], ['confirmed', 2]);
  });
});

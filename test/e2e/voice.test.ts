/**
 * A template-driven conversation end to end: `dialer serve` with the voice engine (Silero VAD, an
 * OpenAI-compatible LLM and transcription served locally, espeak-ng speech) calls the emulator's
 * callee over Twilio's protocols. The callee speaks real audio; the transcription server answers
 * with the words of each spoken segment; the LLM answers with scripted text and a tool call.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { API_PREFIX } from '../../src/app.js';
import { decodeWav, rms } from '../../src/lib/audio.js';
import type { RunningServer } from '../../src/server.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import type { Client } from '../helpers/app.js';
import { startOpenAIServer, type OpenAIServer } from '../helpers/openai-server.js';
import { freePort } from '../helpers/net.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { serveDialer } from '../helpers/serve.js';

const TWILIO = { accountSid: 'AC00000000000000000000000000000002', authToken: 'voice-e2e-token' };


let server: RunningServer;
let emulator: Emulator;
let ai: OpenAIServer;
let hooks: Receiver;
let admin: Client;
let dataDir: string;

before(async () => {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  ai = await startOpenAIServer();
  emulator = await startEmulator({
    dialerUrl: `${base}${API_PREFIX}`,
    twilio: TWILIO,
    plivo: { authId: 'MAX', authToken: 'x' },
    exotel: { accountSid: 'x', apiKey: 'x', apiToken: 'x' },
  });
  hooks = await startReceiver({ crm: 'updated' });
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-voice-'));
  const env = {
    PORT: String(port),
    HOST: '127.0.0.1',
    DIALER_DATA_DIR: dataDir,
    DIALER_JWT_SECRET: 'voice-secret-voice-secret-voice-secret-01',
    DIALER_ADMIN_EMAIL: 'admin@example.com',
    DIALER_ADMIN_PASSWORD: 'admin-password-1',
    DIALER_POLL_MS: '100',
    LOG_LEVEL: 'silent',
    TWILIO_ACCOUNT_SID: TWILIO.accountSid,
    TWILIO_AUTH_TOKEN: TWILIO.authToken,
    TWILIO_API_URL: emulator.url,
    LLM_BASE_URL: ai.url,
    STT_BASE_URL: ai.url,
  };
  ({ server, admin } = await serveDialer(env));
});

after(async () => {
  await server?.close();
  await emulator?.close();
  await ai?.close();
  await hooks?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('a template-driven call', () => {
  it('greets, hears the answer, calls the function and its hook, ends confirmed, with transcript, nodes, recording, sentiment and trace scores', async () => {
    const health = await admin.get('/health');
    assert.deepEqual({ ready: health.body.calls.ready, agent: health.body.calls.agent }, { ready: true, agent: 'flow' });

    const hookUrl = hooks.url;
    const reseller = (await admin.post('/resellers', { name: 'Voice' })).body.id;
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
              hooks: [{ name: 'crm', http_request: { url: `${hookUrl}/orders/{order_id}`, method: 'POST', body: { order: '{order_id}', confirmed: '{confirmed}' } } }],
            },
          ],
        },
        {
          node_name: 'end_confirmed',
          task_messages: [{ role: 'system', content: 'Thank them.' }],
          pre_actions: [{ type: 'tts_say', text: 'Thank you {customer_name}. Your order is confirmed. Goodbye!' }, { type: 'end_conversation', outcome: 'confirmed' }],
        },
      ],
    };
    const tpl = await admin.post('/templates', { name: 'confirm', reseller_id: reseller, flow });
    assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
    const cfg = await admin.post('/configurations', { reseller_id: reseller, template: tpl.body.id, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00' });
    assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
    assert.equal((await admin.post('/numbers', { phone_number: '+12125550300', provider: 'PROVIDER_A' })).status, 200);

    ai.chat.push({ text: 'Hello Ana! I am calling about your order A-42. Shall I confirm it?' }, { tools: [{ name: 'confirm_order', arguments: { confirmed: true } }] });
    ai.transcripts.push('Yes, please confirm it. Thank you, that is great!');
    const callee = '+14155550300';
    emulator.script(callee, { answer: 'answer', steps: [{ waitForAudio: 15_000 }, { say: 'Yes, please confirm it. Thank you, that is great!' }, { waitForAudio: 15_000 }], maxSeconds: 45 });
    const pushed = await admin.post('/leads', { request_id: 'voice-1', template: 'confirm', reseller_id: reseller, payload: { customer_mobile_number: callee, customer_name: 'Ana', order_id: 'A-42' } });
    assert.equal(pushed.status, 201, JSON.stringify(pushed.body));
    const leadId = pushed.body.lead_call_tracker_id;

    let lead: any;
    const deadline = Date.now() + 60_000;
    for (;;) {
      lead = (await admin.get(`/leads/${leadId}`)).body;
      if (lead.status === 'FINISHED' || lead.status === 'RETRY') break;
      assert.ok(Date.now() < deadline, `lead still ${lead.status}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const meta = lead.metaData;
    assert.equal(lead.status, 'FINISHED', JSON.stringify(meta));
    assert.equal(lead.outcome, 'confirmed', JSON.stringify(meta));
    assert.deepEqual(meta.node_traversal, ['greet', 'end_confirmed']);
    assert.deepEqual(
      meta.transcription.map((t: any) => [t.role, t.content]),
      [
        ['assistant', 'Hello Ana! I am calling about your order A-42. Shall I confirm it?'],
        ['user', 'Yes, please confirm it. Thank you, that is great!'],
        ['assistant', 'Thank you Ana. Your order is confirmed. Goodbye!'],
      ],
    );
    assert.equal(meta.call_ended_by, 'agent');
    assert.deepEqual(meta.errors, []);
    assert.equal(meta.function_calls[0].name, 'confirm_order');
    assert.equal(meta.function_calls[0].hooks[0].status, 200);
    assert.deepEqual(hooks.requests.map((r) => ({ url: r.path, body: r.body })), [{ url: '/orders/A-42', body: { order: 'A-42', confirmed: 'true' } }]);
    // The LLM got the substituted context and the node's tools; the STT got real audio.
    assert.equal(ai.chatRequests[0]!.body.messages[0].content, 'You call Ana for Acme. Be brief.');
    assert.equal(ai.chatRequests[0]!.body.tools[0].function.name, 'confirm_order');
    // ... as the phone line carries it: 8 kHz, not resampled (at least 1 s of it).
    assert.equal(ai.transcriptionRequests[0]!.sampleRateHz, 8000);
    assert.ok(ai.transcriptionRequests[0]!.seconds > 1, 'a spoken segment was transcribed');
    assert.ok(lead.sentiment > 0.6, `sentiment ${lead.sentiment}`);
    assert.ok(lead.trace_scores.turn_latency_p50_ms >= 0, JSON.stringify(lead.trace_scores));
    assert.ok(lead.cost > 0);
    // The callee heard the agent; the recording holds the call.
    const call = emulator.calls.find((c) => c.to === callee)!;
    assert.ok(rms(call.received.pcm) > 300);
    const rec = await fetch(lead.recording_url, { headers: { authorization: `Bearer ${admin.token}` } });
    assert.equal(rec.status, 200);
    const wav = decodeWav(new Uint8Array(await rec.arrayBuffer()));
    assert.ok(wav.pcm.length / 8000 > 4, `${wav.pcm.length / 8000} s recorded`);
    // Each line is placed in the recording: increasing offsets, all within its length.
    const recordedMs = (wav.pcm.length / 8000) * 1000;
    const offsets = meta.transcription.map((t: any) => t.at_ms);
    for (const at of offsets) assert.ok(Number.isInteger(at) && at >= 0 && at < recordedMs, `at_ms ${JSON.stringify(offsets)} within ${recordedMs} ms`);
    for (let i = 1; i < offsets.length; i++) assert.ok(offsets[i] > offsets[i - 1], `increasing at_ms ${JSON.stringify(offsets)}`);
    // The callee began answering after the greeting was queued, and the goodbye came after the answer began.
    assert.ok(offsets[1] - offsets[0] > 1000, `the greeting lasts before the answer: ${JSON.stringify(offsets)}`);
  });
});

describe('a warm transfer (the human is briefed first)', () => {
  let reseller: string;
  let seq = 0;

  /** A template whose one function transfers warm to `human`; the lead's call is placed and waited for. */
  async function call(human: string, warm: Record<string, unknown>, customer: Parameters<Emulator['script']>[1]): Promise<{ lead: any; leadId: string }> {
    if (!reseller) {
      reseller = (await admin.post('/resellers', { name: 'Warm' })).body.id;
      assert.equal((await admin.post('/numbers', { phone_number: '+12125550301', provider: 'PROVIDER_A' })).status, 200);
    }
    const name = `warm-${++seq}`;
    const flow = {
      initial_node: 'help',
      turn_taking: { mode: 'vad' },
      nodes: [
        {
          node_name: 'help',
          role_messages: [{ role: 'system', content: 'You help {customer_name} with order {order_id}.' }],
          task_messages: [{ role: 'system', content: 'Offer help; put them through to a person when they ask.' }],
          functions: [{ name: 'talk_to_human', description: 'Put the caller through to a person', transfer_to_number: human, warm_transfer: warm }],
        },
      ],
    };
    const tpl = await admin.post('/templates', { name, reseller_id: reseller, flow });
    assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
    const cfg = await admin.post('/configurations', { reseller_id: reseller, template: tpl.body.id, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00', service_callback_url: `${hooks.url}/conversations/${name}` });
    assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
    const callee = `+1415555041${seq}`;
    emulator.script(callee, customer);
    const pushed = await admin.post('/leads', { request_id: name, template: name, reseller_id: reseller, payload: { customer_mobile_number: callee, customer_name: 'Ana', order_id: 'A-42' } });
    assert.equal(pushed.status, 201, JSON.stringify(pushed.body));
    const leadId = pushed.body.lead_call_tracker_id;
    let lead: any;
    const deadline = Date.now() + 90_000;
    for (;;) {
      lead = (await admin.get(`/leads/${leadId}`)).body;
      if (lead.status === 'FINISHED' || lead.status === 'RETRY') return { lead, leadId };
      assert.ok(Date.now() < deadline, `lead still ${lead.status}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  it('the human hears the briefing, says yes, and only then is the customer put through to them', async () => {
    const human = '+14155550421';
    emulator.script(human, {
      answer: 'answer',
      steps: [{ waitForAudio: 30_000 }, { say: 'Yes, put them through.', label: 'decision' }, { wait: 300 }, { say: 'Bob here.', label: 'bob' }, { waitForAudio: 20_000 }, { hangup: true }],
      maxSeconds: 60,
    });
    ai.chat.push({ text: 'Hi Ana!' }, { tools: [{ name: 'talk_to_human', arguments: {} }] }, { text: 'Ana wants to change the address of order A-42.' });
    ai.transcripts.push('A person, please.', 'Yes, put them through.');
    const { lead } = await call(human, { hold_message: 'One moment.' }, {
      answer: 'answer',
      steps: [{ waitForAudio: 15_000 }, { say: 'A person, please.' }, { waitForAudio: 15_000 }, { waitForAudio: 30_000 }, { say: 'Hi Bob.', label: 'ana' }, { wait: 1500 }],
      maxSeconds: 60,
    });
    const meta = lead.metaData;
    assert.equal(lead.outcome, 'TRANSFERRED', JSON.stringify(meta));
    assert.equal(meta.call_ended_by, 'transfer');
    assert.equal(meta.transferred_to, human);
    const [warm] = meta.warm_transfers;
    assert.equal(warm.briefing, 'Ana wants to change the address of order A-42.');
    assert.equal(warm.briefing_source, 'llm');
    assert.deepEqual({ decision: warm.decision, via: warm.via, heard: warm.heard }, { decision: 'accepted', via: 'voice', heard: 'Yes, put them through.' });
    assert.deepEqual(warm.events.map((e: any) => e.event), ['dial', 'answered', 'briefed', 'accepted', 'bridged']);
    // The LLM wrote the briefing from the transcript; the customer heard the hold message first.
    assert.match(ai.chatRequests.at(-1)!.body.messages[1].content, /Customer: A person, please\./);
    assert.deepEqual(meta.transcription.at(-1), { role: 'assistant', content: 'One moment.', node: 'help', at_ms: meta.transcription.at(-1).at_ms });
    // What the human's call heard: the briefing before their answer, the customer after it (relayed through Dialer).
    const leg = emulator.calls.find((c) => c.to === human)!;
    const decision = leg.sent.timeline.find((e) => e.label === 'decision')!;
    const before = leg.received.voiced.filter((v) => v.toMs <= decision.fromMs).reduce((ms, v) => ms + v.toMs - v.fromMs, 0);
    assert.ok(before > 2000, `the human heard ${before} ms of briefing before deciding`);
    assert.ok(leg.received.voiced.some((v) => v.fromMs > decision.toMs!), 'the human heard the customer after the bridge');
    // ... and the customer heard the hold message while the human was briefed, then the human (Bob), then answered him.
    const customer = emulator.calls.find((c) => c.to === lead.payload.customer_mobile_number)!;
    const onCustomerLine = (legMs: number) => legMs + leg.streamStartedAt! - customer.streamStartedAt!;
    const bob = leg.sent.timeline.find((e) => e.label === 'bob')!;
    assert.ok(customer.received.voiced.some((v) => v.fromMs >= onCustomerLine(bob.fromMs) - 100), 'the customer heard the human');
    const briefingStart = onCustomerLine(leg.received.voiced[0]!.fromMs);
    assert.ok(customer.received.voiced.some((v) => v.fromMs < briefingStart + 3000 && v.toMs > briefingStart - 3000), 'the customer heard the hold message about when the briefing began');
    assert.equal(customer.sent.timeline.find((e) => e.label === 'ana')!.fromMs > onCustomerLine(bob.fromMs), true);
    assert.equal(meta.transfer_events.at(-1).event, 'bridged');
    // The service callback carries the briefing and the decision.
    const deadline = Date.now() + 20_000;
    while (!hooks.requests.some((r) => r.path === '/conversations/warm-1')) {
      assert.ok(Date.now() < deadline, 'no service callback');
      await new Promise((r) => setTimeout(r, 100));
    }
    const sent = hooks.requests.find((r) => r.path === '/conversations/warm-1')!.body as any;
    assert.deepEqual(
      { ...sent.warmTransfers[0], events: sent.warmTransfers[0].events.length },
      { to: human, briefing: warm.briefing, briefingSource: 'llm', decision: 'accepted', decidedBy: 'voice', heard: 'Yes, put them through.', callbackAt: null, events: 5 },
    );
    assert.deepEqual(meta.errors, []);
  });

  it('a human who declines (key 2) returns the call to the agent, which tells the customer and goes on', async () => {
    const human = '+14155550422';
    emulator.script(human, { answer: 'answer', steps: [{ waitForAudio: 30_000 }, { dtmf: '2' }, { wait: 5000 }], maxSeconds: 30 });
    ai.chat.push({ text: 'Hi Ana!' }, { tools: [{ name: 'talk_to_human', arguments: {} }] }, { text: 'Of course. What is the new address?' });
    ai.transcripts.push('A person, please.', 'Then you change it.');
    const { lead } = await call(human, { briefing: '{customer_name} asks about order {order_id}.', hold_message: 'One moment.', declined_message: 'My colleague is busy, so I will help you myself.' }, {
      answer: 'answer',
      steps: [{ waitForAudio: 15_000 }, { say: 'A person, please.' }, { waitForAudio: 15_000 }, { waitForAudio: 30_000 }, { say: 'Then you change it.' }, { waitForAudio: 15_000 }, { hangup: true }],
      maxSeconds: 60,
    });
    const meta = lead.metaData;
    assert.equal(lead.status, 'FINISHED', JSON.stringify(meta));
    assert.notEqual(lead.outcome, 'TRANSFERRED');
    const [warm] = meta.warm_transfers;
    assert.deepEqual({ decision: warm.decision, via: warm.via, briefing: warm.briefing, source: warm.briefing_source }, { decision: 'declined', via: 'key', briefing: 'Ana asks about order A-42.', source: 'template' });
    assert.deepEqual(warm.events.map((e: any) => e.event), ['dial', 'answered', 'briefed', 'declined']);
    // The agent told the customer and kept talking with them.
    const said = meta.transcription.map((l: any) => `${l.role}: ${l.content}`);
    const declinedAt = said.indexOf('assistant: My colleague is busy, so I will help you myself.');
    assert.ok(declinedAt > 0, JSON.stringify(said));
    assert.deepEqual(said.slice(declinedAt + 1), ['user: Then you change it.', 'assistant: Of course. What is the new address?']);
    assert.equal(meta.call_ended_by, 'customer');
    // The human's leg was hung up by Dialer.
    const leg = emulator.calls.find((c) => c.to === human)!;
    await leg.ended;
    assert.equal(leg.dtmfReceived, '');
  });

  it('nobody answers: the agent tells the customer and the lead is called back at the set time', async () => {
    const human = '+14155550423';
    emulator.script(human, { answer: 'no_answer', ringMs: 200 });
    ai.chat.push({ text: 'Hi Ana!' }, { tools: [{ name: 'talk_to_human', arguments: {} }] });
    ai.transcripts.push('A person, please.');
    const started = Date.now();
    const { lead, leadId } = await call(human, { callback_after_minutes: 30 }, {
      answer: 'answer',
      steps: [{ waitForAudio: 15_000 }, { say: 'A person, please.' }, { waitForAudio: 30_000 }, { waitForAudio: 30_000 }],
      maxSeconds: 60,
    });
    const meta = lead.metaData;
    assert.equal(lead.status, 'RETRY', JSON.stringify(meta));
    const [warm] = meta.warm_transfers;
    assert.equal(warm.decision, 'no_answer');
    assert.deepEqual(warm.events.map((e: any) => e.event), ['dial', 'no_answer']);
    assert.equal(warm.briefing_source, 'llm');
    assert.equal(meta.callback.at, warm.callback_at);
    assert.ok(meta.transcription.some((l: any) => l.content === 'I am sorry, nobody is available right now. We will call you back soon. Goodbye!'));
    const { rows } = await server.db.query<{ status: string; next_attempt_at: Date }>('SELECT status, next_attempt_at FROM leads WHERE id = $1', [leadId]);
    const dueInMinutes = (rows[0]!.next_attempt_at.getTime() - started) / 60_000;
    assert.equal(rows[0]!.status, 'RETRY');
    assert.ok(dueInMinutes > 29 && dueInMinutes < 32, `called back in ${dueInMinutes} minutes`);
  });
});

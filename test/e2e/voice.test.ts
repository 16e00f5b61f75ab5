/**
 * A template-driven conversation end to end: `dialer serve` with the voice engine (Silero VAD, an
 * OpenAI-compatible LLM, transcription and speech served locally, each line's voice named) calls the emulator's
 * callee over Twilio's protocols. The callee speaks real audio; the transcription server answers
 * with the words of each spoken segment; the LLM answers with scripted text and a tool call.
 * A second call switches from English to Spanish mid-call.
 * A third call runs on the streaming services instead: Cartesia's voice and AssemblyAI's
 * speech-to-text, each a local server speaking its WebSocket protocol; and a third Dialer hears and
 * speaks through Azure Speech's protocols (a local server speaking them). On the streaming Dialer,
 * Deepgram stands behind AssemblyAI (STT_FALLBACK): a call whose AssemblyAI socket breaks mid-call
 * is heard on through Deepgram.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { API_PREFIX } from '../../src/app.js';
import { decodeWav, rms } from '../../src/lib/audio.js';
import type { RunningServer } from '../../src/server.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import type { Client } from '../helpers/app.js';
import { startAssemblyAiServer, type AssemblyAiServer } from '../helpers/assemblyai-server.js';
import { startDeepgramServer, type DeepgramServer } from '../helpers/deepgram-server.js';
import { startCartesiaServer, type CartesiaServer } from '../helpers/cartesia-server.js';
import { AZURE_STT_PATH, AZURE_TTS_PATH, startAzureSpeechServer, type AzureSpeechServer } from '../helpers/azure-speech-server.js';
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
/** The second Dialer, on the streaming services, with its emulator and their local servers. */
let streaming!: { server: RunningServer; admin: Client; emulator: Emulator; cartesia: CartesiaServer; assembly: AssemblyAiServer; deepgram: DeepgramServer; dataDir: string };
/** What the streaming Dialer logged at warn and above. */
const streamingLog: Array<Record<string, unknown>> = [];

/** An emulator calling back the Dialer at `port`. */
const emulatorFor = (port: number) =>
  startEmulator({
    dialerUrl: `http://127.0.0.1:${port}${API_PREFIX}`,
    twilio: TWILIO,
    plivo: { authId: 'MAX', authToken: 'x' },
    exotel: { accountSid: 'x', apiKey: 'x', apiToken: 'x' },
  });

/** `dialer serve` at `port` on its own database in `dir`, placing calls through `emu` with the local LLM. */
const dialerEnv = (port: number, dir: string, emu: Emulator) => ({
  PORT: String(port),
  HOST: '127.0.0.1',
  DIALER_DATA_DIR: dir,
  DIALER_JWT_SECRET: 'voice-secret-voice-secret-voice-secret-01',
  DIALER_ADMIN_EMAIL: 'admin@example.com',
  DIALER_ADMIN_PASSWORD: 'admin-password-1',
  DIALER_POLL_MS: '100',
  LOG_LEVEL: 'silent',
  TWILIO_ACCOUNT_SID: TWILIO.accountSid,
  TWILIO_AUTH_TOKEN: TWILIO.authToken,
  TWILIO_API_URL: emu.url,
  LLM_BASE_URL: ai.url,
});

/** A reseller with the `confirm` template (greet, confirm_order -> end_confirmed), its configuration and a caller ID on Twilio. */
async function confirmTemplate(client: Client, hookUrl?: string): Promise<string> {
  const reseller = (await client.post('/resellers', { name: 'Voice' })).body.id;
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
            ...(hookUrl ? { hooks: [{ name: 'crm', http_request: { url: `${hookUrl}/orders/{order_id}`, method: 'POST', body: { order: '{order_id}', confirmed: '{confirmed}' } } }] } : {}),
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
  const tpl = await client.post('/templates', { name: 'confirm', reseller_id: reseller, flow });
  assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
  const cfg = await client.post('/configurations', { reseller_id: reseller, template: tpl.body.id, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00' });
  assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
  assert.equal((await client.post('/numbers', { phone_number: '+12125550300', provider: 'PROVIDER_A' })).status, 200);
  return reseller;
}

/** The lead once it is finished (or to be retried). */
async function settled(client: Client, leadId: string): Promise<any> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const lead = (await client.get(`/leads/${leadId}`)).body;
    if (lead.status === 'FINISHED' || lead.status === 'RETRY') return lead;
    assert.ok(Date.now() < deadline, `lead still ${lead.status}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

before(async () => {
  const port = await freePort();
  ai = await startOpenAIServer();
  emulator = await emulatorFor(port);
  hooks = await startReceiver({ crm: 'updated' });
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-voice-'));
  // One after the other: started at once on a busy machine, a start's plugins may outlast their timeout.
  // Hosted voices (served by the local server, each request naming its voice): a language's voice is seen.
  const first = await serveDialer({ ...dialerEnv(port, dataDir, emulator), STT_BASE_URL: ai.url, TTS_PROVIDER: 'openai', TTS_BASE_URL: ai.url });
  const streamingPort = await freePort();
  const s = {
    emulator: await emulatorFor(streamingPort),
    cartesia: await startCartesiaServer('sk-cartesia'),
    assembly: await startAssemblyAiServer('aai-key'),
    deepgram: await startDeepgramServer('dg-key'),
    dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-voice-streaming-')),
  };
  const second = await serveDialer({
    ...dialerEnv(streamingPort, s.dataDir, s.emulator),
    TTS_PROVIDER: 'cartesia',
    CARTESIA_API_KEY: 'sk-cartesia',
    CARTESIA_VOICE_ID: 'voice-cartesia',
    CARTESIA_URL: s.cartesia.url,
    STT_PROVIDER: 'assemblyai',
    ASSEMBLYAI_API_KEY: 'aai-key',
    ASSEMBLYAI_URL: s.assembly.url,
    STT_FALLBACK: 'deepgram',
    DEEPGRAM_API_KEY: 'dg-key',
    DEEPGRAM_URL: s.deepgram.url,
  }, pino({ level: 'warn' }, new Writable({ write: (chunk, _enc, done) => (streamingLog.push(JSON.parse(String(chunk))), done()) })));
  ({ server, admin } = first);
  streaming = { ...s, server: second.server, admin: second.admin };
});

after(async () => {
  await server?.close();
  await streaming?.server.close();
  await emulator?.close();
  await streaming?.emulator.close();
  await streaming?.cartesia.close();
  await streaming?.assembly.close();
  await streaming?.deepgram.close();
  await ai?.close();
  await hooks?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
  if (streaming) fs.rmSync(streaming.dataDir, { recursive: true, force: true });
});

describe('a template-driven call', () => {
  it('greets, hears the answer, calls the function and its hook, ends confirmed, with transcript, nodes, recording, sentiment and trace scores', async () => {
    const health = await admin.get('/health');
    assert.deepEqual({ ready: health.body.calls.ready, agent: health.body.calls.agent }, { ready: true, agent: 'flow' });

    const reseller = await confirmTemplate(admin, hooks.url);

    ai.chat.push({ text: 'Hello Ana! I am calling about your order A-42. Shall I confirm it?' }, { tools: [{ name: 'confirm_order', arguments: { confirmed: true } }] });
    ai.transcripts.push('Yes, please confirm it. Thank you, that is great!');
    const callee = '+14155550300';
    emulator.script(callee, { answer: 'answer', steps: [{ waitForAudio: 15_000 }, { say: 'Yes, please confirm it. Thank you, that is great!' }, { waitForAudio: 15_000 }], maxSeconds: 45 });
    const pushed = await admin.post('/leads', { request_id: 'voice-1', template: 'confirm', reseller_id: reseller, payload: { customer_mobile_number: callee, customer_name: 'Ana', order_id: 'A-42' } });
    assert.equal(pushed.status, 201, JSON.stringify(pushed.body));
    const leadId = pushed.body.lead_call_tracker_id;

    const lead = await settled(admin, leadId);
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

  it('switches from English to Spanish mid-call: the speech-to-text language, the voice and the LLM instruction follow; the transcript marks each line', async () => {
    const reseller = (await admin.post('/resellers', { name: 'Languages' })).body.id;
    const flow = {
      initial_node: 'talk',
      turn_taking: { mode: 'vad' },
      nodes: [
        {
          node_name: 'talk',
          role_messages: [{ role: 'system', content: 'You call {customer_name} for Acme about a delivery.' }],
          task_messages: [{ role: 'system', content: 'Confirm the delivery on Friday.' }],
          functions: [{ name: 'switch_language', type: 'builtin' }],
        },
      ],
    };
    const agent = { languages: ['en-US', 'es-ES'], language_voices: { 'es-ES': 'openai:nova' } };
    // A language the template does not declare is refused when it is saved.
    const refused = await admin.post('/templates', { name: 'languages-bad', reseller_id: reseller, flow, agent: { ...agent, language_voices: { 'fr-FR': 'openai:nova' } } });
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.match(refused.body.detail, /\/agent\/language_voices\/fr-FR "fr-FR" is not one of the template's languages/);
    const tpl = await admin.post('/templates', { name: 'languages', reseller_id: reseller, flow, agent });
    assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
    assert.deepEqual(tpl.body.agent, agent);
    await admin.post('/configurations', { reseller_id: reseller, template: tpl.body.id, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00' });
    await admin.post('/numbers', { phone_number: '+12125550301', provider: 'PROVIDER_A' });

    const GREETING = 'Hello Ana! Your delivery is on Friday. Does that suit you?';
    const SPANISH = 'Claro, Ana. Su entrega es el viernes. ¿Le parece bien?';
    const GOODBYE = 'Perfecto. Hasta luego.';
    ai.chat.push({ text: GREETING }, { tools: [{ name: 'switch_language', arguments: { language: 'es-ES' } }] }, { text: SPANISH }, { text: GOODBYE });
    ai.transcripts.push('Prefiero hablar en español, por favor.', 'Sí, perfecto, gracias.');
    const chats = ai.chatRequests.length;
    const segments = ai.transcriptionRequests.length;
    const spoken = ai.speechRequests.length;
    const callee = '+14155550301';
    emulator.script(callee, {
      answer: 'answer',
      steps: [{ waitForAudio: 15_000 }, { say: 'Prefiero hablar en español, por favor.' }, { waitForAudio: 15_000 }, { say: 'Sí, perfecto, gracias.' }, { waitForAudio: 15_000 }, { waitForQuiet: { quietMs: 1000, timeoutMs: 20_000 } }, { hangup: true }],
      maxSeconds: 60,
    });
    const pushed = await admin.post('/leads', { request_id: 'voice-languages', template: 'languages', reseller_id: reseller, payload: { customer_mobile_number: callee, customer_name: 'Ana' } });
    assert.equal(pushed.status, 201, JSON.stringify(pushed.body));
    let lead: any;
    for (const deadline = Date.now() + 60_000; ; ) {
      lead = (await admin.get(`/leads/${pushed.body.lead_call_tracker_id}`)).body;
      if (lead.status === 'FINISHED' || lead.status === 'RETRY') break;
      assert.ok(Date.now() < deadline, `lead still ${lead.status}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const meta = lead.metaData;
    assert.equal(lead.status, 'FINISHED', JSON.stringify(meta));
    assert.deepEqual(meta.errors, []);
    // Each line carries the language it was said in: the request for Spanish was heard in English.
    assert.deepEqual(
      meta.transcription.map((t: any) => [t.role, t.content, t.language]),
      [
        ['assistant', GREETING, 'en-US'],
        ['user', 'Prefiero hablar en español, por favor.', 'en-US'],
        ['assistant', SPANISH, 'es-ES'],
        ['user', 'Sí, perfecto, gracias.', 'es-ES'],
        ['assistant', GOODBYE, 'es-ES'],
      ],
    );
    assert.deepEqual(meta.language_switches.map((s: any) => [s.from, s.to, s.by]), [['en-US', 'es-ES', 'function']]);
    // The speech-to-text was told each segment's language: English, then Spanish.
    assert.deepEqual(ai.transcriptionRequests.slice(segments).map((r) => r.language), ['en', 'es']);
    // The voice: the template's (the service default) in English, the Spanish one after the switch.
    const voices = ai.speechRequests.slice(spoken).map((r) => [r.input, r.voice]);
    const english = voices.filter(([input]) => GREETING.includes(input!));
    const spanish = voices.filter(([input]) => SPANISH.includes(input!) || GOODBYE.includes(input!));
    assert.ok(english.length > 0 && english.every(([, v]) => v === 'alloy'), JSON.stringify(voices));
    assert.ok(spanish.length > 0 && spanish.every(([, v]) => v === 'nova'), JSON.stringify(voices));
    // The LLM was told to speak English, offered switch_language with the declared languages, then told to speak Spanish.
    const requests = ai.chatRequests.slice(chats).map((r) => r.body);
    const instruction = (body: any) => body.messages.filter((m: any) => m.role === 'system').map((m: any) => m.content).find((c: string) => c.startsWith('Speak '));
    assert.match(instruction(requests[0]), /^Speak English \(en-US\)/);
    assert.match(requests[1].tools.find((t: any) => t.function.name === 'switch_language').function.description, /English \(en-US\), Spanish \(es-ES\)/);
    assert.match(instruction(requests[2]), /^Speak Spanish \(es-ES\)/);
    assert.match(instruction(requests[3]), /^Speak Spanish \(es-ES\)/);
  });
});

describe('a call on the streaming services', () => {
  /** The streaming Dialer's reseller with the `confirm` template (made once: its caller ID may be added once). */
  let made: Promise<string> | undefined;
  const streamingReseller = () => (made ??= confirmTemplate(streaming.admin));

  it('speaks with Cartesia, hears the caller through AssemblyAI, and ends confirmed with both sides in the transcript', async () => {
    const { admin: client, emulator: emu, cartesia, assembly } = streaming;
    const reseller = await streamingReseller();
    const greeting = 'Hello Ben! I am calling about your order B-7. Shall I confirm it?';
    const answer = 'Yes, please confirm it.';
    ai.chat.push({ text: greeting }, { tools: [{ name: 'confirm_order', arguments: { confirmed: true } }] });
    assembly.transcripts.push(answer);
    const callee = '+14155550301';
    emu.script(callee, { answer: 'answer', steps: [{ waitForAudio: 15_000 }, { say: answer }, { waitForAudio: 15_000 }], maxSeconds: 45 });
    const pushed = await client.post('/leads', { request_id: 'voice-streaming', template: 'confirm', reseller_id: reseller, payload: { customer_mobile_number: callee, customer_name: 'Ben', order_id: 'B-7' } });
    assert.equal(pushed.status, 201, JSON.stringify(pushed.body));

    const lead = await settled(client, pushed.body.lead_call_tracker_id);
    const meta = lead.metaData;
    assert.equal(lead.status, 'FINISHED', JSON.stringify(meta));
    assert.equal(lead.outcome, 'confirmed', JSON.stringify(meta));
    assert.deepEqual(meta.errors, []);
    const goodbye = 'Thank you Ben. Your order is confirmed. Goodbye!';
    assert.deepEqual(
      meta.transcription.map((t: any) => [t.role, t.content]),
      [
        ['assistant', greeting],
        ['user', answer],
        ['assistant', goodbye],
      ],
    );
    // The agent spoke through Cartesia (a context per sentence, its voice), and the callee heard that speech.
    assert.equal(cartesia.requests.map((r) => r.transcript.trim()).join(' '), `${greeting} ${goodbye}`);
    assert.deepEqual(new Set(cartesia.requests.map((r) => r.voice.id)), new Set(['voice-cartesia']));
    const call = emu.calls.find((c) => c.to === callee)!;
    assert.ok(rms(call.received.pcm) > 300, 'the callee heard speech');
    // The caller's words came through AssemblyAI: the line's 8 kHz streamed as it came, the segment's end forced the turn.
    const stream = assembly.streams[0]!;
    assert.equal(stream.query.sample_rate, '8000');
    assert.ok(stream.audioBytes / 16_000 > 1, `${stream.audioBytes / 16_000} s streamed`);
    assert.deepEqual(stream.messages.at(0), { type: 'ForceEndpoint' });
  });

  it("AssemblyAI's socket breaks mid-call and its retry is refused (503): Deepgram (STT_FALLBACK) hears the rest; the call ends confirmed and records the switch", async () => {
    const { admin: client, emulator: emu, assembly, deepgram } = streaming;
    const reseller = await streamingReseller();
    const greeting = 'Hello Cy! I am calling about your order C-9. Shall I confirm it?';
    const repeat = 'Order C-9 is the blue chair. Shall I confirm it?';
    ai.chat.push({ text: greeting }, { text: repeat }, { tools: [{ name: 'confirm_order', arguments: { confirmed: true } }] });
    // AssemblyAI hears the first answer, then its socket breaks and it refuses the reconnection.
    assembly.transcripts.push('Which order is that?');
    assembly.dropAfterTurn = 1011;
    assembly.refuseAfterDrop = 503;
    deepgram.transcripts.push('Yes, please confirm it.');
    const assemblyStreams = assembly.streams.length;
    const callee = '+14155550320';
    emu.script(callee, {
      answer: 'answer',
      steps: [{ waitForAudio: 15_000 }, { say: 'Which order is that?' }, { waitForAudio: 15_000 }, { say: 'Yes, please confirm it.' }, { waitForAudio: 15_000 }],
      maxSeconds: 45,
    });
    let lead: any;
    try {
      const pushed = await client.post('/leads', {
        request_id: 'voice-stt-fallback',
        template: 'confirm',
        reseller_id: reseller,
        payload: { customer_mobile_number: callee, customer_name: 'Cy', order_id: 'C-9', reporting_webhook_url: `${hooks.url}/reports/stt-fallback` },
      });
      assert.equal(pushed.status, 201, JSON.stringify(pushed.body));
      lead = await settled(client, pushed.body.lead_call_tracker_id);
    } finally {
      assembly.dropAfterTurn = assembly.refuseAfterDrop = assembly.refuse = undefined;
    }
    const meta = lead.metaData;
    assert.equal(lead.outcome, 'confirmed', JSON.stringify(meta));
    assert.deepEqual(meta.errors, []);
    assert.deepEqual(
      meta.transcription.map((t: any) => [t.role, t.content]),
      [
        ['assistant', greeting],
        ['user', 'Which order is that?'],
        ['assistant', repeat],
        ['user', 'Yes, please confirm it.'],
        ['assistant', 'Thank you Cy. Your order is confirmed. Goodbye!'],
      ],
    );
    // The switch is in the call record: when (between the two answers), from which service to which, and why.
    const fallback = meta.stt_fallback;
    assert.deepEqual({ from: fallback.from, to: fallback.to }, { from: 'assemblyai', to: 'deepgram' });
    assert.match(fallback.reason, /assemblyai: refused the stream: HTTP 503/);
    assert.ok(!Number.isNaN(Date.parse(fallback.at)));
    assert.ok(fallback.at_ms > meta.transcription[1].at_ms && fallback.at_ms < meta.transcription[3].at_ms, JSON.stringify({ fallback, transcription: meta.transcription }));
    // One AssemblyAI stream (its reconnection was refused), then one Deepgram stream at the line's rate that finalized the second answer.
    assert.equal(assembly.streams.length, assemblyStreams + 1);
    assert.equal(deepgram.streams.length, 1);
    assert.equal(deepgram.streams[0]!.sample_rate, '8000');
    // ... and in the log.
    const line = streamingLog.find((l) => l.msg === 'speech-to-text fell back to its second service');
    assert.ok(line, JSON.stringify(streamingLog.map((l) => l.msg)));
    assert.deepEqual({ from: line.from, to: line.to, reason: line.reason }, { from: 'assemblyai', to: 'deepgram', reason: fallback.reason });
    // ... and in the reporting webhook.
    const deadline = Date.now() + 30_000;
    while (!hooks.requests.some((r) => r.path === '/reports/stt-fallback')) {
      assert.ok(Date.now() < deadline, 'no reporting webhook');
      await new Promise((r) => setTimeout(r, 100));
    }
    const report = hooks.requests.find((r) => r.path === '/reports/stt-fallback')!.body as any;
    assert.equal(report.outcome, 'confirmed');
    assert.deepEqual(report.sttFallback, { at: fallback.at, atMs: fallback.at_ms, from: 'assemblyai', to: 'deepgram', reason: fallback.reason });
  });
});

describe('a call heard and spoken through Azure Speech', () => {
  let azureServer: RunningServer;
  let azureEmulator: Emulator;
  let azure: AzureSpeechServer;
  let azureAdmin: Client;
  let azureDataDir: string;

  before(async () => {
    const port = await freePort();
    azure = await startAzureSpeechServer('azure-e2e-key');
    azureEmulator = await emulatorFor(port);
    azureDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-azure-'));
    ({ server: azureServer, admin: azureAdmin } = await serveDialer({
      ...dialerEnv(port, azureDataDir, azureEmulator),
      STT_PROVIDER: 'azure',
      TTS_PROVIDER: 'azure',
      AZURE_SPEECH_KEY: 'azure-e2e-key',
      AZURE_SPEECH_STT_URL: `${azure.wsUrl}${AZURE_STT_PATH}`,
      AZURE_SPEECH_TTS_URL: `${azure.url}${AZURE_TTS_PATH}`,
    }));
  });

  after(async () => {
    await azureServer?.close();
    await azureEmulator?.close();
    await azure?.close();
    fs.rmSync(azureDataDir, { recursive: true, force: true });
  });

  it('greets in the Azure voice, hears the answer over the streaming protocol, confirms and says goodbye', async () => {
    const reseller = (await azureAdmin.post('/resellers', { name: 'Azure' })).body.id;
    const flow = {
      initial_node: 'greet',
      turn_taking: { mode: 'vad' },
      nodes: [
        {
          node_name: 'greet',
          task_messages: [{ role: 'system', content: 'Ask {customer_name} to confirm the order.' }],
          functions: [{ name: 'confirm_order', properties: { confirmed: { type: 'boolean' } }, required: ['confirmed'], transition_to: 'done' }],
        },
        { node_name: 'done', task_messages: [{ role: 'system', content: 'Thank them.' }], pre_actions: [{ type: 'tts_say', text: 'Thank you. Goodbye!' }, { type: 'end_conversation', outcome: 'confirmed' }] },
      ],
    };
    const tpl = await azureAdmin.post('/templates', { name: 'azure', reseller_id: reseller, flow, agent: { voice: 'azure:en-US-GuyNeural' } });
    assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
    const unknown = await azureAdmin.post('/templates', { name: 'azure-unknown', reseller_id: reseller, flow, agent: { voice: 'azure:en-US-NobodyNeural' } });
    assert.equal(unknown.status, 400, JSON.stringify(unknown.body));
    await azureAdmin.post('/configurations', { reseller_id: reseller, template: tpl.body.id, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00' });
    assert.equal((await azureAdmin.post('/numbers', { phone_number: '+12125550310', provider: 'PROVIDER_A' })).status, 200);

    ai.chat.push({ text: 'Hello Ana! Shall I confirm your order?' }, { tools: [{ name: 'confirm_order', arguments: { confirmed: true } }] });
    azure.transcripts.push('Yes, please confirm it.');
    const callee = '+14155550310';
    azureEmulator.script(callee, { answer: 'answer', steps: [{ waitForAudio: 15_000 }, { say: 'Yes, please confirm it.' }, { waitForAudio: 15_000 }], maxSeconds: 45 });
    const pushed = await azureAdmin.post('/leads', { request_id: 'azure-1', template: 'azure', reseller_id: reseller, payload: { customer_mobile_number: callee, customer_name: 'Ana' } });
    assert.equal(pushed.status, 201, JSON.stringify(pushed.body));

    const lead = await settled(azureAdmin, pushed.body.lead_call_tracker_id);
    assert.equal(lead.outcome, 'confirmed', JSON.stringify(lead.metaData));
    assert.deepEqual(
      lead.metaData.transcription.map((t: any) => [t.role, t.content]),
      [
        ['assistant', 'Hello Ana! Shall I confirm your order?'],
        ['user', 'Yes, please confirm it.'],
        ['assistant', 'Thank you. Goodbye!'],
      ],
    );
    assert.deepEqual(lead.metaData.errors, []);
    // The template's Azure voice spoke each line; the caller was heard at the line's 8 kHz, turn by turn.
    assert.ok(azure.ttsRequests.length >= 2 && azure.ttsRequests.every((r) => r.voice === 'en-US-GuyNeural'), JSON.stringify(azure.ttsRequests.map((r) => r.voice)));
    const stream = azure.streams[0]!;
    assert.equal(stream.wavRates[0], 8000);
    assert.ok(stream.messages.some((m) => m.path === 'telemetry'));
    assert.ok(rms(azureEmulator.calls.find((c) => c.to === callee)!.received.pcm) > 300);
  });
});

describe('a warm transfer (the human is briefed first)', () => {
  let reseller: string;
  let seq = 0;

  /** A template whose one function transfers warm to `human`; the lead's call is placed and waited for. */
  async function call(human: string, warm: Record<string, unknown>, customer: Parameters<Emulator['script']>[1]): Promise<{ lead: any; leadId: string }> {
    if (!reseller) {
      reseller = (await admin.post('/resellers', { name: 'Warm' })).body.id;
      assert.equal((await admin.post('/numbers', { phone_number: '+12125550302', provider: 'PROVIDER_A' })).status, 200);
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

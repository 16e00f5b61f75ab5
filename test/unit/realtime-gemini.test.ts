/**
 * The Gemini Live client against a local server speaking the Live API's WebSocket protocol
 * (test/helpers/gemini-live-server.ts: its messages are the fixtures): the `setup` it sends, audio
 * both ways at the vendor's rates, a function call answered with `toolResponse`, a new node's
 * session carrying the conversation, `interrupted`, `goAway`, and errors (a bad key, an unknown
 * model, nothing listening, the server closing mid-session).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { realtimeVoice, voiceSettings } from '../../src/config/voice.js';
import { createRealtimeModel } from '../../src/providers/index.js';
import { GeminiLive, geminiSetup } from '../../src/providers/realtime/gemini.js';
import type { RealtimeEvent, RealtimeSession } from '../../src/voice/services.js';
import { BAD_KEY_REASON, startGeminiLiveServer, type GeminiLiveServer } from '../helpers/gemini-live-server.js';
import { freePort } from '../helpers/net.js';

let live: GeminiLiveServer;
before(async () => (live = await startGeminiLiveServer()));
after(() => live.close());

const gemini = (over: Partial<ConstructorParameters<typeof GeminiLive>[0]> = {}) =>
  new GeminiLive({ provider: 'gemini', url: live.url, apiKey: live.apiKey, model: 'gemini-3.8-live', voice: 'Puck', connectTimeoutMs: 5000, ...over });
const TOOL = { name: 'lookup_order', description: 'Finds an order', parameters: { type: 'object', properties: { order: { type: 'string', description: 'Its id' }, items: { type: 'array', items: { type: 'integer' } } }, required: ['order'], additionalProperties: false } };
const open = (sampleRateHz = 8000, instructions = 'Greet Ana.', tools = [TOOL]) => gemini().connect({ signal: new AbortController().signal, sampleRateHz, config: { instructions, tools, temperature: 0.6 } });

/** Events of `session` from now on, and a wait for one that matches. */
function watch(session: RealtimeSession) {
  const events: RealtimeEvent[] = [];
  const waiters: Array<{ match: (e: RealtimeEvent) => boolean; resolve: (e: RealtimeEvent) => void }> = [];
  session.onEvent((e) => {
    events.push(e);
    for (const w of waiters.splice(0)) (w.match(e) ? w.resolve(e) : waiters.push(w));
  });
  const next = (match: (e: RealtimeEvent) => boolean) => {
    const seen = events.find(match);
    return seen ? Promise.resolve(seen) : new Promise<RealtimeEvent>((resolve) => waiters.push({ match, resolve }));
  };
  return { events, next, types: () => events.filter((e) => e.type !== 'audio' && e.type !== 'transcript').map((e) => e.type) };
}

const tone = (ms: number, hz: number) => Int16Array.from({ length: (hz * ms) / 1000 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / hz)));
function speak(session: RealtimeSession, hz: number, speechMs = 600) {
  const frame = hz / 50;
  const loud = tone(speechMs, hz);
  for (let at = 0; at < loud.length; at += frame) session.appendAudio(loud.subarray(at, at + frame));
  for (let i = 0; i < 30; i++) session.appendAudio(new Int16Array(frame));
}
const sent = (connection: number, key: string) => live.received.filter((r) => r.connection === connection && key in r.message).map((r) => r.message[key]);

describe('Gemini Live client', () => {
  it('sets the session up, hears the caller at 16 kHz and plays the reply at the call\'s rate, with both sides\' words and usage', async () => {
    live.replies.push({ text: 'Hello there.' });
    live.transcripts.push('Hi, who is this?');
    const session = await open();
    const connection = live.connections - 1;
    const w = watch(session);
    // The setup, as sent: Google's field names and shapes.
    assert.deepEqual(sent(connection, 'setup')[0], {
      model: 'models/gemini-3.8-live',
      generationConfig: { responseModalities: ['AUDIO'], speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: 'Puck' } } }, temperature: 0.6 },
      systemInstruction: { parts: [{ text: 'Greet Ana.' }] },
      tools: [{ functionDeclarations: [{ name: 'lookup_order', description: 'Finds an order', behavior: 'BLOCKING', parameters: { type: 'OBJECT', required: ['order'], properties: { order: { type: 'STRING', description: 'Its id' }, items: { type: 'ARRAY', items: { type: 'INTEGER' } } } } }] }],
      realtimeInputConfig: { automaticActivityDetection: { disabled: false }, activityHandling: 'START_OF_ACTIVITY_INTERRUPTS' },
      inputAudioTranscription: {},
      outputAudioTranscription: {},
    });
    // Telephony's 8 kHz goes up to 16 kHz; the server's activity detection hears the turn and answers it.
    speak(session, 8000);
    const done = await w.next((e) => e.type === 'user_transcript');
    assert.deepEqual(done, { type: 'user_transcript', itemId: (w.events.find((e) => e.type === 'speech_stopped') as { itemId: string }).itemId, text: 'Hi, who is this?' });
    assert.deepEqual(w.types(), ['speech_started', 'speech_stopped', 'response_started', 'response_done', 'user_transcript']);
    const finished = w.events.find((e) => e.type === 'response_done') as Extract<RealtimeEvent, { type: 'response_done' }>;
    assert.equal(finished.status, 'completed');
    assert.ok(finished.usage && finished.usage.promptTokens === 120 && finished.usage.completionTokens > 1, JSON.stringify(finished.usage));
    const samples = w.events.reduce((n, e) => n + (e.type === 'audio' ? e.pcm.length : 0), 0);
    assert.ok(Math.abs(samples / 8 - live.responses.at(-1)!.audioMs) <= 100, `${samples / 8} ms at 8 kHz of ${live.responses.at(-1)!.audioMs} ms sent`);
    assert.equal(w.events.flatMap((e) => (e.type === 'transcript' ? [e.text] : [])).join(''), 'Hello there.');
    await session.close();
    assert.deepEqual(w.events.at(-1), { type: 'closed' });
  });

  it('answers a function call with toolResponse, and a new node opens a session that carries the conversation', async () => {
    live.replies.push({ tools: [{ name: 'lookup_order', arguments: { order: 'A-42' } }] }, { text: 'Found it.' }, { text: 'Which day suits you?' });
    const session = await open(16_000);
    const first = live.connections - 1;
    const w = watch(session);
    // A reply asked for: clientContent with turnComplete.
    session.createResponse();
    const call = (await w.next((e) => e.type === 'function_call')) as Extract<RealtimeEvent, { type: 'function_call' }>;
    assert.deepEqual([call.call.name, JSON.parse(call.call.arguments)], ['lookup_order', { order: 'A-42' }]);
    await w.next((e) => e.type === 'response_done');
    session.functionOutput(call.call.id, '{"ok":true,"status":"shipped"}');
    session.createResponse();
    await w.next((e) => e.type === 'response_done' && e.responseId !== call.responseId);
    assert.deepEqual(sent(first, 'clientContent'), [{ turnComplete: true }]);
    assert.deepEqual(sent(first, 'toolResponse'), [{ functionResponses: [{ id: call.call.id, name: 'lookup_order', response: { result: { ok: true, status: 'shipped' } } }] }]);

    // The next node: a session with its instructions and tools, told the conversation so far.
    session.addMessage('assistant', 'One moment.');
    session.update({ instructions: 'Ask which day suits Ana.', tools: [] });
    session.createResponse();
    await w.next((e) => e.type === 'transcript' && e.text.includes('day'));
    const second = live.connections - 1;
    assert.equal(second, first + 1);
    assert.deepEqual(sent(second, 'setup')[0].systemInstruction, { parts: [{ text: 'Ask which day suits Ana.' }] });
    assert.equal(sent(second, 'setup')[0].tools, undefined);
    assert.deepEqual(sent(second, 'clientContent'), [
      {
        turns: [
          { role: 'user', parts: [{ text: '(You called lookup_order with {"order":"A-42"}; it returned {"ok":true,"status":"shipped"})' }] },
          { role: 'model', parts: [{ text: 'Found it.' }, { text: 'One moment.' }] },
        ],
        turnComplete: false,
      },
      { turnComplete: true },
    ]);
    // goAway: the next session is opened the same way once the reply in hand is over.
    await w.next((e) => e.type === 'response_done' && w.events.filter((x) => x.type === 'response_done').length === 3);
    live.goAway(second);
    while (!sent(second + 1, 'clientContent').length) await new Promise((r) => setTimeout(r, 20));
    assert.equal(sent(second + 1, 'clientContent')[0].turns.at(-1).parts.at(-1).text, 'Which day suits you?');
    await session.close();
    assert.ok(!w.events.some((e) => e.type === 'closed' && e.error), JSON.stringify(w.events.filter((e) => e.type === 'closed')));
  });

  it('reports interrupted as the caller speaking and cancels the reply; what was heard is what a later session is told', async () => {
    live.replies.push({ text: 'Hello Ana, this is Maya from Acme, calling about your order of a blue chair for your study.' }, { text: 'Sure.' });
    live.transcripts.push('Wait.');
    const session = await open(16_000);
    const w = watch(session);
    session.createResponse();
    const audio = (await w.next((e) => e.type === 'audio')) as Extract<RealtimeEvent, { type: 'audio' }>;
    await w.next((e) => e.type === 'transcript' && w.events.filter((x) => x.type === 'transcript').length > 3);
    speak(session, 16_000, 300);
    const cancelled = await w.next((e) => e.type === 'response_done');
    assert.deepEqual(cancelled, { type: 'response_done', responseId: audio.responseId, status: 'cancelled', usage: { promptTokens: 120, completionTokens: (cancelled as { usage: { completionTokens: number } }).usage.completionTokens } });
    assert.deepEqual(w.types().slice(0, 3), ['response_started', 'speech_started', 'response_done']);
    // The caller heard a second of it.
    session.truncate(audio.itemId, 1000);
    await w.next((e) => e.type === 'user_transcript');
    assert.equal(live.responses.at(-2)!.status, 'interrupted');
    const next = live.connections;
    session.update({ instructions: 'Go on.', tools: [] });
    session.createResponse();
    while (!sent(next, 'clientContent').length) await new Promise((r) => setTimeout(r, 20));
    const [heard, said, answer] = sent(next, 'clientContent')[0].turns;
    assert.equal(heard.role, 'model');
    const text = heard.parts[0].text as string;
    assert.ok(text.length > 0 && text.length < 40 && 'Hello Ana, this is Maya from Acme'.startsWith(text.slice(0, 20)), `heard "${text}"`);
    assert.deepEqual([said, answer.role], [{ role: 'user', parts: [{ text: 'Wait.' }] }, 'model']);
    await session.close();
  });

  it('fails fast on a bad key, an unknown model or nothing listening; a session the server closes reports it', async () => {
    const config = { instructions: '', tools: [] };
    const signal = new AbortController().signal;
    await assert.rejects(gemini({ apiKey: 'wrong' }).connect({ signal, sampleRateHz: 8000, config }), (err: Error & { retryable?: boolean }) => err.name === 'ServiceError' && err.retryable === false && err.message.includes(`1007 ${BAD_KEY_REASON}`));
    await assert.rejects(gemini({ model: 'gpt-4o' }).connect({ signal, sampleRateHz: 8000, config }), (err: Error & { retryable?: boolean }) => err.retryable === false && err.message.includes('1008'));
    const nowhere = `ws://127.0.0.1:${await freePort()}/ws`;
    await assert.rejects(gemini({ url: nowhere }).connect({ signal, sampleRateHz: 8000, config }), (err: Error & { retryable?: boolean }) => err.retryable === true);

    live.replies.push({ error: { code: 'internal', message: 'Internal error encountered.' } });
    const session = await open();
    const w = watch(session);
    session.createResponse();
    assert.deepEqual(await w.next((e) => e.type === 'closed'), { type: 'closed', error: 'the connection closed (1011 Internal error encountered.)' });
    live.replies.push({ drop: true });
    const dropped = await open();
    const d = watch(dropped);
    dropped.createResponse();
    assert.match(((await d.next((e) => e.type === 'closed')) as { error?: string }).error ?? '', /^the connection closed \(1006/);
  });

  it('leaves an empty system instruction and an empty tool list out of the setup', () => {
    const setup = geminiSetup({ url: 'ws://x', model: 'models/gemini-3.8-live', voice: 'Kore', connectTimeoutMs: 1 }, { instructions: '', tools: [] }).setup as Record<string, unknown>;
    assert.equal(setup.model, 'models/gemini-3.8-live');
    assert.equal(setup.systemInstruction, undefined);
    assert.equal(setup.tools, undefined);
  });

  it('is chosen by DIALER_REALTIME_PROVIDER=gemini, with Google\'s endpoint, the current live model and Puck by default; Google\'s own server needs a key', () => {
    const chat = { LLM_BASE_URL: 'http://127.0.0.1:1/v1', STT_BASE_URL: 'http://127.0.0.1:1/v1' };
    const chosen = voiceSettings({ ...chat, DIALER_REALTIME_PROVIDER: 'gemini', GEMINI_API_KEY: 'g-key' });
    assert.deepEqual(chosen.realtime, {
      provider: 'gemini',
      url: 'wss://generativelanguage.googleapis.com/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent',
      apiKey: 'g-key',
      model: 'gemini-3.8-live',
      voice: 'Puck',
      connectTimeoutMs: 10_000,
      appendMs: 60,
    });
    assert.equal(voiceSettings({ ...chat, DIALER_REALTIME_PROVIDER: 'gemini', GEMINI_API_KEY: 'g-key', DIALER_REALTIME_APPEND_MS: '40' }).realtime?.appendMs, 40);
    assert.throws(() => voiceSettings({ ...chat, DIALER_REALTIME_PROVIDER: 'gemini', GEMINI_API_KEY: 'g-key', DIALER_REALTIME_APPEND_MS: '5' }), /DIALER_REALTIME_APPEND_MS must be between 20 and 500/);
    assert.equal(createRealtimeModel(chosen.realtime!).label, 'gemini-live');
    assert.equal(createRealtimeModel(voiceSettings({ ...chat, DIALER_REALTIME_MODEL: 'gpt-realtime', OPENAI_API_KEY: 'k' }).realtime!).label, 'openai-realtime');
    const keyless = voiceSettings({ ...chat, DIALER_REALTIME_PROVIDER: 'gemini' }).services;
    assert.ok('missing' in keyless && keyless.missing.includes('GEMINI_API_KEY'), JSON.stringify(keyless));
    assert.throws(() => voiceSettings({ ...chat, DIALER_REALTIME_PROVIDER: 'bard' }), /DIALER_REALTIME_PROVIDER/);
  });

  it('speaks the call\'s language in its voice (DIALER_REALTIME_LANGUAGE_VOICES); a malformed list is a configuration error', () => {
    const chat = { LLM_BASE_URL: 'http://127.0.0.1:1/v1', STT_BASE_URL: 'http://127.0.0.1:1/v1' };
    const settings = voiceSettings({ ...chat, DIALER_REALTIME_PROVIDER: 'gemini', GEMINI_API_KEY: 'g', DIALER_REALTIME_LANGUAGE_VOICES: 'es-ES=Kore, hi=Charon' }).realtime!;
    assert.deepEqual(settings.languageVoices, { 'es-ES': 'Kore', hi: 'Charon' });
    // The tag, else the primary language, else another region of it; else the default voice.
    assert.deepEqual(['es-ES', 'hi-IN', 'es-MX', 'en-US', undefined].map((l) => realtimeVoice(settings, l)), ['Kore', 'Charon', 'Kore', 'Puck', 'Puck']);
    const speech = (geminiSetup(settings, { instructions: '', tools: [], language: 'hi-IN' }).setup as any).generationConfig.speechConfig;
    assert.deepEqual(speech, { voiceConfig: { prebuiltVoiceConfig: { voiceName: 'Charon' } }, languageCode: 'hi-IN' });
    // A native-audio model picks its language itself: no languageCode.
    const native = (geminiSetup({ ...settings, model: 'gemini-2.5-flash-native-audio-preview-09-2025' }, { instructions: '', tools: [], language: 'hi-IN' }).setup as any).generationConfig.speechConfig;
    assert.deepEqual(native, { voiceConfig: { prebuiltVoiceConfig: { voiceName: 'Charon' } } });
    assert.throws(() => voiceSettings({ ...chat, DIALER_REALTIME_MODEL: 'gpt-realtime', OPENAI_API_KEY: 'k', DIALER_REALTIME_LANGUAGE_VOICES: 'es-ES:coral' }), /DIALER_REALTIME_LANGUAGE_VOICES must be language=voice pairs/);
  });
});

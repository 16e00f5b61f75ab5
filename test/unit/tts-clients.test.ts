import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { rms } from '../../src/lib/audio.js';
import { synthesize } from '../../src/lib/speech.js';
import { CartesiaTTS } from '../../src/providers/tts/cartesia.js';
import { ElevenLabsTTS } from '../../src/providers/tts/elevenlabs.js';
import { LocalTTS } from '../../src/providers/tts/espeak.js';
import { OpenAITTS } from '../../src/providers/tts/openai.js';
import { ServiceError } from '../../src/voice/services.js';
import { SpokenLines } from '../../src/voice/realtime/lines.js';
import { startCartesiaServer, type CartesiaServer } from '../helpers/cartesia-server.js';
import { startElevenLabsServer, type ElevenLabsServer } from '../helpers/elevenlabs-server.js';
import { startOpenAIServer, type OpenAIServer } from '../helpers/openai-server.js';
import { voiceSettings } from '../../src/config/voice.js';
import { agentOptions, createVoiceServices } from '../../src/providers/index.js';

let eleven: ElevenLabsServer;
let openai: OpenAIServer;
let cartesia: CartesiaServer;
before(async () => {
  eleven = await startElevenLabsServer('xi-key');
  openai = await startOpenAIServer();
  cartesia = await startCartesiaServer('sk-car');
});
after(async () => {
  await cartesia.close();
  await eleven.close();
  await openai.close();
});

async function speech(chunks: AsyncIterable<Int16Array>): Promise<{ pcm: Int16Array; chunks: number }> {
  const parts: Int16Array[] = [];
  for await (const c of chunks) parts.push(c);
  const pcm = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) (pcm.set(p, at), (at += p.length));
  return { pcm, chunks: parts.length };
}

describe('text-to-speech clients', () => {
  it('ElevenLabs: streams real speech from the stream-input protocol, reassembling odd-sized pieces', async () => {
    const tts = new ElevenLabsTTS({ apiKey: 'xi-key', voiceId: 'voice 1', model: 'eleven_turbo_v2_5', url: eleven.url });
    const { pcm, chunks } = await speech(tts.synthesize('Thank you for your time.', { signal: new AbortController().signal }));
    assert.ok(chunks > 3 && pcm.length / 16000 > 0.8 && rms(pcm) > 500, `${chunks} chunks, ${pcm.length / 16000} s`);
    const req = eleven.requests.at(-1)!;
    assert.equal(req.voice, 'voice 1');
    assert.deepEqual(req.query, { model_id: 'eleven_turbo_v2_5', output_format: 'pcm_16000' });
    assert.deepEqual(req.messages.map((m: any) => m.text), [' ', 'Thank you for your time. ', '']);
    const wrong = new ElevenLabsTTS({ apiKey: 'nope', voiceId: 'v', model: 'm', url: eleven.url });
    await assert.rejects(speech(wrong.synthesize('x', { signal: new AbortController().signal })), (e: ServiceError) => !e.retryable && /401/.test(e.message));
  });

  it('Cartesia: sentences as contexts of one socket, real speech reassembled across odd pieces; a barge-in cancels its context; errors and a dropped socket fail the sentence', async () => {
    const settings = { apiKey: 'sk-car', voiceId: 'voice-a', model: 'sonic-2', language: 'es', url: cartesia.url, timeoutMs: 5000 };
    const tts = new CartesiaTTS(settings);
    await tts.warm();
    const signal = new AbortController().signal;
    // Two sentences at once on the one socket, each its own context.
    const [one, two] = await Promise.all([speech(tts.synthesize('Thank you for your time.', { signal })), speech(tts.synthesize('Goodbye!', { signal }))]);
    for (const s of [one, two]) assert.ok(s.chunks > 1 && rms(s.pcm) > 500, `${s.chunks} chunks, rms ${rms(s.pcm)}`);
    assert.ok(one.pcm.length / 16000 > 0.8 && one.pcm.length > two.pcm.length);
    assert.equal(cartesia.sockets, 1);
    const req = cartesia.requests.at(-2)!;
    assert.deepEqual(
      { model: req.model_id, voice: req.voice, language: req.language, format: req.output_format, continue: req.continue },
      { model: 'sonic-2', voice: { mode: 'id', id: 'voice-a' }, language: 'es', format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: 16000 }, continue: false },
    );
    assert.notEqual(cartesia.requests.at(-1)!.context_id, req.context_id);
    // A sentence given up is cancelled by its context; the socket stays for the next one.
    const barge = new AbortController();
    const cut = tts.synthesize('This sentence is interrupted before it is over, by the caller speaking.', { signal: barge.signal });
    for await (const _chunk of cut) {
      barge.abort();
    }
    const cancelled = cartesia.requests.at(-1)!.context_id;
    for (let i = 0; i < 50 && !cartesia.cancels.includes(cancelled); i++) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(cartesia.cancels, [cancelled]);
    assert.ok(rms((await speech(tts.synthesize('Still here.', { signal }))).pcm) > 500);
    assert.equal(cartesia.sockets, 1);
    // An error answers that sentence only, as a final one; a dropped socket is retryable, and the next sentence opens another.
    await assert.rejects(speech(new CartesiaTTS({ ...settings, voiceId: 'bad-voice' }).synthesize('Hi.', { signal })), (err: ServiceError) => err.retryable === false && err.status === 400 && /Invalid voice/.test(err.message));
    const dropping = new CartesiaTTS({ ...settings, voiceId: 'drop-socket' });
    await assert.rejects(speech(dropping.synthesize('A long sentence that is cut when the socket drops in the middle of it.', { signal })), (err: ServiceError) => err.retryable === true && /socket closed/.test(err.message));
    await assert.rejects(speech(new CartesiaTTS({ ...settings, apiKey: 'wrong' }).synthesize('Hi.', { signal })), (err: ServiceError) => err.status === 401 && err.retryable === false);
  });

  it('OpenAI-compatible speech: streamed 24 kHz PCM across odd byte boundaries', async () => {
    const tts = new OpenAITTS({ baseUrl: openai.url, apiKey: 'k', model: 'tts-1', voice: 'alloy', timeoutMs: 5000 });
    // The server sends its 100 ms pieces 5 ms apart: each reaches the caller as it arrives.
    openai.pace.speechSpeedup = 20;
    try {
      const { pcm, chunks } = await speech(tts.synthesize('Your order is confirmed.', { signal: new AbortController().signal }));
      assert.ok(chunks > 3 && pcm.length / 24000 > 0.8 && rms(pcm) > 500, `${chunks} chunks, ${pcm.length / 24000} s`);
    } finally {
      delete openai.pace.speechSpeedup;
    }
  });

  it('OpenAI-compatible speech: the timeout is for the audio to begin, not for all of it to arrive', async () => {
    const line = 'Your order is confirmed, and it ships tomorrow morning.';
    const signal = new AbortController().signal;
    // The server synthesises a line once: the first request makes it, so the timed ones answer at once.
    const full = await speech(new OpenAITTS({ baseUrl: openai.url, apiKey: 'k', model: 'tts-1', voice: 'alloy', timeoutMs: 30_000 }).synthesize(line, { signal }));
    const quick = new OpenAITTS({ baseUrl: openai.url, apiKey: 'k', model: 'tts-1', voice: 'alloy', timeoutMs: 400 });
    // About 3 s of speech sent at 3x real time: a second of streaming, past the 400 ms timeout.
    openai.pace.speechSpeedup = 3;
    try {
      const slow = await speech(quick.synthesize(line, { signal }));
      assert.equal(slow.pcm.length, full.pcm.length, 'every sample arrived');
    } finally {
      delete openai.pace.speechSpeedup;
    }
    // An answer that does not begin in time is a retryable error that says so.
    openai.pace.speechFirstAudioMs = 2000;
    try {
      await assert.rejects(speech(quick.synthesize(line, { signal })), (err: ServiceError) => err.retryable && /no answer within 400 ms/.test(err.message));
    } finally {
      delete openai.pace.speechFirstAudioMs;
    }
  });

  it('the local voice (flite): speech with no account', async () => {
    const { pcm } = await speech(new LocalTTS().synthesize('Hello.', { signal: new AbortController().signal }));
    assert.ok(pcm.length > 4000 && rms(pcm) > 500);
  });

  it('the local voice (flite) says line after line in one process: the same text, the same samples', async () => {
    // Node 20 once crashed the whole process (SIGSEGV) after a few dozen lines, when V8 collected
    // spent Flite instances on its own schedule.
    const first = await synthesize('Line number one, said again and again.', { sampleRateHz: 8000 });
    for (let i = 0; i < 150; i++) {
      const again = await synthesize(i % 2 ? 'Line number one, said again and again.' : `Another line, number ${i}.`, { sampleRateHz: 8000 });
      if (i % 2) assert.deepEqual(again, first, `line ${i}`);
      else assert.ok(again.length > 4000, `line ${i}`);
    }
  });
});

describe("a template's voice", () => {
  it('is one of the configured speech service\'s (ElevenLabs: its voice and TTS_VOICES) or the local voice\'s, and speaks the call', async () => {
    const settings = voiceSettings({ LLM_BASE_URL: openai.url, STT_BASE_URL: openai.url, ELEVENLABS_API_KEY: 'xi-key', ELEVENLABS_VOICE_ID: 'voice-1', ELEVENLABS_URL: eleven.url, TTS_VOICES: 'voice-2' });
    const voices = agentOptions(settings).voices;
    assert.deepEqual(voices.filter((v) => v.provider === 'elevenlabs').map((v) => [v.id, v.default]), [['elevenlabs:voice-1', true], ['elevenlabs:voice-2', false]]);
    assert.ok(voices.some((v) => v.id === 'local:kal' && !v.default));
    const made = createVoiceServices(settings);
    assert.ok('services' in made);
    const { services } = made;
    const chosen = services.choose!({ voice: 'elevenlabs:voice-2' });
    await speech(chosen.tts.synthesize('Hello there.', { signal: new AbortController().signal }));
    assert.equal(eleven.requests.at(-1)!.voice, 'voice-2');
    const local = services.choose!({ voice: 'local:kal' }).tts;
    assert.equal(local.label, 'flite');
    assert.ok(rms((await speech(local.synthesize('Hello there.', { signal: new AbortController().signal }))).pcm) > 500);
    // A voice of a service no longer configured: the default voice speaks.
    assert.equal(services.choose!({ voice: 'openai:nova' }).tts, services.tts);
  });
});

describe("a realtime call's own lines", () => {
  it('are asked of the speech service once per voice and kept at the call rate: the next call saying them plays the same audio at once', async () => {
    const tts = new OpenAITTS({ baseUrl: openai.url, apiKey: 'k', model: 'tts-1', voice: 'alloy', timeoutMs: 5000 });
    const lines = new SpokenLines();
    const signal = new AbortController().signal;
    const asked = () => openai.speechRequests.filter((r) => r.input === 'Thank you. Goodbye!').length;
    const before = asked();
    const first = await lines.speak(tts, 'Thank you. Goodbye!', 8000, signal);
    assert.ok(first.length > 8000 * 0.5 && rms(first) > 500, 'speech at 8 kHz');
    assert.equal(await lines.speak(tts, 'Thank you. Goodbye!', 8000, signal), first);
    assert.equal(asked() - before, 1);
    // Another rate is another line; so is other text.
    const wide = await lines.speak(tts, 'Thank you. Goodbye!', 16_000, signal);
    assert.ok(Math.abs(wide.length - 2 * first.length) <= 4, `${wide.length} samples at 16 kHz, ${first.length} at 8 kHz`);
    assert.equal(asked() - before, 2);
    // So is the same text in another voice (a language's own): asked of that voice, kept apart.
    const coral = new OpenAITTS({ baseUrl: openai.url, apiKey: 'k', model: 'tts-1', voice: 'coral', timeoutMs: 5000 });
    await lines.speak(coral, 'Thank you. Goodbye!', 8000, signal);
    assert.deepEqual(openai.speechRequests.filter((r) => r.input === 'Thank you. Goodbye!').slice(before).map((r) => r.voice), ['alloy', 'alloy', 'coral']);
    assert.equal(await lines.speak(tts, 'Thank you. Goodbye!', 8000, signal), first, 'the first voice keeps its line');
    // A line whose call ended while it was spoken is not kept.
    const ended = new AbortController();
    ended.abort();
    const askedOf = () => openai.speechRequests.filter((r) => r.input === 'Ana, goodbye!').length;
    await lines.speak(tts, 'Ana, goodbye!', 8000, ended.signal).catch(() => undefined);
    const afterEnded = askedOf();
    await lines.speak(tts, 'Ana, goodbye!', 8000, signal);
    assert.equal(askedOf(), afterEnded + 1, 'asked again');
  });
});

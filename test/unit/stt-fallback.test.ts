/**
 * The speech-to-text fallback (STT_FALLBACK): Deepgram's client in front, AssemblyAI's behind it,
 * each against a local server speaking its vendor's WebSocket protocol.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { voiceSettings } from '../../src/config/voice.js';
import { ConfigError } from '../../src/config/env.js';
import { synthesize } from '../../src/lib/speech.js';
import { createVoiceServices, FallbackSTT } from '../../src/providers/index.js';
import { AssemblyAiSTT } from '../../src/providers/stt/assemblyai.js';
import { DeepgramSTT } from '../../src/providers/stt/deepgram.js';
import type { SttFallbackNotice } from '../../src/providers/stt/fallback.js';
import { ServiceError, type SttEvent, type SttStream } from '../../src/voice/services.js';
import { startAssemblyAiServer, type AssemblyAiServer } from '../helpers/assemblyai-server.js';
import { startDeepgramServer, type DeepgramServer } from '../helpers/deepgram-server.js';

let dg: DeepgramServer;
let aai: AssemblyAiServer;
let speech: Int16Array;
before(async () => {
  dg = await startDeepgramServer('dg-key');
  aai = await startAssemblyAiServer('aai-key');
  speech = await synthesize('Yes, please.', { sampleRateHz: 8000 });
});
after(async () => {
  await dg.close();
  await aai.close();
});

const notices: SttFallbackNotice[] = [];
const hearing = (dgKey = 'dg-key', aaiKey = 'aai-key') =>
  new FallbackSTT(
    new DeepgramSTT({ apiKey: dgKey, url: dg.url, model: 'nova-2', language: 'en-US' }),
    new AssemblyAiSTT({ apiKey: aaiKey, url: aai.url, model: 'universal-streaming-english' }),
    { retry: { attempts: 2, baseDelayMs: 10 }, onFallback: (n) => notices.push(n) },
  );

/** Reads a stream's events into `events` until it ends; `failure`: what it ended with. */
function read(stream: SttStream): { events: SttEvent[]; done: Promise<unknown> } {
  const events: SttEvent[] = [];
  const done = (async () => {
    try {
      for await (const e of stream.events) events.push(e);
    } catch (err) {
      return err;
    }
    return undefined;
  })();
  return { events, done };
}

async function until(what: string, condition: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 10_000; !condition(); ) {
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const speak = (stream: SttStream) => {
  for (let i = 0; i < speech.length; i += 160) stream.write(speech.subarray(i, i + 160));
};
const finals = (events: SttEvent[]) => events.filter((e) => e.type === 'final').map((e) => (e as { text: string }).text);

describe('speech-to-text fallback', () => {
  it('a socket that breaks mid-call, and a retry the service refuses (503): the fallback hears the caller on, given the words not yet transcribed', async () => {
    const opened = dg.streams.length;
    const stream = hearing().open({ signal: new AbortController().signal, sampleRateHz: 8000 });
    const { events, done } = read(stream);
    await until('the primary stream', () => dg.streams.length > opened);
    dg.transcripts.push('Yes, please.');
    aai.transcripts.push('Tomorrow morning.');
    dg.dropAfterFinal = 1011;
    dg.refuse = 503;
    const aaiStreams = aai.streams.length;
    try {
      speak(stream);
      stream.endSegment();
      // The next segment goes out before the break: the primary never gives its words.
      speak(stream);
      await until('the switch', () => events.some((e) => e.type === 'fallback'));
      stream.endSegment();
      await until('the second final', () => finals(events).length === 2);
    } finally {
      dg.dropAfterFinal = undefined;
      dg.refuse = undefined;
    }
    await stream.close();
    assert.equal(await done, undefined);
    assert.deepEqual(finals(events), ['Yes, please.', 'Tomorrow morning.']);
    const fallback = events.find((e) => e.type === 'fallback') as Extract<SttEvent, { type: 'fallback' }>;
    // The retry was refused: its failure is the reason (the break itself was the first).
    assert.deepEqual({ from: fallback.from, to: fallback.to }, { from: 'deepgram', to: 'assemblyai' });
    assert.match(fallback.reason, /deepgram: refused the stream: HTTP 503/);
    assert.equal(notices.at(-1)!.reason, fallback.reason);
    // AssemblyAI heard the second segment from its start (kept and sent again), at the line's rate, and ended it on ForceEndpoint.
    assert.equal(aai.streams.length, aaiStreams + 1);
    const s = aai.streams.at(-1)!;
    assert.equal(s.query.sample_rate, '8000');
    assert.equal(s.audioBytes, speech.length * 2);
    assert.deepEqual(s.messages, [{ type: 'ForceEndpoint' }, { type: 'Terminate' }]);
  });

  it('a primary that refuses to connect at all (503): the audio since the start goes to the fallback', async () => {
    dg.refuse = 503;
    aai.transcripts.push('Hello there.');
    try {
      const stream = hearing().open({ signal: new AbortController().signal, sampleRateHz: 8000 });
      const { events, done } = read(stream);
      speak(stream);
      stream.endSegment();
      await until('the final', () => finals(events).length === 1);
      await stream.close();
      assert.equal(await done, undefined);
      assert.deepEqual(events.filter((e) => e.type !== 'interim').map((e) => e.type), ['fallback', 'final', 'utterance_end']);
      assert.deepEqual(finals(events), ['Hello there.']);
      assert.equal(aai.streams.at(-1)!.audioBytes, speech.length * 2);
    } finally {
      dg.refuse = undefined;
    }
  });

  it('a refused key is a configuration error, not an outage: no fallback, the stream fails as before', async () => {
    const stream = hearing('wrong').open({ signal: new AbortController().signal, sampleRateHz: 8000 });
    const { events, done } = read(stream);
    const err = (await done) as ServiceError;
    assert.ok(err instanceof ServiceError && !err.retryable && /HTTP 401/.test(err.message), String(err));
    assert.deepEqual(events, []);
    // ... and a fallback that fails past its own retry ends the stream too.
    dg.refuse = 503;
    try {
      const both = hearing('dg-key', 'wrong').open({ signal: new AbortController().signal, sampleRateHz: 8000 });
      const r = read(both);
      const last = (await r.done) as ServiceError;
      assert.ok(last instanceof ServiceError && /assemblyai: closed the stream: 1008/.test(last.message), String(last));
      assert.deepEqual(r.events.map((e) => e.type), ['fallback']);
    } finally {
      dg.refuse = undefined;
    }
  });

  it('STT_FALLBACK builds the wrapper; an unknown service, the primary itself or a fallback without its keys stops the start', () => {
    const env = { LLM_BASE_URL: 'http://127.0.0.1:9/v1', DEEPGRAM_API_KEY: 'dg-key', DEEPGRAM_URL: dg.url, ASSEMBLYAI_API_KEY: 'aai-key', ASSEMBLYAI_URL: aai.url };
    const built = createVoiceServices(voiceSettings({ ...env, STT_FALLBACK: 'assemblyai' }));
    assert.ok('services' in built && built.services.stt.label === 'fallback(deepgram, assemblyai)', JSON.stringify(built));
    assert.deepEqual(built.services.stt.sampleRatesHz, [16000, 8000]);
    const plain = createVoiceServices(voiceSettings(env));
    assert.ok('services' in plain && plain.services.stt.label === 'deepgram');
    assert.throws(() => voiceSettings({ ...env, STT_FALLBACK: 'whisperx' }), (e: Error) => e instanceof ConfigError && /STT_FALLBACK must be none, deepgram, .* or openai, got "whisperx"/.test(e.message));
    // ... even while the services are not all configured yet (no LLM here).
    assert.throws(() => voiceSettings({ STT_FALLBACK: 'whisperx' }), ConfigError);
    assert.throws(() => voiceSettings({ ...env, STT_FALLBACK: 'deepgram' }), (e: Error) => e instanceof ConfigError && /STT_FALLBACK=deepgram is the primary/.test(e.message));
    assert.throws(() => voiceSettings({ ...env, STT_FALLBACK: 'sarvam' }), (e: Error) => e instanceof ConfigError && /STT_FALLBACK=sarvam: .*SARVAM_API_KEY/.test(e.message));
    assert.throws(() => voiceSettings({ ...env, STT_FALLBACK: 'openai' }), (e: Error) => e instanceof ConfigError && /STT_FALLBACK=openai: .*STT_API_KEY/.test(e.message));
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { synthesize } from '../../src/lib/speech.js';
import { DeepgramSTT } from '../../src/providers/stt/deepgram.js';
import { ServiceError, type SttEvent } from '../../src/voice/services.js';
import { results, startDeepgramServer, type DeepgramServer } from '../helpers/deepgram-server.js';
import { voiceSettings } from '../../src/config/voice.js';
import { agentOptions, createVoiceServices } from '../../src/providers/index.js';

let dg: DeepgramServer;
before(async () => (dg = await startDeepgramServer('dg-key')));
after(() => dg.close());

const stt = (key = 'dg-key') => new DeepgramSTT({ apiKey: key, url: dg.url, model: 'nova-2', language: 'en-US' });

describe('Deepgram live STT', () => {
  it('streams audio, finalizes each segment, and reads interim, final and utterance-end messages', async () => {
    dg.transcripts.push('Yes, please confirm it.', 'Tomorrow morning.');
    const speech = await synthesize('Yes, please confirm it.', { sampleRateHz: 16000 });
    const controller = new AbortController();
    const stream = stt().open({ signal: controller.signal, sampleRateHz: 16000 });
    const events: SttEvent[] = [];
    const reading = (async () => {
      for await (const e of stream.events) events.push(e);
    })();
    for (let i = 0; i < speech.length; i += 320) stream.write(speech.subarray(i, i + 320));
    stream.endSegment();
    for (let i = 0; i < speech.length; i += 320) stream.write(speech.subarray(i, i + 320));
    stream.endSegment();
    await new Promise((r) => setTimeout(r, 300));
    await stream.close();
    await reading;
    assert.deepEqual(events.filter((e) => e.type === 'final').map((e) => (e as { text: string }).text), ['Yes, please confirm it.', 'Tomorrow morning.']);
    assert.ok(events.some((e) => e.type === 'interim'));
    assert.ok(events.filter((e) => e.type === 'utterance_end').length >= 2);
    assert.equal(dg.streams.at(-1)!.encoding, 'linear16');
    assert.equal(dg.streams.at(-1)!.sample_rate, '16000');
    assert.equal(dg.audioBytes.at(-1), speech.length * 2 * 2);
  });

  it('takes telephony audio at 8 kHz as it comes', async () => {
    dg.transcripts.push('Yes.');
    const speech = await synthesize('Yes.', { sampleRateHz: 8000 });
    const stream = stt().open({ signal: new AbortController().signal, sampleRateHz: 8000 });
    const events: SttEvent[] = [];
    const reading = (async () => {
      for await (const e of stream.events) events.push(e);
    })();
    for (let i = 0; i < speech.length; i += 160) stream.write(speech.subarray(i, i + 160));
    stream.endSegment();
    await new Promise((r) => setTimeout(r, 300));
    await stream.close();
    await reading;
    assert.deepEqual(events.filter((e) => e.type === 'final').map((e) => (e as { text: string }).text), ['Yes.']);
    assert.equal(dg.streams.at(-1)!.sample_rate, '8000');
    assert.equal(dg.audioBytes.at(-1), speech.length * 2);
  });

  it('fails clearly: a wrong key is final, a server error may be retried', async () => {
    const bad = stt('wrong').open({ signal: new AbortController().signal, sampleRateHz: 16000 });
    await assert.rejects(
      (async () => {
        for await (const _ of bad.events) void _;
      })(),
      (err: ServiceError) => err.retryable === false && /HTTP 401/.test(err.message),
    );
    dg.failWith = 1011;
    const failing = stt().open({ signal: new AbortController().signal, sampleRateHz: 16000 });
    failing.write(new Int16Array(1600).fill(1000));
    await assert.rejects(
      (async () => {
        for await (const _ of failing.events) void _;
      })(),
      (err: ServiceError) => err.retryable === true && /1011/.test(err.message),
    );
  });
});

describe('Deepgram telling languages apart', () => {
  it("nova-3 with languages of its multilingual model: language=multi, each final naming the language; otherwise the call's language", async () => {
    const multi = await startDeepgramServer('dg-key', {
      transcriber: (send) => ({ audio: () => undefined, finalize: () => send(results('Hola, buenos días.', true, { from_finalize: true }, ['es'])), close: () => undefined }),
    });
    try {
      const open = (model: string, detect: string[]) => new DeepgramSTT({ apiKey: 'dg-key', url: multi.url, model, language: 'en-US' }).open({ signal: new AbortController().signal, sampleRateHz: 8000, language: 'en-US', detect });
      const stream = open('nova-3', ['en-US', 'es-ES']);
      stream.write(new Int16Array(800));
      stream.endSegment();
      const events: SttEvent[] = [];
      for await (const e of stream.events) {
        events.push(e);
        if (e.type === 'final') break;
      }
      await stream.close();
      assert.deepEqual(events.at(-1), { type: 'final', text: 'Hola, buenos días.', confidence: 0.98, language: 'es' });
      assert.equal(multi.streams.at(-1)!.language, 'multi');
      // A language outside the multilingual model's, or another model: the stream listens in the call's language.
      const others = [open('nova-3', ['en-US', 'sv-SE']), open('nova-2', ['en-US', 'es-ES'])];
      for (let i = 0; i < 200 && multi.streams.length < 3; i++) await new Promise((r) => setTimeout(r, 10));
      await Promise.all(others.map((o) => o.close()));
      assert.deepEqual(multi.streams.slice(1).map((q) => q.language), ['en-US', 'en-US']);
    } finally {
      await multi.close();
    }
  });
});

describe("a template's speech-to-text language", () => {
  it('opens Deepgram with the chosen language (the default otherwise), the client made once per choice; the options list its tags', async () => {
    const settings = voiceSettings({ LLM_BASE_URL: 'http://127.0.0.1:9/v1', DEEPGRAM_API_KEY: 'dg-key', DEEPGRAM_URL: dg.url });
    const options = agentOptions(settings);
    assert.equal(options.stt_language_match, 'exact');
    assert.deepEqual(options.stt_languages.filter((l) => l.default).map((l) => l.id), ['en-US']);
    assert.ok(options.stt_languages.some((l) => l.id === 'pt-BR' && l.label === 'Brazilian Portuguese (pt-BR)'), JSON.stringify(options.stt_languages));
    const made = createVoiceServices(settings);
    assert.ok('services' in made);
    const { services } = made;
    const chosen = services.choose!({ stt_language: 'es' });
    assert.equal(services.choose!({ stt_language: 'es' }), chosen);
    assert.equal(chosen.llm, services.llm, 'what the template did not choose keeps the default client');
    for (const stt of [chosen.stt, services.stt]) {
      const opened = dg.streams.length;
      const stream = stt.open({ signal: new AbortController().signal, sampleRateHz: 16000 });
      stream.write(new Int16Array(1600));
      while (dg.streams.length === opened) await new Promise((r) => setTimeout(r, 20));
      await stream.close();
    }
    assert.deepEqual(dg.streams.slice(-2).map((s) => s.language), ['es', 'en-US']);
  });
});

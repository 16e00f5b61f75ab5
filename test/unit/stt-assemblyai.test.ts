/** AssemblyAI's streaming speech-to-text client against a local server speaking its v3 WebSocket protocol. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { voiceSettings } from '../../src/config/voice.js';
import { synthesize } from '../../src/lib/speech.js';
import { agentOptions, createVoiceServices } from '../../src/providers/index.js';
import { AssemblyAiSTT } from '../../src/providers/stt/assemblyai.js';
import { ServiceError, type SttEvent } from '../../src/voice/services.js';
import { startAssemblyAiServer, type AssemblyAiServer } from '../helpers/assemblyai-server.js';

let aai: AssemblyAiServer;
before(async () => (aai = await startAssemblyAiServer('aai-key')));
after(() => aai.close());

const stt = (key = 'aai-key', language?: string) => new AssemblyAiSTT({ apiKey: key, url: aai.url, model: 'universal-streaming-english', language });

async function run(stream: ReturnType<ReturnType<typeof stt>['open']>, feed: () => void): Promise<SttEvent[]> {
  const events: SttEvent[] = [];
  const reading = (async () => {
    for await (const e of stream.events) events.push(e);
  })();
  feed();
  await new Promise((r) => setTimeout(r, 200));
  await stream.close();
  await reading;
  return events;
}

describe('AssemblyAI streaming STT', () => {
  it('streams telephony audio as it comes, reads the running transcript as interim results, and ends each segment with one formatted final', async () => {
    aai.transcripts.push('Yes, please confirm it.', 'Tomorrow morning.');
    const speech = await synthesize('Yes, please confirm it.', { sampleRateHz: 8000 });
    const stream = stt().open({ signal: new AbortController().signal, sampleRateHz: 8000 });
    const events = await run(stream, () => {
      for (const _segment of [1, 2]) {
        for (let i = 0; i < speech.length; i += 160) stream.write(speech.subarray(i, i + 160));
        stream.endSegment();
      }
    });
    assert.deepEqual(events.filter((e) => e.type === 'final').map((e) => (e as { text: string }).text), ['Yes, please confirm it.', 'Tomorrow morning.']);
    assert.ok(events.filter((e) => e.type === 'interim').some((e) => (e as { text: string }).text === 'yes please'));
    assert.equal(events.filter((e) => e.type === 'utterance_end').length, 2);
    const final = events.find((e) => e.type === 'final') as { confidence?: number };
    assert.equal(final.confidence, 0.9);
    const s = aai.streams.at(-1)!;
    assert.deepEqual({ rate: s.query.sample_rate, encoding: s.query.encoding, model: s.query.speech_model, format: s.query.format_turns }, { rate: '8000', encoding: 'pcm_s16le', model: 'universal-streaming-english', format: 'true' });
    assert.equal(s.audioBytes, speech.length * 2 * 2);
    assert.deepEqual(s.messages, [{ type: 'ForceEndpoint' }, { type: 'ForceEndpoint' }, { type: 'Terminate' }]);
  });

  it('another language takes the multilingual model with language detection; a bad key is a final error', async () => {
    const stream = stt('aai-key', 'es').open({ signal: new AbortController().signal, sampleRateHz: 16000 });
    await run(stream, () => undefined);
    assert.equal(aai.streams.at(-1)!.query.speech_model, 'universal-streaming-multilingual');
    assert.equal(aai.streams.at(-1)!.query.language_detection, 'true');
    const bad = stt('wrong').open({ signal: new AbortController().signal, sampleRateHz: 16000 });
    await assert.rejects(
      (async () => {
        for await (const _ of bad.events);
      })(),
      (err: ServiceError) => err.retryable === false && /1008 Unauthorized/.test(err.message),
    );
  });

  it("telling languages apart: the multilingual model, each final naming the turn's language_code", async () => {
    aai.transcripts.push('Hola, buenos días.');
    aai.languages.push('es');
    const stream = stt('aai-key', 'en-US').open({ signal: new AbortController().signal, sampleRateHz: 16000, language: 'en-US', detect: ['en-US', 'es-ES'] });
    const events = await run(stream, () => {
      stream.write(new Int16Array(3200));
      stream.endSegment();
    });
    assert.deepEqual(events.filter((e) => e.type === 'final').map((e) => [(e as { text: string }).text, (e as { language?: string }).language]), [['Hola, buenos días.', 'es']]);
    assert.deepEqual([aai.streams.at(-1)!.query.speech_model, aai.streams.at(-1)!.query.language_detection], ['universal-streaming-multilingual', 'true']);
  });

  it('STT_PROVIDER=assemblyai (or just ASSEMBLYAI_API_KEY) builds it, and a template may choose its languages', () => {
    const settings = voiceSettings({ LLM_BASE_URL: 'http://127.0.0.1:9/v1', ASSEMBLYAI_API_KEY: 'aai-key', ASSEMBLYAI_URL: aai.url });
    const built = createVoiceServices(settings);
    assert.ok('services' in built && built.services.stt.label === 'assemblyai', JSON.stringify(built));
    const options = agentOptions(settings);
    assert.deepEqual(options.stt_languages.map((l) => l.id), ['en', 'es', 'fr', 'de', 'it', 'pt']);
    assert.equal(options.stt_languages.find((l) => l.default)?.id, 'en');
  });
});

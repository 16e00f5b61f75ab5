import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { synthesize } from '../../src/lib/speech.js';
import { OpenAITranscriptionSTT } from '../../src/providers/stt/openai.js';
import type { SttEvent } from '../../src/voice/services.js';
import { startOpenAIServer, type OpenAIServer } from '../helpers/openai-server.js';

let ai: OpenAIServer;
before(async () => (ai = await startOpenAIServer()));
after(() => ai.close());

describe('OpenAI-compatible transcription', () => {
  for (const rate of [16000, 8000]) {
    it(`sends one WAV per segment at the audio's own rate (${rate} Hz), without the silence before the speech, and reads each text as a final`, async () => {
      ai.transcripts.push('Yes, please.', 'Tomorrow.');
      const speech = await synthesize('Yes, please.', { sampleRateHz: rate });
      const frame = rate / 50;
      const stt = new OpenAITranscriptionSTT({ baseUrl: ai.url, apiKey: 'k', model: 'whisper-1', timeoutMs: 5000 });
      assert.ok(stt.sampleRatesHz.includes(rate));
      const sent = ai.transcriptionRequests.length;
      const stream = stt.open({ signal: new AbortController().signal, sampleRateHz: rate });
      const events: SttEvent[] = [];
      const reading = (async () => {
        for await (const e of stream.events) events.push(e);
      })();
      const silence = new Int16Array(frame);
      for (let round = 0; round < 2; round++) {
        for (let i = 0; i < 250; i++) stream.write(silence); // 5 s of line silence
        for (let i = 0; i < speech.length; i += frame) stream.write(speech.subarray(i, i + frame));
        stream.endSegment();
      }
      stream.endSegment(); // nothing buffered: no request
      await stream.close();
      await reading;
      assert.deepEqual(events.filter((e) => e.type === 'final').map((e) => (e as { text: string }).text), ['Yes, please.', 'Tomorrow.']);
      const requests = ai.transcriptionRequests.slice(sent);
      assert.equal(requests.length, 2);
      for (const r of requests) {
        assert.equal(r.model, 'whisper-1');
        assert.equal(r.sampleRateHz, rate);
        assert.ok(r.seconds >= speech.length / rate && r.seconds < speech.length / rate + 0.4, `${r.seconds} s sent for ${speech.length / rate} s of speech`);
      }
    });
  }

  it('telling languages apart: no language hint, the verbose answer, and the language Whisper names on each final', async () => {
    ai.transcripts.push({ text: 'Hola, ¿qué tal?', language: 'spanish' });
    const rate = 8000;
    const speech = await synthesize('Hola.', { sampleRateHz: rate });
    const stt = new OpenAITranscriptionSTT({ baseUrl: ai.url, apiKey: 'k', model: 'whisper-1', language: 'en', timeoutMs: 5000 });
    const sent = ai.transcriptionRequests.length;
    const stream = stt.open({ signal: new AbortController().signal, sampleRateHz: rate, language: 'en-US', detect: ['en-US', 'es-ES'] });
    stream.write(speech);
    stream.endSegment();
    await stream.close();
    const events: SttEvent[] = [];
    for await (const e of stream.events) events.push(e);
    assert.deepEqual(events.find((e) => e.type === 'final'), { type: 'final', text: 'Hola, ¿qué tal?', language: 'spanish' });
    assert.deepEqual(ai.transcriptionRequests.slice(sent).map((r) => [r.language, r.responseFormat]), [[undefined, 'verbose_json']]);
  });
});

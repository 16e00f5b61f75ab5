import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { synthesize } from '../../src/lib/audio.js';
import { OpenAITranscriptionSTT } from '../../src/providers/stt/openai.js';
import type { SttEvent } from '../../src/voice/services.js';
import { startOpenAIServer, type OpenAIServer } from '../helpers/openai-server.js';

let ai: OpenAIServer;
before(async () => (ai = await startOpenAIServer()));
after(() => ai.close());

describe('OpenAI-compatible transcription', () => {
  it('sends one WAV per segment, without the silence before the speech, and reads each text as a final', async () => {
    ai.transcripts.push('Yes, please.', 'Tomorrow.');
    const speech = await synthesize('Yes, please.', { sampleRateHz: 16000 });
    const stt = new OpenAITranscriptionSTT({ baseUrl: ai.url, apiKey: 'k', model: 'whisper-1', timeoutMs: 5000 });
    const stream = stt.open({ signal: new AbortController().signal });
    const events: SttEvent[] = [];
    const reading = (async () => {
      for await (const e of stream.events) events.push(e);
    })();
    const silence = new Int16Array(320);
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 250; i++) stream.write(silence); // 5 s of line silence
      for (let i = 0; i < speech.length; i += 320) stream.write(speech.subarray(i, i + 320));
      stream.endSegment();
    }
    stream.endSegment(); // nothing buffered: no request
    await stream.close();
    await reading;
    assert.deepEqual(events.filter((e) => e.type === 'final').map((e) => (e as { text: string }).text), ['Yes, please.', 'Tomorrow.']);
    assert.equal(ai.transcriptionRequests.length, 2);
    for (const r of ai.transcriptionRequests) {
      assert.equal(r.model, 'whisper-1');
      const seconds = (r.bytes - 44) / 32000;
      assert.ok(seconds < speech.length / 16000 + 0.4, `${seconds} s sent for ${speech.length / 16000} s of speech`);
    }
  });
});

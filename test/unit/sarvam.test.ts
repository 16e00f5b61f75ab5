/**
 * Sarvam AI's voice (REST text-to-speech) and streaming speech-to-text clients against a local
 * server speaking their protocols; the message shapes the service documents are the fixtures below.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { voiceSettings } from '../../src/config/voice.js';
import { rms } from '../../src/lib/audio.js';
import { synthesize } from '../../src/lib/speech.js';
import { agentOptions, createVoiceServices, FallbackTTS } from '../../src/providers/index.js';
import { SarvamSTT } from '../../src/providers/stt/sarvam.js';
import { SarvamTTS } from '../../src/providers/tts/sarvam.js';
import { agentChoiceErrors } from '../../src/voice/agent-choice.js';
import { ServiceError, type SttEvent, type SttStream } from '../../src/voice/services.js';
import { startSarvamServer, type SarvamServer } from '../helpers/sarvam-server.js';

let sarvam: SarvamServer;
before(async () => (sarvam = await startSarvamServer('sarvam-key')));
after(() => sarvam.close());

const ttsSettings = () => ({ apiKey: 'sarvam-key', url: sarvam.url, model: 'bulbul:v2', speaker: 'anushka', language: 'hi-IN', timeoutMs: 5000 });
const sttSettings = (apiKey = 'sarvam-key') => ({ apiKey, url: sarvam.url, model: 'saarika:v2.5', language: 'hi-IN' });
const signal = () => new AbortController().signal;

async function speech(chunks: AsyncIterable<Int16Array>): Promise<Int16Array> {
  const parts: Int16Array[] = [];
  for await (const c of chunks) parts.push(c);
  const pcm = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) (pcm.set(p, at), (at += p.length));
  return pcm;
}

/** Writes `segments` of audio in 20 ms messages, each ended by the VAD, then reads the stream to its close. */
async function hear(stream: SttStream, segments: Int16Array[], rateHz: number, whenWritten?: () => Promise<void>): Promise<SttEvent[]> {
  const events: SttEvent[] = [];
  let finals = 0;
  let heard: () => void = () => undefined;
  const allHeard = new Promise<void>((resolve) => (heard = resolve));
  const reading = (async () => {
    for await (const e of stream.events) {
      events.push(e);
      if (e.type === 'utterance_end' && ++finals === segments.length) heard();
    }
    heard();
  })();
  const frame = rateHz / 50;
  for (const pcm of segments) {
    for (let i = 0; i < pcm.length; i += frame) stream.write(pcm.subarray(i, i + frame));
    stream.endSegment();
  }
  await whenWritten?.();
  await allHeard;
  await stream.close();
  await reading;
  return events;
}

describe('Sarvam voice (POST /text-to-speech)', () => {
  it('speaks a sentence from the WAV in audios[], with the documented request', async () => {
    const pcm = await speech(new SarvamTTS(ttsSettings()).synthesize('Namaste, your order is confirmed.', { signal: signal() }));
    assert.ok(pcm.length / 16000 > 1 && rms(pcm) > 300, `${pcm.length / 16000} s of speech`);
    assert.deepEqual(sarvam.ttsRequests.at(-1), {
      key: 'sarvam-key',
      body: { text: 'Namaste, your order is confirmed.', target_language_code: 'hi-IN', speaker: 'anushka', model: 'bulbul:v2', speech_sample_rate: 16000 },
    });
  });

  it('a 429 is tried again and then speaks; a bad key (403), an unknown speaker (400) fail at once; a dropped connection is retryable', async () => {
    const before = sarvam.ttsRequests.length;
    sarvam.ttsFailures.push(429);
    const pcm = await speech(new FallbackTTS([new SarvamTTS(ttsSettings())], { attempts: 2, baseDelayMs: 1 }).synthesize('Thank you.', { signal: signal() }));
    assert.ok(rms(pcm) > 300);
    assert.equal(sarvam.ttsRequests.length - before, 2);

    const once = async (settings: ReturnType<typeof ttsSettings>, text = 'Hello.') => {
      const from = sarvam.ttsRequests.length;
      const err = await speech(new FallbackTTS([new SarvamTTS(settings)], { attempts: 2, baseDelayMs: 1 }).synthesize(text, { signal: signal() })).then(
        () => assert.fail('it spoke'),
        (e: ServiceError) => e,
      );
      return { err, requests: sarvam.ttsRequests.length - from };
    };
    const badKey = await once({ ...ttsSettings(), apiKey: 'wrong' });
    assert.deepEqual([badKey.err.status, badKey.err.retryable, badKey.requests], [403, false, 1]);
    assert.match(badKey.err.message, /invalid_api_key_error: Invalid API key/);
    const badSpeaker = await once({ ...ttsSettings(), speaker: 'nobody' });
    assert.deepEqual([badSpeaker.err.status, badSpeaker.err.retryable, badSpeaker.requests], [400, false, 1]);
    assert.match(badSpeaker.err.message, /invalid_request_error: Speaker 'nobody' is not compatible with model bulbul:v2/);
    const dropped = await once(ttsSettings(), 'drop the connection');
    assert.deepEqual([dropped.err.retryable, dropped.requests], [true, 2]);
  });

  it('TTS_PROVIDER=sarvam builds it; a template may choose the model speakers, and an unknown speaker is refused', () => {
    const settings = voiceSettings({ LLM_BASE_URL: 'http://127.0.0.1:9/v1', TTS_PROVIDER: 'sarvam', STT_PROVIDER: 'sarvam', SARVAM_API_KEY: 'k', SARVAM_URL: sarvam.url, TTS_VOICES: 'my-clone' });
    const built = createVoiceServices(settings);
    assert.ok('services' in built && built.services.tts.label === 'sarvam' && built.services.stt.label === 'sarvam', JSON.stringify(built));
    const voices = agentOptions(settings).voices.filter((v) => v.provider === 'sarvam');
    assert.deepEqual(voices.slice(0, 3).map((v) => [v.id, v.default]), [['sarvam:anushka', true], ['sarvam:my-clone', false], ['sarvam:manisha', false]]);
    assert.deepEqual(agentChoiceErrors({ voice: 'sarvam:vidya', stt_language: 'ta-IN' }, agentOptions(settings)), []);
    assert.deepEqual(
      agentChoiceErrors({ voice: 'sarvam:nobody', stt_language: 'fr-FR' }, agentOptions(settings)).map((e) => e.path),
      ['/agent/voice', '/agent/stt_language'],
    );
    assert.equal(voiceSettings({ LLM_BASE_URL: 'http://127.0.0.1:9/v1', TTS_PROVIDER: 'sarvam' }).services.hasOwnProperty('missing'), true);
  });
});

describe('Sarvam streaming speech-to-text (/speech-to-text/ws)', () => {
  it("streams the line's 8 kHz as base64 audio messages, flushes at each segment's end, and reads each utterance's transcript as one final", async () => {
    sarvam.transcripts.push('हाँ, कृपया पुष्टि करें।', 'कल सुबह।');
    const speechPcm = await synthesize('Yes, please confirm it.', { sampleRateHz: 8000 });
    const stream = new SarvamSTT(sttSettings()).open({ signal: signal(), sampleRateHz: 8000 });
    const events = await hear(stream, [speechPcm, speechPcm], 8000);
    assert.deepEqual(events, [
      { type: 'final', text: 'हाँ, कृपया पुष्टि करें।' },
      { type: 'utterance_end' },
      { type: 'final', text: 'कल सुबह।' },
      { type: 'utterance_end' },
    ]);
    const s = sarvam.streams.at(-1)!;
    assert.deepEqual(s.query, { 'language-code': 'hi-IN', model: 'saarika:v2.5', sample_rate: '8000', input_audio_codec: 'pcm_s16le', vad_signals: 'true', flush_signal: 'true' });
    assert.deepEqual(s.audioShape, { keys: ['audio'], audio: ['data', 'encoding', 'sample_rate'], encoding: 'audio/wav', sample_rate: 8000 });
    assert.equal(s.audioBytes, speechPcm.length * 2 * 2);
    assert.deepEqual(s.messages, [{ type: 'flush' }, { type: 'flush' }]);
  });

  it('a template language is asked for; a bad key (403) ends the stream with a final error', async () => {
    const stream = new SarvamSTT(sttSettings()).open({ signal: signal(), sampleRateHz: 16000, language: 'ta-IN' });
    sarvam.transcripts.push('');
    await hear(stream, [new Int16Array(1600)], 16000);
    assert.equal(sarvam.streams.at(-1)!.query['language-code'], 'ta-IN');
    const upgrades = sarvam.upgrades.length;
    const bad = new SarvamSTT(sttSettings('wrong')).open({ signal: signal(), sampleRateHz: 16000 });
    await assert.rejects(
      (async () => {
        for await (const _ of bad.events);
      })(),
      (err: ServiceError) => err.retryable === false && err.status === 403 && /invalid_api_key_error/.test(err.message),
    );
    assert.equal(sarvam.upgrades.length - upgrades, 1, 'a refused key is not asked again');
  });

  it('a 429 refusal and a dropped connection are each opened again once, with the audio spoken meanwhile; two failures in a row end it', async () => {
    const speechPcm = await synthesize('Tomorrow morning.', { sampleRateHz: 16000 });
    sarvam.streamRefusals.push(429);
    sarvam.transcripts.push('कल सुबह।');
    const refused = await hear(new SarvamSTT(sttSettings()).open({ signal: signal(), sampleRateHz: 16000 }), [speechPcm], 16000);
    assert.deepEqual(refused.filter((e) => e.type === 'final').map((e) => (e as { text: string }).text), ['कल सुबह।']);
    assert.equal(sarvam.streams.at(-1)!.audioBytes, speechPcm.length * 2, 'the audio written while refused went to the new stream');

    // A connection that drops mid-utterance loses what was under way; the caller's next words are heard on the new one.
    const streams = sarvam.streams.length;
    sarvam.dropAfterAudio = 5;
    sarvam.transcripts.push('हाँ।');
    const stream = new SarvamSTT(sttSettings()).open({ signal: signal(), sampleRateHz: 16000 });
    const frames = (pcm: Int16Array) => {
      for (let i = 0; i < pcm.length; i += 320) stream.write(pcm.subarray(i, i + 320));
    };
    const finals: string[] = [];
    const reading = (async () => {
      for await (const e of stream.events) if (e.type === 'final') finals.push(e.text);
    })();
    frames(speechPcm);
    while (sarvam.streams.length - streams < 2) await new Promise((r) => setTimeout(r, 10));
    frames(speechPcm);
    stream.endSegment();
    while (finals.length === 0) await new Promise((r) => setTimeout(r, 10));
    await stream.close();
    await reading;
    assert.deepEqual(finals, ['हाँ।']);

    sarvam.streamRefusals.push(503, 503);
    const failing = new SarvamSTT(sttSettings()).open({ signal: signal(), sampleRateHz: 16000 });
    await assert.rejects(
      (async () => {
        for await (const _ of failing.events);
      })(),
      (err: ServiceError) => err.retryable === true && err.status === 503,
    );
  });
});

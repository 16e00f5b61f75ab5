/**
 * Azure Speech (voice over REST, speech-to-text over its WebSocket protocol) and Google Cloud
 * (Text-to-Speech and Speech-to-Text v1 over REST) against local servers speaking their wire
 * protocols; the message shapes the servers check are the vendors' (see the helpers).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { voiceSettings } from '../../src/config/voice.js';
import { rms } from '../../src/lib/audio.js';
import { synthesize } from '../../src/lib/speech.js';
import { agentOptions, AzureSTT, AzureTTS, createVoiceServices, FallbackTTS, GoogleSTT, GoogleTTS } from '../../src/providers/index.js';
import { agentChoiceErrors } from '../../src/voice/agent-choice.js';
import { ServiceError, type SttEvent, type SttStream } from '../../src/voice/services.js';
import { AZURE_STT_PATH, AZURE_TTS_PATH, startAzureSpeechServer, type AzureSpeechServer } from '../helpers/azure-speech-server.js';
import { startGoogleSpeechServer, type GoogleSpeechServer } from '../helpers/google-speech-server.js';

let azure: AzureSpeechServer;
let google: GoogleSpeechServer;
before(async () => {
  azure = await startAzureSpeechServer('az-key');
  google = await startGoogleSpeechServer('g-key');
});
after(async () => {
  await azure.close();
  await google.close();
});

const signal = new AbortController().signal;
const fast = { attempts: 2, baseDelayMs: 1 };

async function speech(chunks: AsyncIterable<Int16Array>): Promise<{ pcm: Int16Array; chunks: number }> {
  const parts: Int16Array[] = [];
  for await (const c of chunks) parts.push(c);
  const pcm = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) (pcm.set(p, at), (at += p.length));
  return { pcm, chunks: parts.length };
}

/** Feeds each segment's audio in 20 ms frames, ending each, then closes the stream; its events. */
async function transcribe(stream: SttStream, segments: Int16Array[], rateHz: number): Promise<SttEvent[]> {
  const events: SttEvent[] = [];
  let failure: unknown;
  const reading = (async () => {
    for await (const e of stream.events) events.push(e);
  })().catch((err: unknown) => (failure = err));
  const frame = rateHz / 50;
  for (const audio of segments) {
    for (let i = 0; i < audio.length; i += frame) stream.write(audio.subarray(i, i + frame));
    stream.endSegment();
    // The next segment once this one's words are in (a caller answers after the agent).
    const ends = events.filter((e) => e.type === 'utterance_end').length;
    for (let i = 0; i < 2000 && !failure && events.filter((e) => e.type === 'utterance_end').length === ends; i++) await new Promise((r) => setTimeout(r, 5));
  }
  await stream.close();
  await reading;
  if (failure) throw failure;
  return events;
}

const finals = (events: SttEvent[]) => events.filter((e) => e.type === 'final').map((e) => (e as { text: string }).text);

describe('Azure Speech voice (REST)', () => {
  const settings = () => ({ apiKey: 'az-key', url: `${azure.url}${AZURE_TTS_PATH}`, voice: 'en-US-JennyNeural', timeoutMs: 5000 });

  it('posts the sentence as SSML in the voice\'s locale and plays the 16 kHz PCM as it arrives', async () => {
    const { pcm, chunks } = await speech(new AzureTTS({ ...settings(), voice: 'es-ES-ElviraNeural' }).synthesize('Tom & Jerry say <hello>.', { signal }));
    assert.ok(chunks > 3 && pcm.length / 16000 > 0.8 && rms(pcm) > 500, `${chunks} chunks, ${pcm.length / 16000} s`);
    const req = azure.ttsRequests.at(-1)!;
    assert.equal(
      req.ssml,
      "<speak version='1.0' xmlns='http://www.w3.org/2001/10/synthesis' xml:lang='es-ES'><voice name='es-ES-ElviraNeural'>Tom &amp; Jerry say &lt;hello&gt;.</voice></speak>",
    );
    assert.equal(req.text, 'Tom & Jerry say <hello>.');
    assert.deepEqual(
      [req.headers['ocp-apim-subscription-key'], req.headers['content-type'], req.headers['x-microsoft-outputformat'], req.headers['user-agent']],
      ['az-key', 'application/ssml+xml', 'raw-16khz-16bit-mono-pcm', 'dialer'],
    );
  });

  it('a refused key (401) and an unknown voice (400) are final; 429 is retried and then speaks; a broken connection and a silent server are retryable', async () => {
    await assert.rejects(speech(new AzureTTS({ ...settings(), apiKey: 'wrong' }).synthesize('Hi.', { signal })), (e: ServiceError) => e.status === 401 && !e.retryable);
    await assert.rejects(speech(new AzureTTS({ ...settings(), voice: 'en-US-NobodyNeural' }).synthesize('Hi.', { signal })), (e: ServiceError) => e.status === 400 && !e.retryable);
    azure.throttle = 1;
    const before = azure.ttsRequests.length;
    const { pcm } = await speech(new FallbackTTS([new AzureTTS(settings())], fast).synthesize('Thanks for waiting.', { signal }));
    assert.ok(rms(pcm) > 500);
    assert.equal(azure.ttsRequests.length - before, 2, 'refused once, then spoken');
    await assert.rejects(speech(new AzureTTS({ ...settings(), voice: 'drop-connection' }).synthesize('A sentence long enough to be cut in the middle of its audio.', { signal })), (e: ServiceError) => e.retryable && /audio stream broke/.test(e.message));
    azure.stall = 1;
    await assert.rejects(speech(new AzureTTS({ ...settings(), timeoutMs: 300 }).synthesize('Hi.', { signal })), (e: ServiceError) => e.retryable && /no answer within 300 ms/.test(e.message));
  });
});

describe('Azure Speech speech-to-text (WebSocket)', () => {
  const stt = (key = 'az-key') => new AzureSTT({ apiKey: key, url: `${azure.wsUrl}${AZURE_STT_PATH}`, language: 'en-US', timeoutMs: 5000 });

  it('speaks the protocol: speech.config, a turn per segment (RIFF header first, empty audio to end it), hypotheses as interim results, the phrase as the final, telemetry after turn.end', async () => {
    azure.transcripts.push('Yes, please confirm it.', 'Tomorrow morning.');
    const one = await synthesize('Yes, please confirm it.', { sampleRateHz: 8000 });
    const two = await synthesize('Tomorrow morning.', { sampleRateHz: 8000 });
    const events = await transcribe(stt().open({ signal, sampleRateHz: 8000, language: 'es-MX' }), [one, two], 8000);
    assert.deepEqual(finals(events), ['Yes, please confirm it.', 'Tomorrow morning.']);
    assert.ok(events.some((e) => e.type === 'interim' && e.text === 'yes please'), JSON.stringify(events));
    assert.equal(events.filter((e) => e.type === 'utterance_end').length, 2);
    const s = azure.streams.at(-1)!;
    // The last acknowledgement reaches the server in its own time.
    for (let i = 0; i < 400 && s.messages.filter((m) => m.path === 'telemetry').length < 2; i++) await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual(s.query, { language: 'es-MX', format: 'simple' });
    assert.deepEqual(s.wavRates, [8000, 8000]);
    assert.equal(s.turns.length, 2);
    assert.equal(s.audioBytes, (one.length + two.length) * 2);
    const paths = s.messages.map((m) => m.path);
    assert.equal(paths[0], 'speech.config');
    assert.deepEqual((s.messages[0]!.body as any).context.os.platform, 'Node.js');
    // Each turn: audio, its empty end, then the acknowledgement of what came back.
    const telemetry = s.messages.filter((m) => m.path === 'telemetry');
    assert.deepEqual(telemetry.map((m) => m.headers['x-requestid']), s.turns);
    assert.deepEqual(
      (telemetry[0]!.body as any).ReceivedMessages.map((r: object) => Object.keys(r)[0]),
      ['turn.start', 'speech.startDetected', 'speech.hypothesis', 'speech.endDetected', 'speech.phrase', 'turn.end'],
    );
    assert.equal((telemetry[0]!.body as any).Metrics[0].Name, 'Connection');
    assert.ok(s.messages.filter((m) => m.path === 'audio' && m.body === 0).length === 2);
  });

  it('a refused key is a final error; a dropped socket and a turn.end that never comes are retryable ones', async () => {
    const read = async (stream: SttStream) => {
      for await (const _ of stream.events);
    };
    await assert.rejects(read(stt('wrong').open({ signal, sampleRateHz: 16000 })), (e: ServiceError) => e.status === 401 && !e.retryable);
    azure.dropStreams = 1;
    const stream = stt().open({ signal, sampleRateHz: 16000 });
    stream.write(await synthesize('Hello?', { sampleRateHz: 16000 }));
    await assert.rejects(read(stream), (e: ServiceError) => e.retryable && /closed the stream: 1006/.test(e.message));
    azure.unansweredEnds = 1;
    const waiting = new AzureSTT({ apiKey: 'az-key', url: `${azure.wsUrl}${AZURE_STT_PATH}`, language: 'en-US', timeoutMs: 300 }).open({ signal, sampleRateHz: 16000 });
    waiting.write(await synthesize('Hello?', { sampleRateHz: 16000 }));
    waiting.endSegment();
    await assert.rejects(read(waiting), (e: ServiceError) => e.retryable && /no turn.end within 300 ms/.test(e.message));
  });
});

describe('Google Cloud Text-to-Speech (REST)', () => {
  const settings = () => ({ apiKey: 'g-key', url: google.url, voice: 'en-US-Neural2-J', timeoutMs: 5000 });

  it('sends text:synthesize with the voice and LINEAR16 at 16 kHz, and plays the WAV it answers without its header', async () => {
    const { pcm, chunks } = await speech(new GoogleTTS(settings()).synthesize('Your order is confirmed.', { signal }));
    assert.ok(chunks > 3 && pcm.length / 16000 > 0.8 && rms(pcm) > 500, `${chunks} chunks, ${pcm.length / 16000} s`);
    const expected = await synthesize('Your order is confirmed.', { sampleRateHz: 16000 });
    assert.equal(pcm.length, expected.length, 'every sample, none of the 44-byte header');
    assert.deepEqual(google.ttsRequests.at(-1), {
      input: { text: 'Your order is confirmed.' },
      voice: { languageCode: 'en-US', name: 'en-US-Neural2-J' },
      audioConfig: { audioEncoding: 'LINEAR16', sampleRateHertz: 16000 },
    });
  });

  it('a refused key and an unknown voice are final, in Google\'s words; 429 is retried and then speaks; a dropped connection is retryable', async () => {
    await assert.rejects(speech(new GoogleTTS({ ...settings(), apiKey: 'wrong' }).synthesize('Hi.', { signal })), (e: ServiceError) => !e.retryable && /HTTP 400: INVALID_ARGUMENT: API key not valid/.test(e.message));
    await assert.rejects(speech(new GoogleTTS({ ...settings(), voice: 'en-US-Nobody-Z' }).synthesize('Hi.', { signal })), (e: ServiceError) => !e.retryable && /does not exist/.test(e.message));
    google.throttle = 1;
    const before = google.ttsRequests.length;
    assert.ok(rms((await speech(new FallbackTTS([new GoogleTTS(settings())], fast).synthesize('Thanks.', { signal }))).pcm) > 500);
    assert.equal(google.ttsRequests.length - before, 1, 'the throttled request is refused before it is read');
    google.drop = 1;
    await assert.rejects(speech(new GoogleTTS(settings()).synthesize('Hi.', { signal })), (e: ServiceError) => e.retryable);
  });
});

describe('Google Cloud Speech-to-Text (REST, per segment)', () => {
  const stt = (key = 'g-key') => new GoogleSTT({ apiKey: key, url: google.url, language: 'en-US', timeoutMs: 5000 });

  it('recognizes each segment once it ends (telephony audio as it comes): the results joined as one final; 429 and a dropped connection are tried once more', async () => {
    google.transcripts.push('Yes, please confirm it.', 'Tomorrow morning works.');
    const one = await synthesize('Yes, please confirm it.', { sampleRateHz: 8000 });
    const two = await synthesize('Tomorrow morning works.', { sampleRateHz: 8000 });
    google.throttle = 1;
    const first = google.sttRequests.length;
    const events = await transcribe(stt().open({ signal, sampleRateHz: 8000 }), [one], 8000);
    google.drop = 1;
    events.push(...(await transcribe(stt().open({ signal, sampleRateHz: 8000, language: 'hi-IN' }), [two], 8000)));
    assert.deepEqual(finals(events), ['Yes, please confirm it.', 'Tomorrow morning works.']);
    assert.equal((events.find((e) => e.type === 'final') as { confidence?: number }).confidence, 0.9);
    assert.equal(events.filter((e) => e.type === 'utterance_end').length, 2);
    const requests = google.sttRequests.slice(first);
    assert.deepEqual([google.throttle, google.drop, requests.length], [0, 0, 2], 'each refused or dropped once, then recognized');
    assert.deepEqual(requests.at(-1)!.config, { encoding: 'LINEAR16', sampleRateHertz: 8000, languageCode: 'hi-IN' });
    assert.ok(requests.at(-1)!.audioBytes >= two.length * 2 - 8000 * 0.6, 'the segment, less silence before the speech');
  });

  it('a refused key ends the stream with a final error', async () => {
    const events = transcribe(stt('wrong').open({ signal, sampleRateHz: 16000 }), [await synthesize('Hello?', { sampleRateHz: 16000 })], 16000);
    await assert.rejects(events, (e: ServiceError) => !e.retryable && /API key not valid/.test(e.message));
  });
});

describe('configuration and choices', () => {
  it('TTS_PROVIDER / STT_PROVIDER azure and google build the clients; their voices and languages are offered; a voice they do not offer is refused', () => {
    const base = { LLM_BASE_URL: 'http://127.0.0.1:9/v1', STT_BASE_URL: 'http://127.0.0.1:9/v1' };
    const az = voiceSettings({ ...base, TTS_PROVIDER: 'azure', STT_PROVIDER: 'azure', AZURE_SPEECH_KEY: 'k', AZURE_SPEECH_REGION: 'westeurope', TTS_VOICES: 'en-US-CustomNeural' });
    assert.ok(!('missing' in az.services));
    if (!('missing' in az.services)) {
      assert.equal(az.services.tts.provider === 'azure' && az.services.tts.azure.url, 'https://westeurope.tts.speech.microsoft.com/cognitiveservices/v1');
      assert.equal(az.services.stt.provider === 'azure' && az.services.stt.azure.url, 'wss://westeurope.stt.speech.microsoft.com/speech/recognition/conversation/cognitiveservices/v1');
    }
    const built = createVoiceServices(az);
    assert.ok('services' in built && built.services.stt.label === 'azure-speech' && built.services.tts.label === 'azure-speech');
    const options = agentOptions(az);
    const voices = options.voices.filter((v) => v.provider === 'azure');
    assert.deepEqual(voices.slice(0, 2).map((v) => [v.id, v.default]), [['azure:en-US-JennyNeural', true], ['azure:en-US-CustomNeural', false]]);
    assert.ok(voices.some((v) => v.id === 'azure:hi-IN-SwaraNeural'));
    assert.ok(options.stt_languages.some((l) => l.id === 'hi-IN') && options.stt_languages.find((l) => l.default)?.id === 'en-US');
    assert.deepEqual(agentChoiceErrors({ voice: 'azure:en-US-NobodyNeural' }, options).map((e) => e.path), ['/agent/voice']);
    assert.deepEqual(agentChoiceErrors({ voice: 'azure:es-ES-ElviraNeural', stt_language: 'es-MX' }, options), []);

    const g = voiceSettings({ ...base, TTS_PROVIDER: 'google', STT_PROVIDER: 'google', GOOGLE_API_KEY: 'g', GOOGLE_TTS_URL: google.url, GOOGLE_STT_URL: google.url });
    const gBuilt = createVoiceServices(g);
    assert.ok('services' in gBuilt && gBuilt.services.stt.label === 'google-stt' && gBuilt.services.tts.label === 'google-tts');
    assert.equal(agentOptions(g).voices.find((v) => v.default)?.id, 'google:en-US-Neural2-F');
    assert.deepEqual(agentChoiceErrors({ voice: 'google:en-US-Nobody-Z' }, agentOptions(g)).map((e) => e.path), ['/agent/voice']);

    // What is missing is said, not guessed; a malformed region stops the start.
    assert.match((voiceSettings({ ...base, TTS_PROVIDER: 'azure', AZURE_SPEECH_KEY: 'k' }).services as { missing: string }).missing, /AZURE_SPEECH_REGION/);
    assert.match((voiceSettings({ ...base, STT_PROVIDER: 'google' }).services as { missing: string }).missing, /GOOGLE_API_KEY/);
    assert.throws(() => voiceSettings({ ...base, TTS_PROVIDER: 'azure', AZURE_SPEECH_KEY: 'k', AZURE_SPEECH_REGION: 'https://x' }), /AZURE_SPEECH_REGION/);
  });

  it("a template's Azure voice speaks the call", async () => {
    const settings = voiceSettings({ LLM_BASE_URL: 'http://127.0.0.1:9/v1', STT_BASE_URL: 'http://127.0.0.1:9/v1', TTS_PROVIDER: 'azure', AZURE_SPEECH_KEY: 'az-key', AZURE_SPEECH_TTS_URL: `${azure.url}${AZURE_TTS_PATH}` });
    const made = createVoiceServices(settings);
    assert.ok('services' in made);
    const chosen = made.services.choose!({ voice: 'azure:en-US-GuyNeural' }).tts;
    assert.ok(rms((await speech(chosen.synthesize('Hello there.', { signal }))).pcm) > 500);
    assert.equal(azure.ttsRequests.at(-1)!.voice, 'en-US-GuyNeural');
  });

  it('TTS_FALLBACK=local: a sentence Azure keeps refusing with 429 is spoken by the local voice; an unknown voice still fails', async () => {
    const settings = voiceSettings({
      LLM_BASE_URL: 'http://127.0.0.1:9/v1',
      STT_BASE_URL: 'http://127.0.0.1:9/v1',
      TTS_PROVIDER: 'azure',
      TTS_FALLBACK: 'local',
      AZURE_SPEECH_KEY: 'az-key',
      AZURE_SPEECH_TTS_URL: `${azure.url}${AZURE_TTS_PATH}`,
    });
    const made = createVoiceServices(settings);
    assert.ok('services' in made);
    assert.equal(made.services.tts.label, 'fallback(azure-speech, flite)');
    azure.throttle = 2;
    const before = azure.ttsRequests.length;
    const { pcm } = await speech(made.services.tts.synthesize('Thanks for waiting.', { signal }));
    assert.deepEqual([azure.throttle, azure.ttsRequests.length - before], [0, 2], 'both tries refused');
    assert.deepEqual(pcm, await synthesize('Thanks for waiting.', { sampleRateHz: 16000 }), 'the local voice said it');
    const unknown = made.services.choose!({ voice: 'azure:en-GB-SoniaNeural' }).tts;
    await assert.rejects(speech(unknown.synthesize('Hi.', { signal })), (e: ServiceError) => e.status === 400);
  });
});

/**
 * Sarvam AI's Bulbul voice over its REST API, `POST /text-to-speech`, as its API reference gives
 * it: the key in the `api-subscription-key` header; a JSON body with `text`,
 * `target_language_code` (`hi-IN` …), `speaker`, `model` and `speech_sample_rate`; the answer
 * `{request_id, audios: [base64 WAV]}`. Errors come as `{error: {message, code}}`: 403 a bad key,
 * 400 a bad request (an unknown speaker), 429 the rate limit or the credits, 5xx the service.
 *
 * Each sentence is one request. Sarvam's WebSocket voice would start the audio sooner, but it has
 * no context per sentence (a barge-in could only close the socket under every sentence queued on
 * it), and a sentence's audio is short: the REST answer keeps each sentence its own request, which
 * a barge-in aborts and the fallback may send again when it failed before any audio.
 */
import type { SarvamTtsSettings } from '../../config/voice.js';
import { decodeWav, resample } from '../../lib/audio.js';
import { send, type ClientResponse } from '../../lib/http-client.js';
import { ServiceError, type TTS } from '../../voice/services.js';

const SAMPLE_RATE_HZ = 16_000;
/** The audio goes to the engine in pieces of this many samples (a quarter of a second), as a stream would. */
const PIECE = SAMPLE_RATE_HZ / 4;

/** Bulbul's speakers, by model. */
export const SARVAM_SPEAKERS: Record<string, readonly string[]> = {
  'bulbul:v2': ['anushka', 'manisha', 'vidya', 'arya', 'abhilash', 'karun', 'hitesh'],
  'bulbul:v3': (
    'shubh aditya ritu priya neha rahul pooja rohan simran kavya amit dev ishita shreya ratan varun manan sumit roopa kabir aayan ashutosh advait amelia sophia anand tanya tarun sunny mani gokul vijay shruti suhani mohit kavitha rehan soham rupali'
  ).split(' '),
};

/** What a Sarvam error body says (`{error: {message, code}}`) in a few words, else the body's start. */
export function sarvamErrorText(body: string): string {
  try {
    const e = (JSON.parse(body) as { error?: { message?: string; code?: string } }).error;
    if (e?.message || e?.code) return [e.code, e.message].filter(Boolean).join(': ');
  } catch {
    // not JSON: the body as it is
  }
  return body.slice(0, 200);
}

export class SarvamTTS implements TTS {
  readonly label = 'sarvam';
  readonly sampleRateHz = SAMPLE_RATE_HZ;

  constructor(private readonly options: SarvamTtsSettings) {}

  async *synthesize(text: string, options: { signal: AbortSignal }): AsyncIterable<Int16Array> {
    const o = this.options;
    let res: ClientResponse;
    try {
      res = await send(`${o.url}/text-to-speech`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'api-subscription-key': o.apiKey },
        body: JSON.stringify({ text, target_language_code: o.language, speaker: o.speaker, model: o.model, speech_sample_rate: SAMPLE_RATE_HZ }),
        signal: options.signal,
        timeoutMs: o.timeoutMs,
      });
    } catch (err) {
      if (options.signal.aborted) return;
      throw new ServiceError(this.label, (err as Error).message, true, { cause: err });
    }
    if (!res.ok) {
      const why = sarvamErrorText(await res.text().catch(() => ''));
      throw new ServiceError(this.label, `HTTP ${res.status}: ${why}`, res.status === 429 || res.status >= 500, { status: res.status });
    }
    let audios: unknown;
    try {
      audios = (JSON.parse(await res.text()) as { audios?: unknown }).audios;
    } catch (err) {
      if (options.signal.aborted) return;
      throw new ServiceError(this.label, `the answer broke off or is not JSON: ${(err as Error).message}`, true, { cause: err });
    }
    if (!Array.isArray(audios) || audios.length === 0) throw new ServiceError(this.label, 'the answer has no audio', false);
    for (const audio of audios) {
      let pcm: Int16Array;
      try {
        const wav = decodeWav(Buffer.from(String(audio), 'base64'));
        pcm = wav.sampleRateHz === SAMPLE_RATE_HZ ? wav.pcm : resample(wav.pcm, wav.sampleRateHz, SAMPLE_RATE_HZ);
      } catch (err) {
        throw new ServiceError(this.label, `its audio is not a WAV file: ${(err as Error).message}`, false, { cause: err });
      }
      for (let at = 0; at < pcm.length; at += PIECE) {
        if (options.signal.aborted) return;
        yield pcm.subarray(at, at + PIECE);
      }
    }
  }
}

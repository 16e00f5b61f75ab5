/**
 * Google Cloud Text-to-Speech over REST (`POST /v1/text:synthesize`, the API key in
 * `x-goog-api-key`): `input.text`, `voice.languageCode` and `voice.name`, `audioConfig` LINEAR16 at
 * 16 kHz. The answer is one JSON object whose `audioContent` is the whole sentence as a base64 WAV
 * (LINEAR16 comes with its header); its samples are yielded in 100 ms pieces, so a barge-in stops
 * the sentence as promptly as a streamed voice's. Errors come as `{error: {code, message, status}}`:
 * 429 and 5xx are retried by the fallback, the rest (an unknown voice, a refused key) are final.
 */
import type { GoogleTtsSettings } from '../../config/voice.js';
import { bytesToPcm, decodeWav, resample } from '../../lib/audio.js';
import { send, type ClientResponse } from '../../lib/http-client.js';
import { ServiceError, warmConnection, type TTS } from '../../voice/services.js';

/** The language of a Google voice name (`en-US-Neural2-F`: en-US; `cmn-CN-Wavenet-A`: cmn-CN). */
export function googleVoiceLanguage(voice: string): string {
  return /^[a-z]{2,3}-[A-Za-z0-9]{2,4}/.exec(voice)?.[0] ?? 'en-US';
}

/** `{error: {code, message, status}}`, as Google's APIs answer a refused request, in a line. */
export function googleError(body: string): string {
  try {
    const e = (JSON.parse(body) as { error?: { message?: string; status?: string } }).error;
    if (e) return [e.status, e.message].filter(Boolean).join(': ');
  } catch {
    /* not JSON: the body as it is */
  }
  return body.slice(0, 200);
}

export class GoogleTTS implements TTS {
  readonly label = 'google-tts';
  readonly sampleRateHz = 16000;

  constructor(private readonly options: GoogleTtsSettings) {}

  warm(): Promise<void> {
    return warmConnection('tts', `${this.options.url}/voices?languageCode=${googleVoiceLanguage(this.options.voice)}`, { 'x-goog-api-key': this.options.apiKey });
  }

  async *synthesize(text: string, options: { signal: AbortSignal }): AsyncIterable<Int16Array> {
    const o = this.options;
    const body = {
      input: { text },
      voice: { languageCode: googleVoiceLanguage(o.voice), name: o.voice },
      audioConfig: { audioEncoding: 'LINEAR16', sampleRateHertz: this.sampleRateHz },
    };
    let res: ClientResponse;
    let answer: string;
    try {
      res = await send(`${o.url}/text:synthesize`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-goog-api-key': o.apiKey },
        body: JSON.stringify(body),
        signal: options.signal,
        timeoutMs: o.timeoutMs,
      });
      answer = await res.text();
    } catch (err) {
      if (options.signal.aborted) return;
      throw new ServiceError(this.label, (err as Error).message, true, { cause: err });
    }
    if (!res.ok) throw new ServiceError(this.label, `HTTP ${res.status}: ${googleError(answer)}`, res.status === 429 || res.status >= 500, { status: res.status });
    let pcm: Int16Array;
    try {
      const audio = Buffer.from(String((JSON.parse(answer) as { audioContent?: unknown }).audioContent ?? ''), 'base64');
      if (audio.subarray(0, 4).toString('ascii') === 'RIFF') {
        const wav = decodeWav(audio);
        pcm = wav.sampleRateHz === this.sampleRateHz ? wav.pcm : resample(wav.pcm, wav.sampleRateHz, this.sampleRateHz);
      } else pcm = bytesToPcm(audio);
    } catch (err) {
      throw new ServiceError(this.label, `the answer is not audio: ${(err as Error).message}`, false, { cause: err });
    }
    const piece = this.sampleRateHz / 10;
    for (let at = 0; at < pcm.length && !options.signal.aborted; at += piece) yield pcm.subarray(at, at + piece);
  }
}

/**
 * Google Cloud Speech-to-Text v1 over REST (`POST /v1/speech:recognize`, the API key in
 * `x-goog-api-key`), one request per VAD segment: its streaming recognition is gRPC only, so each
 * segment goes once it ends, as `audio.content` (base64 LINEAR16, headerless) with
 * `config.encoding`, `sampleRateHertz` (telephony's 8 kHz as it comes) and `languageCode`. The
 * answer's `results` are consecutive parts of the segment: their top `alternatives[0].transcript`s
 * joined are the one final, their confidences averaged. Recognizing a segment again is harmless,
 * so a timeout, a dropped connection, 429 or 5xx is tried once more before it fails the stream.
 */
import type { GoogleSttSettings } from '../../config/voice.js';
import { pcmToBytes } from '../../lib/audio.js';
import { send } from '../../lib/http-client.js';
import { ServiceError, type STT, type SttStream } from '../../voice/services.js';
import { googleError } from '../tts/google.js';
import { segmentStream } from './segments.js';

interface RecognizeResponse {
  results?: Array<{ alternatives?: Array<{ transcript?: string; confidence?: number }> }>;
}

export class GoogleSTT implements STT {
  readonly label = 'google-stt';
  readonly sampleRatesHz: readonly number[] = [16000, 8000];
  readonly interimResults = false;

  constructor(private readonly options: GoogleSttSettings) {}

  open(options: { signal: AbortSignal; language?: string; sampleRateHz: number }): SttStream {
    const o = this.options;
    const rate = options.sampleRateHz;
    return segmentStream(rate, async (audio) => {
      const config = { encoding: 'LINEAR16', sampleRateHertz: rate, languageCode: options.language ?? o.language, ...(o.model ? { model: o.model } : {}) };
      let status: number;
      let answer: string;
      try {
        const res = await send(`${o.url}/speech:recognize`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-goog-api-key': o.apiKey },
          body: JSON.stringify({ config, audio: { content: pcmToBytes(audio).toString('base64') } }),
          signal: options.signal,
          timeoutMs: o.timeoutMs,
          retry: { attempts: 2, idempotent: true },
        });
        status = res.status;
        answer = await res.text();
      } catch (err) {
        if (options.signal.aborted) return undefined;
        throw new ServiceError(this.label, (err as Error).message, true, { cause: err });
      }
      if (status < 200 || status >= 300) throw new ServiceError(this.label, `HTTP ${status}: ${googleError(answer)}`, status === 429 || status >= 500, { status });
      let body: RecognizeResponse;
      try {
        body = JSON.parse(answer) as RecognizeResponse;
      } catch {
        throw new ServiceError(this.label, 'the answer is not JSON', false);
      }
      const best = (body.results ?? []).map((r) => r.alternatives?.[0]).filter((a) => a?.transcript?.trim());
      const text = best.map((a) => a!.transcript!.trim()).join(' ');
      const confidences = best.map((a) => a!.confidence).filter((c): c is number => typeof c === 'number' && c > 0);
      return { text, ...(confidences.length ? { confidence: confidences.reduce((a, b) => a + b, 0) / confidences.length } : {}) };
    });
  }
}

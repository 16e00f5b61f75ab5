/**
 * OpenAI-compatible transcription (`POST /audio/transcriptions`, Whisper and its peers) per VAD
 * segment: audio is buffered until the segment ends, then sent as a WAV; one final result each.
 */
import { encodeWav } from '../../lib/audio.js';
import type { OpenAISttSettings } from '../../config/voice.js';
import { ServiceError, type STT, type SttOpenOptions, type SttStream } from '../../voice/services.js';
import { segmentStream } from './segments.js';

export type OpenAISttOptions = OpenAISttSettings;

/**
 * The segment goes as a WAV at the audio's own rate: telephony's 8 kHz as it is (the service
 * resamples it; upsampling first adds no speech and doubles the upload), wideband at 16 kHz.
 */
const RATES: readonly number[] = [16000, 8000, 24000, 48000];

export class OpenAITranscriptionSTT implements STT {
  readonly label: string;
  readonly sampleRatesHz = RATES;
  readonly interimResults = false;

  constructor(private readonly options: OpenAISttOptions) {
    this.label = `openai-transcription(${new URL(options.baseUrl).host})`;
  }

  open(options: SttOpenOptions): SttStream {
    const o = this.options;
    // Telling languages apart: Whisper detects the language when it is not given one, and names it
    // in its verbose answer (a name such as "spanish", or a code).
    const detect = (options.detect?.length ?? 0) > 1;
    const rate = options.sampleRateHz;
    return segmentStream(rate, async (audio) => {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(encodeWav(audio, rate))], { type: 'audio/wav' }), 'segment.wav');
      form.append('model', o.model);
      form.append('response_format', detect ? 'verbose_json' : 'json');
      // The transcription API takes ISO 639-1 codes: a BCP-47 tag's region is dropped (en-US: en).
      const language = (options.language ?? o.language)?.split('-')[0];
      if (language && !detect) form.append('language', language);
      const headers: Record<string, string> = o.apiKey ? { authorization: `Bearer ${o.apiKey}` } : {};
      let res: Response;
      try {
        res = await fetch(`${o.baseUrl}/audio/transcriptions`, { method: 'POST', headers, body: form, signal: AbortSignal.any([options.signal, AbortSignal.timeout(o.timeoutMs)]) });
      } catch (err) {
        if (options.signal.aborted) return undefined;
        throw new ServiceError(this.label, (err as Error).message, true, { cause: err });
      }
      const text = await res.text();
      if (!res.ok) throw new ServiceError(this.label, `HTTP ${res.status}: ${text.slice(0, 200)}`, res.status === 429 || res.status >= 500, { status: res.status });
      try {
        const answer = JSON.parse(text) as { text?: unknown; language?: unknown };
        const heard = detect && typeof answer.language === 'string' && answer.language ? answer.language : undefined;
        return { text: String(answer.text ?? '').trim(), ...(heard ? { language: heard } : {}) };
      } catch {
        throw new ServiceError(this.label, 'the answer is not JSON', false);
      }
    });
  }
}

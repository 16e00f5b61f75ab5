/**
 * OpenAI-compatible transcription (`POST /audio/transcriptions`, Whisper and its peers) per VAD
 * segment: audio is buffered until the segment ends, then sent as a WAV; one final result each.
 */
import { encodeWav, rms } from '../../lib/audio.js';
import { PcmBlocks, PcmRing } from '../../lib/pcm-buffers.js';
import { EventQueue } from '../queue.js';
import type { OpenAISttSettings } from '../../config/voice.js';
import { ServiceError, type STT, type SttEvent, type SttOpenOptions, type SttStream } from '../../voice/services.js';

export type OpenAISttOptions = OpenAISttSettings;

/**
 * The segment goes as a WAV at the audio's own rate: telephony's 8 kHz as it is (the service
 * resamples it; upsampling first adds no speech and doubles the upload), wideband at 16 kHz.
 */
const RATES: readonly number[] = [16000, 8000, 24000, 48000];
/** Kept before the first loud audio of a segment. */
const LEAD_IN_SECONDS = 0.3;
/** Below this level (RMS) audio before a segment's speech counts as silence. */
const LEAD_IN_LEVEL = 150;

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
    const queue = new EventQueue<SttEvent>();
    // Copied out of the frames (see lib/pcm-buffers): at most the last 30 s, a segment longer than
    // that is not one turn.
    const segment = new PcmBlocks(rate, rate * 30);
    const leadIn = new PcmRing(rate * LEAD_IN_SECONDS);
    let work: Promise<void> = Promise.resolve();
    const transcribe = async (audio: Int16Array) => {
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
        if (options.signal.aborted) return;
        throw new ServiceError(this.label, (err as Error).message, true, { cause: err });
      }
      const text = await res.text();
      if (!res.ok) throw new ServiceError(this.label, `HTTP ${res.status}: ${text.slice(0, 200)}`, res.status === 429 || res.status >= 500, { status: res.status });
      let words = '';
      let heard: string | undefined;
      try {
        const answer = JSON.parse(text) as { text?: unknown; language?: unknown };
        words = String(answer.text ?? '').trim();
        if (detect && typeof answer.language === 'string' && answer.language) heard = answer.language;
      } catch {
        throw new ServiceError(this.label, 'the answer is not JSON', false);
      }
      if (words) queue.put({ type: 'final', text: words, ...(heard ? { language: heard } : {}) });
      queue.put({ type: 'utterance_end' });
    };
    return {
      write(pcm) {
        // Transcription is billed by audio length: silence before the speech stays out of the segment
        // (all but a short lead-in), since the pipeline streams the line continuously.
        if (segment.length === 0 && rms(pcm) < LEAD_IN_LEVEL) {
          leadIn.append(pcm);
          return;
        }
        if (segment.length === 0 && leadIn.length > 0) {
          segment.append(leadIn.last());
          leadIn.clear();
        }
        segment.append(pcm);
      },
      endSegment() {
        const audio = segment.take();
        segment.clear();
        if (audio.length < rate / 10) return; // under 100 ms: nothing to transcribe
        work = work.then(() => transcribe(audio)).catch((err: unknown) => queue.end(err));
      },
      events: queue,
      async close() {
        await work.catch(() => undefined);
        queue.end();
      },
    };
  }
}

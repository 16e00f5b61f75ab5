/**
 * Sarvam AI's streaming speech-to-text over its WebSocket (`/speech-to-text/ws`), as its API
 * reference gives it: the key in the `api-subscription-key` header; `language-code`, `model`,
 * `sample_rate`, `input_audio_codec=pcm_s16le`, `vad_signals` and `flush_signal=true` in the
 * query; audio as JSON messages `{audio: {data: base64 PCM, encoding: 'audio/wav', sample_rate}}`.
 * The server answers `{type: 'data', data: {transcript, language_code, …}}` once per utterance,
 * `{type: 'events', data: {signal_type: 'START_SPEECH' | 'END_SPEECH'}}` from its own voice
 * activity detector, and `{type: 'error', data: {message, code}}`. When the VAD ends a segment
 * Dialer sends `{type: 'flush'}`, so the utterance is transcribed at once rather than after the
 * service's own silence. There are no interim results.
 *
 * A stream whose socket is refused for a passing reason (429, 5xx, no connection) or drops is
 * opened again once, with the audio written meanwhile; a second failure in a row, a refused key
 * (403) or an error message ends it. A transcript received makes the next failure a first one again.
 */
import WebSocket from 'ws';
import type { SarvamSttSettings } from '../../config/voice.js';
import { ServiceError, type STT, type SttEvent, type SttStream } from '../../voice/services.js';
import { EventQueue } from '../queue.js';
import { sarvamErrorText } from '../tts/sarvam.js';

/** The languages of Sarvam's speech-to-text (saarika:v2.5; the saaras models take these too). */
export const SARVAM_STT_LANGUAGES = ['hi-IN', 'bn-IN', 'kn-IN', 'ml-IN', 'mr-IN', 'od-IN', 'pa-IN', 'ta-IN', 'te-IN', 'en-IN', 'gu-IN'];

/** The pause before a stream is opened again. */
const RETRY_DELAY_MS = 150;

/** Audio kept while the socket opens again: 10 s of 20 ms messages; older audio is let go. */
const BACKLOG_MESSAGES = 500;

interface Message {
  type?: string;
  data?: { transcript?: string; language_code?: string | null; message?: string; error?: string; code?: string; signal_type?: string };
}

export class SarvamSTT implements STT {
  readonly label = 'sarvam';
  /** It takes telephony's 8 kHz as it comes, and 16 kHz. */
  readonly sampleRatesHz: readonly number[] = [16000, 8000];
  readonly interimResults = false;

  constructor(private readonly options: SarvamSttSettings) {}

  open(options: { signal: AbortSignal; language?: string; sampleRateHz: number }): SttStream {
    const stream = new SarvamStream(this.label, this.options, options.language ?? this.options.language, options.sampleRateHz);
    options.signal.addEventListener('abort', () => void stream.close(), { once: true });
    return stream;
  }
}

class SarvamStream implements SttStream {
  readonly events = new EventQueue<SttEvent>();
  private ws: WebSocket | undefined;
  private readonly backlog: string[] = [];
  private closing = false;
  /** Whether the last failure was already given its one new try. */
  private retried = false;

  constructor(
    private readonly label: string,
    private readonly o: SarvamSttSettings,
    private readonly language: string,
    private readonly sampleRateHz: number,
  ) {
    this.connect();
  }

  private connect(): void {
    const query = new URLSearchParams({
      'language-code': this.language,
      model: this.o.model,
      sample_rate: String(this.sampleRateHz),
      input_audio_codec: 'pcm_s16le',
      vad_signals: 'true',
      flush_signal: 'true',
    });
    const ws = new WebSocket(`${this.o.url.replace(/^http/, 'ws')}/speech-to-text/ws?${query}`, { headers: { 'api-subscription-key': this.o.apiKey } });
    this.ws = ws;
    let failed = false;
    const fail = (err: ServiceError) => {
      if (failed || this.closing) return;
      failed = true;
      ws.removeAllListeners();
      ws.on('error', () => undefined);
      ws.terminate();
      if (err.retryable && !this.retried) {
        this.retried = true;
        setTimeout(() => this.closing || this.connect(), RETRY_DELAY_MS);
      } else this.events.end(err);
    };
    ws.on('open', () => {
      for (const item of this.backlog.splice(0)) ws.send(item);
    });
    ws.on('unexpected-response', (req, res) => {
      const status = res.statusCode ?? 0;
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => fail(new ServiceError(this.label, `refused the stream: HTTP ${status} ${sarvamErrorText(body)}`.trim(), status === 429 || status >= 500, { status })));
      res.on('error', () => fail(new ServiceError(this.label, `refused the stream: HTTP ${status}`, status === 429 || status >= 500, { status })));
      req.on('error', () => undefined);
    });
    ws.on('message', (data) => {
      let m: Message;
      try {
        m = JSON.parse(data.toString()) as Message;
      } catch {
        return fail(new ServiceError(this.label, 'sent a message that is not JSON', false));
      }
      if (m.type === 'error') {
        const why = [m.data?.code, m.data?.message ?? m.data?.error].filter(Boolean).join(': ');
        return fail(new ServiceError(this.label, why || 'error', false));
      }
      if (m.type !== 'data') return;
      // The service works: a later failure gets its new try again.
      this.retried = false;
      // (Its language_probability is how sure it is of the language, not of the words: no confidence.)
      const text = (m.data?.transcript ?? '').trim();
      if (text) this.events.put({ type: 'final', text });
      this.events.put({ type: 'utterance_end' });
    });
    ws.on('error', (err) => fail(new ServiceError(this.label, err.message, true, { cause: err })));
    ws.on('close', (code, reason) => {
      if (this.closing) return;
      fail(new ServiceError(this.label, `closed the stream: ${code} ${reason.toString()}`.trim(), code !== 1008));
    });
  }

  private send(message: string): void {
    const ws = this.ws;
    if (this.closing || !ws) return;
    if (ws.readyState === WebSocket.OPEN) return ws.send(message);
    this.backlog.push(message);
    if (this.backlog.length > BACKLOG_MESSAGES) this.backlog.shift();
  }

  write(pcm: Int16Array): void {
    const data = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength).toString('base64');
    this.send(JSON.stringify({ audio: { data, encoding: 'audio/wav', sample_rate: this.sampleRateHz } }));
  }

  endSegment(): void {
    this.send(JSON.stringify({ type: 'flush' }));
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    const ws = this.ws;
    if (ws?.readyState === WebSocket.OPEN) {
      ws.close(1000);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => (ws.terminate(), resolve()), 2000);
        ws.once('close', () => (clearTimeout(timer), resolve()));
      });
    } else ws?.terminate();
    this.events.end();
  }
}

/**
 * Deepgram live streaming speech-to-text over its WebSocket API (`/v1/listen`): linear16 audio in
 * binary messages; `Results` (interim and final, `speech_final`) and `UtteranceEnd` messages out;
 * `KeepAlive` while quiet, `Finalize` when the VAD ends a segment, `CloseStream` at the end.
 */
import WebSocket from 'ws';
import type { DeepgramSettings } from '../../config/voice.js';
import { ServiceError, type STT, type SttEvent, type SttOpenOptions, type SttStream } from '../../voice/services.js';
import { EventQueue } from '../queue.js';

export type DeepgramOptions = DeepgramSettings;

interface DeepgramMessage {
  type?: string;
  is_final?: boolean;
  speech_final?: boolean;
  channel?: { alternatives?: Array<{ transcript?: string; confidence?: number; languages?: string[] }> };
  description?: string;
  err_msg?: string;
}

/** The languages of nova-3's multilingual (code-switching) model, `language=multi`. */
export const DEEPGRAM_MULTI_LANGUAGES = ['en', 'es', 'fr', 'de', 'hi', 'ru', 'pt', 'ja', 'it', 'nl'];

/** linear16 at the audio's own rate: telephony's 8 kHz goes as it is (Deepgram takes any rate). */
const RATES: readonly number[] = [16000, 8000, 24000, 48000];

export class DeepgramSTT implements STT {
  readonly label = 'deepgram';
  readonly sampleRatesHz = RATES;
  readonly interimResults = true;

  constructor(private readonly options: DeepgramOptions) {}

  open(options: SttOpenOptions): SttStream {
    const o = this.options;
    // Telling languages apart: nova-3's multilingual model, when it speaks every one of them; it names
    // the languages of each result. Otherwise the stream listens in the one it is given.
    const multi =
      (options.detect?.length ?? 0) > 1 && /^nova-3/.test(o.model) && options.detect!.every((l) => DEEPGRAM_MULTI_LANGUAGES.includes(l.toLowerCase().split('-')[0]!));
    const query = new URLSearchParams({
      encoding: 'linear16',
      sample_rate: String(options.sampleRateHz),
      channels: '1',
      model: o.model,
      language: multi ? 'multi' : (options.language ?? o.language),
      interim_results: 'true',
      utterance_end_ms: '1000',
      vad_events: 'true',
      punctuate: 'true',
      smart_format: 'true',
    });
    const queue = new EventQueue<SttEvent>();
    const ws = new WebSocket(`${o.url}/v1/listen?${query}`, { headers: { authorization: `Token ${o.apiKey}` } });
    const backlog: Array<Buffer | string> = [];
    let closing = false;
    const keepAlive = setInterval(() => ws.readyState === WebSocket.OPEN && ws.send(JSON.stringify({ type: 'KeepAlive' })), 5000);
    keepAlive.unref();
    const send = (data: Buffer | string) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(data);
      else if (ws.readyState === WebSocket.CONNECTING) backlog.push(data);
    };
    ws.on('open', () => {
      for (const item of backlog.splice(0)) ws.send(item);
    });
    ws.on('unexpected-response', (_req, res) => {
      const status = res.statusCode ?? 0;
      queue.end(new ServiceError(this.label, `refused the stream: HTTP ${status}`, status === 429 || status >= 500, { status }));
    });
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      let m: DeepgramMessage;
      try {
        m = JSON.parse(data.toString()) as DeepgramMessage;
      } catch {
        return queue.end(new ServiceError(this.label, 'sent a message that is not JSON', false));
      }
      if (m.type === 'Results') {
        const best = m.channel?.alternatives?.[0];
        const text = best?.transcript?.trim() ?? '';
        const heard = multi ? best?.languages?.[0] : undefined;
        if (text) queue.put(m.is_final ? { type: 'final', text, confidence: best?.confidence, ...(heard ? { language: heard } : {}) } : { type: 'interim', text });
        if (m.speech_final) queue.put({ type: 'utterance_end' });
      } else if (m.type === 'UtteranceEnd') queue.put({ type: 'utterance_end' });
      else if (m.type === 'Error' || m.err_msg) queue.end(new ServiceError(this.label, m.description ?? m.err_msg ?? 'error', true));
    });
    ws.on('error', (err) => queue.end(new ServiceError(this.label, err.message, true, { cause: err })));
    ws.on('close', (code, reason) => {
      clearInterval(keepAlive);
      if (closing || code === 1000) queue.end();
      else queue.end(new ServiceError(this.label, `closed the stream: ${code} ${reason.toString()}`, code !== 1008));
    });
    const close = async () => {
      if (closing) return;
      closing = true;
      clearInterval(keepAlive);
      if (ws.readyState === WebSocket.OPEN) {
        ws.send(JSON.stringify({ type: 'CloseStream' }));
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => (ws.terminate(), resolve()), 2000);
          ws.once('close', () => (clearTimeout(timer), resolve()));
        });
      } else ws.terminate();
      queue.end();
    };
    options.signal.addEventListener('abort', () => void close(), { once: true });
    return {
      write(pcm) {
        send(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength));
      },
      endSegment() {
        send(JSON.stringify({ type: 'Finalize' }));
      },
      events: queue,
      close,
    };
  }
}

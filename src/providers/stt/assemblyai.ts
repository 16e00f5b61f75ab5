/**
 * AssemblyAI Universal-Streaming speech-to-text over its v3 WebSocket (`/v3/ws`), as its API
 * reference gives it: the key in the `authorization` header; `speech_model`, `sample_rate`,
 * `encoding=pcm_s16le` and `format_turns=true` in the query; raw PCM in binary messages. The server
 * answers `Begin`, then `Turn` messages: the running `transcript` of the turn while the caller
 * speaks (`end_of_turn: false`, an interim result here), and at the end of the turn the final
 * one (with `format_turns`, the formatted one: `turn_is_formatted: true`), then `Termination`
 * after a `Terminate`. When the VAD ends a segment Dialer sends `ForceEndpoint`, so the turn
 * ends at once rather than after the service's own silence.
 */
import WebSocket from 'ws';
import type { AssemblyAiSettings } from '../../config/voice.js';
import { ServiceError, type STT, type SttEvent, type SttOpenOptions, type SttStream } from '../../voice/services.js';
import { EventQueue } from '../queue.js';

interface Message {
  type?: string;
  transcript?: string;
  end_of_turn?: boolean;
  turn_is_formatted?: boolean;
  end_of_turn_confidence?: number;
  words?: Array<{ confidence?: number }>;
  /** The multilingual model with language detection: the language of the turn. */
  language_code?: string;
  error?: string;
}

/** Closing codes the service uses for a request it will never take (bad key, bad parameters): not worth a retry. */
const FINAL_CLOSE = new Set([1008, 3005, 4001, 4002, 4003]);

export class AssemblyAiSTT implements STT {
  readonly label = 'assemblyai';
  /** It takes telephony's 8 kHz as it comes, and WebRTC's 16 kHz. */
  readonly sampleRatesHz: readonly number[] = [16000, 8000];
  readonly interimResults = true;

  constructor(private readonly options: AssemblyAiSettings) {}

  open(options: SttOpenOptions): SttStream {
    const o = this.options;
    const language = options.language ?? o.language;
    // Telling languages apart: the multilingual model, which names the language of each turn.
    const detect = (options.detect?.length ?? 0) > 1;
    // English has its own model; any other language the multilingual one, which detects it.
    const english = !detect && (!language || /^en\b/i.test(language));
    const query = new URLSearchParams({
      sample_rate: String(options.sampleRateHz),
      encoding: 'pcm_s16le',
      format_turns: 'true',
      speech_model: english ? o.model : 'universal-streaming-multilingual',
      ...(english ? {} : { language_detection: 'true' }),
    });
    const queue = new EventQueue<SttEvent>();
    const ws = new WebSocket(`${o.url}/v3/ws?${query}`, { headers: { authorization: o.apiKey } });
    const backlog: Array<Buffer | string> = [];
    let closing = false;
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
    let last = '';
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      let m: Message;
      try {
        m = JSON.parse(data.toString()) as Message;
      } catch {
        return queue.end(new ServiceError(this.label, 'sent a message that is not JSON', false));
      }
      if (m.error) return queue.end(new ServiceError(this.label, m.error, false));
      if (m.type !== 'Turn') return;
      const text = (m.transcript ?? '').trim();
      if (!m.end_of_turn) {
        if (text && text !== last) queue.put({ type: 'interim', text });
        last = text;
        return;
      }
      // With formatted turns the end of a turn comes twice: its words, then the same formatted. The second is the final.
      if (!m.turn_is_formatted) return;
      last = '';
      const confidences = (m.words ?? []).map((w) => w.confidence).filter((c): c is number => typeof c === 'number');
      const heard = detect && m.language_code ? { language: m.language_code } : {};
      if (text) queue.put({ type: 'final', text, ...heard, ...(confidences.length ? { confidence: confidences.reduce((a, b) => a + b, 0) / confidences.length } : {}) });
      queue.put({ type: 'utterance_end' });
    });
    ws.on('error', (err) => queue.end(new ServiceError(this.label, err.message, true, { cause: err })));
    ws.on('close', (code, reason) => {
      if (closing || code === 1000) queue.end();
      else queue.end(new ServiceError(this.label, `closed the stream: ${code} ${reason.toString()}`.trim(), !FINAL_CLOSE.has(code)));
    });
    const close = async () => {
      if (closing) return;
      closing = true;
      if (ws.readyState === WebSocket.OPEN) {
        // Terminate: the service sends what it still holds, then Termination, then closes.
        ws.send(JSON.stringify({ type: 'Terminate' }));
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
        send(JSON.stringify({ type: 'ForceEndpoint' }));
      },
      events: queue,
      close,
    };
  }
}

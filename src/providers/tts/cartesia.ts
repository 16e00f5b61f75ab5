/**
 * Cartesia's streaming voice over its WebSocket (`wss://api.cartesia.ai/tts/websocket`), as its
 * API reference gives it: one socket for the process, opened ahead of the first sentence (warm)
 * and opened again when it closed; each sentence is a generation request of its own `context_id`
 * (`model_id`, `transcript`, `voice: {mode: 'id', id}`, `language`, raw `pcm_s16le` output at
 * 16 kHz, `continue: false`), answered by `chunk` messages (base64 audio) and `done`, or `error`
 * (`done: true`, with a `status_code`). A sentence given up (a barge-in) is cancelled with
 * `{context_id, cancel: true}`; other contexts on the socket go on.
 */
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import type { CartesiaSettings } from '../../config/voice.js';
import { bytesToPcm } from '../../lib/audio.js';
import { ServiceError, type TTS } from '../../voice/services.js';
import { EventQueue } from '../queue.js';

/** The API version this client speaks (the `Cartesia-Version` header). */
export const CARTESIA_VERSION = '2024-06-10';
const SAMPLE_RATE_HZ = 16_000;

interface Message {
  type?: string;
  context_id?: string;
  data?: string;
  done?: boolean;
  status_code?: number;
  error?: string;
  title?: string;
  message?: string;
}

interface Context {
  queue: EventQueue<Int16Array>;
  /** An odd byte left over from the last chunk (PCM samples are two bytes). */
  odd: number | undefined;
}

export class CartesiaTTS implements TTS {
  readonly label = 'cartesia';
  readonly sampleRateHz = SAMPLE_RATE_HZ;
  private socket: Promise<WebSocket> | undefined;
  private readonly contexts = new Map<string, Context>();

  constructor(private readonly options: CartesiaSettings) {}

  /** Opens the socket ahead of the first sentence. Never throws. */
  async warm(): Promise<void> {
    await this.connect().catch(() => undefined);
  }

  private connect(): Promise<WebSocket> {
    this.socket ??= new Promise<WebSocket>((resolve, reject) => {
      const o = this.options;
      const ws = new WebSocket(`${o.url}/tts/websocket`, { headers: { 'x-api-key': o.apiKey, 'cartesia-version': CARTESIA_VERSION }, handshakeTimeout: o.timeoutMs });
      ws.once('open', () => resolve(ws));
      ws.once('unexpected-response', (_req, res) => {
        const status = res.statusCode ?? 0;
        reject(new ServiceError(this.label, `refused: HTTP ${status}`, status === 429 || status >= 500, { status }));
      });
      ws.on('error', (err) => reject(new ServiceError(this.label, `cannot connect: ${err.message}`, true, { cause: err })));
      ws.on('message', (data) => this.receive(data.toString()));
      ws.on('close', (code) => {
        this.socket = undefined;
        // Sentences still speaking lose their socket: a failure the fallback may retry.
        for (const [id, context] of this.contexts) {
          this.contexts.delete(id);
          context.queue.end(new ServiceError(this.label, `the socket closed (${code})`, true));
        }
      });
    });
    // A socket that could not open is tried again at the next sentence.
    this.socket.catch(() => (this.socket = undefined));
    return this.socket;
  }

  synthesize(text: string, options: { signal: AbortSignal }): AsyncIterable<Int16Array> {
    const o = this.options;
    const id = randomUUID();
    const context: Context = { queue: new EventQueue<Int16Array>(), odd: undefined };
    this.contexts.set(id, context);
    const cancel = () => {
      if (!this.contexts.delete(id)) return;
      context.queue.end();
      void this.socket?.then((ws) => ws.readyState === WebSocket.OPEN && ws.send(JSON.stringify({ context_id: id, cancel: true }))).catch(() => undefined);
    };
    options.signal.addEventListener('abort', cancel, { once: true });
    this.connect().then(
      (ws) => {
        if (!this.contexts.has(id)) return;
        ws.send(
          JSON.stringify({
            model_id: o.model,
            transcript: text,
            voice: { mode: 'id', id: o.voiceId },
            ...(o.language ? { language: o.language } : {}),
            context_id: id,
            output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: SAMPLE_RATE_HZ },
            continue: false,
          }),
        );
      },
      (err: unknown) => {
        this.contexts.delete(id);
        context.queue.end(err as Error);
      },
    );
    return context.queue;
  }

  private receive(raw: string): void {
    let m: Message;
    try {
      m = JSON.parse(raw) as Message;
    } catch {
      return;
    }
    const context = m.context_id ? this.contexts.get(m.context_id) : undefined;
    if (!context || !m.context_id) return;
    if (m.type === 'error') {
      this.contexts.delete(m.context_id);
      const status = m.status_code ?? 0;
      const text = m.error ?? [m.title, m.message].filter(Boolean).join(': ');
      return context.queue.end(new ServiceError(this.label, text || 'error', status === 429 || status >= 500, status ? { status } : {}));
    }
    if (m.type === 'chunk' && m.data) {
      let bytes: Uint8Array = Buffer.from(m.data, 'base64');
      if (context.odd !== undefined) bytes = Buffer.concat([Buffer.from([context.odd]), bytes]);
      context.odd = bytes.length % 2 ? bytes[bytes.length - 1] : undefined;
      const whole = bytes.subarray(0, bytes.length - (bytes.length % 2));
      if (whole.length) context.queue.put(bytesToPcm(whole));
    }
    if (m.done) {
      this.contexts.delete(m.context_id);
      context.queue.end();
    }
  }
}

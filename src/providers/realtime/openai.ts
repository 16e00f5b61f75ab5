/**
 * The OpenAI Realtime API over its WebSocket (`wss://api.openai.com/v1/realtime?model=…`): JSON
 * events both ways. Client events: `session.update` (instructions, function tools, audio formats,
 * input transcription, `turn_detection: {type: 'server_vad'}`), `input_audio_buffer.append`,
 * `conversation.item.create` (a `function_call_output`, or a message the model did not hear),
 * `conversation.item.truncate`, `response.create`. Server events read: speech started and stopped,
 * `response.created`, audio and transcript deltas (the beta names and the GA `output_` ones),
 * the caller's transcription, `response.function_call_arguments.done`, `response.done` with its
 * usage, and `error`.
 *
 * Audio: on telephony (8 kHz) G.711 mu-law both ways, as the call carries it; at any other rate
 * pcm16 at 24 kHz, resampled here. The caller's audio is appended in pieces of `appendMs` (batch.ts).
 *
 * Language: the session's `input_audio_transcription.language` is the call's language (ISO-639-1,
 * as the API takes it). Its voice is the language's until the model has spoken: the API refuses
 * to change a session's voice once assistant audio is present (`cannot_update_voice`), so later
 * updates leave `voice` out and the session keeps the voice it spoke in.
 */
import WebSocket from 'ws';
import { REALTIME_APPEND_MS, realtimeVoice, type RealtimeSettings } from '../../config/voice.js';
import { decodeMulaw, encodeMulaw, pcmToBytes, bytesToPcm, resample } from '../../lib/audio.js';
import { AppendBatcher, batchBytes } from './batch.js';
import { ServiceError, type RealtimeEvent, type RealtimeModel, type RealtimeSession, type RealtimeSessionConfig } from '../../voice/services.js';

export type OpenAIRealtimeOptions = RealtimeSettings;

const PCM16_HZ = 24_000;

interface ServerEvent {
  type: string;
  item_id?: string;
  response_id?: string;
  delta?: string;
  transcript?: string;
  call_id?: string;
  name?: string;
  arguments?: string;
  response?: { id?: string; status?: string; usage?: { input_tokens?: number; output_tokens?: number } };
  error?: { message?: string; code?: string; type?: string };
}

export class OpenAIRealtime implements RealtimeModel {
  readonly label = 'openai-realtime';
  readonly model: string;

  constructor(private readonly options: OpenAIRealtimeOptions) {
    this.model = options.model;
  }

  async connect(options: { signal: AbortSignal; sampleRateHz: number; config: RealtimeSessionConfig }): Promise<RealtimeSession> {
    const o = this.options;
    const url = `${o.url}${o.url.includes('?') ? '&' : '?'}model=${encodeURIComponent(o.model)}`;
    const ws = new WebSocket(url, {
      headers: { ...(o.apiKey ? { authorization: `Bearer ${o.apiKey}` } : {}), 'openai-beta': 'realtime=v1' },
      handshakeTimeout: o.connectTimeoutMs,
    });
    await new Promise<void>((resolve, reject) => {
      const fail = (message: string, retryable: boolean, status?: number) => {
        ws.removeAllListeners();
        ws.on('error', () => undefined);
        ws.terminate();
        reject(new ServiceError(this.label, message, retryable, status === undefined ? {} : { status }));
      };
      const onAbort = () => fail('aborted', false);
      options.signal.addEventListener('abort', onAbort, { once: true });
      ws.once('open', () => {
        options.signal.removeEventListener('abort', onAbort);
        ws.removeAllListeners('error');
        ws.removeAllListeners('unexpected-response');
        resolve();
      });
      ws.once('unexpected-response', (_req, res) => {
        const status = res.statusCode ?? 0;
        fail(`HTTP ${status} on connect`, status === 429 || status >= 500, status);
      });
      ws.once('error', (err) => fail(`cannot connect: ${err.message}`, true));
    });
    const session = new OpenAIRealtimeSession(ws, options.sampleRateHz, o);
    session.update(options.config);
    return session;
  }
}

class OpenAIRealtimeSession implements RealtimeSession {
  private readonly listeners: Array<(event: RealtimeEvent) => void> = [];
  private closing = false;
  private readonly mulaw: boolean;
  private readonly input: AppendBatcher;
  /** The model has spoken audio in this session: its voice can no longer change. */
  private spoke = false;

  constructor(
    private readonly ws: WebSocket,
    readonly sampleRateHz: number,
    private readonly options: OpenAIRealtimeOptions,
  ) {
    this.mulaw = sampleRateHz === 8000;
    const ms = options.appendMs ?? REALTIME_APPEND_MS;
    this.input = new AppendBatcher(this.mulaw ? batchBytes(ms, 8000, 1) : batchBytes(ms, PCM16_HZ, 2), (audio) =>
      this.send({ type: 'input_audio_buffer.append', audio: audio.toString('base64') }),
    );
    ws.on('message', (data) => this.receive(data.toString()));
    ws.on('error', () => undefined);
    ws.on('close', (code, reason) => {
      if (this.closing) return this.emit({ type: 'closed' });
      this.emit({ type: 'closed', error: `the connection closed (${code}${reason.length ? ` ${reason.toString()}` : ''})` });
    });
  }

  onEvent(listener: (event: RealtimeEvent) => void): void {
    this.listeners.push(listener);
  }

  update(config: RealtimeSessionConfig): void {
    const format = this.mulaw ? 'g711_ulaw' : 'pcm16';
    this.send({
      type: 'session.update',
      session: {
        modalities: ['audio', 'text'],
        instructions: config.instructions,
        ...(this.spoke ? {} : { voice: realtimeVoice(this.options, config.language) }),
        input_audio_format: format,
        output_audio_format: format,
        input_audio_transcription: {
          model: this.options.transcriptionModel ?? 'whisper-1',
          ...(config.language ? { language: config.language.split('-')[0]!.toLowerCase() } : {}),
        },
        turn_detection: { type: 'server_vad' },
        tools: config.tools.map((t) => ({ type: 'function', name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.parameters })),
        tool_choice: 'auto',
        ...(config.temperature !== undefined ? { temperature: config.temperature } : {}),
      },
    });
  }

  appendAudio(pcm: Int16Array, mulaw?: Buffer): void {
    // The call's own mu-law bytes go as they came, not decoded and encoded again (the same sound).
    if (this.mulaw) this.input.push(mulaw && mulaw.length === pcm.length ? mulaw : encodeMulaw(pcm));
    else this.input.push(pcmToBytes(resample(pcm, this.sampleRateHz, PCM16_HZ)));
  }

  createResponse(): void {
    this.send({ type: 'response.create' });
  }

  functionOutput(callId: string, output: string): void {
    this.send({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: callId, output } });
  }

  addMessage(role: 'user' | 'assistant', text: string): void {
    this.send({ type: 'conversation.item.create', item: { type: 'message', role, content: [{ type: role === 'user' ? 'input_text' : 'text', text }] } });
  }

  truncate(itemId: string, audioEndMs: number): void {
    this.send({ type: 'conversation.item.truncate', item_id: itemId, content_index: 0, audio_end_ms: Math.max(0, Math.round(audioEndMs)) });
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.ws.readyState === WebSocket.CLOSED) return;
    const closed = new Promise<void>((resolve) => this.ws.once('close', () => resolve()));
    this.ws.close(1000);
    const timer = setTimeout(() => this.ws.terminate(), 1000);
    await closed;
    clearTimeout(timer);
  }

  private send(event: Record<string, unknown>): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(event));
  }

  private emit(event: RealtimeEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  private audio(base64: string): Int16Array {
    const bytes = Buffer.from(base64, 'base64');
    return this.mulaw ? decodeMulaw(bytes) : resample(bytesToPcm(bytes), PCM16_HZ, this.sampleRateHz);
  }

  private receive(raw: string): void {
    let e: ServerEvent;
    try {
      e = JSON.parse(raw) as ServerEvent;
    } catch {
      return this.emit({ type: 'error', message: 'the server sent an event that is not JSON' });
    }
    const responseId = e.response_id ?? '';
    switch (e.type) {
      case 'input_audio_buffer.speech_started':
        return this.emit({ type: 'speech_started' });
      case 'input_audio_buffer.speech_stopped':
        return this.emit({ type: 'speech_stopped', ...(e.item_id ? { itemId: e.item_id } : {}) });
      case 'response.created':
        return this.emit({ type: 'response_started', responseId: e.response?.id ?? '' });
      case 'response.audio.delta':
      case 'response.output_audio.delta':
        this.spoke = true;
        return this.emit({ type: 'audio', responseId, itemId: e.item_id ?? '', pcm: this.audio(e.delta ?? '') });
      case 'response.audio_transcript.delta':
      case 'response.output_audio_transcript.delta':
      case 'response.text.delta':
      case 'response.output_text.delta':
        return this.emit({ type: 'transcript', responseId, itemId: e.item_id ?? '', text: e.delta ?? '' });
      case 'conversation.item.input_audio_transcription.completed':
        return this.emit({ type: 'user_transcript', itemId: e.item_id ?? '', text: (e.transcript ?? '').trim() });
      case 'conversation.item.input_audio_transcription.failed':
        return this.emit({ type: 'user_transcript', itemId: e.item_id ?? '', text: '' });
      case 'response.function_call_arguments.done':
        return this.emit({ type: 'function_call', responseId, call: { id: e.call_id ?? '', name: e.name ?? '', arguments: e.arguments ?? '' } });
      case 'response.done': {
        const usage = e.response?.usage;
        return this.emit({
          type: 'response_done',
          responseId: e.response?.id ?? '',
          status: e.response?.status ?? 'completed',
          ...(usage ? { usage: { promptTokens: usage.input_tokens ?? 0, completionTokens: usage.output_tokens ?? 0 } } : {}),
        });
      }
      case 'error':
        return this.emit({ type: 'error', message: e.error?.message ?? 'unknown error', ...(e.error?.code ? { code: e.error.code } : {}) });
    }
  }
}

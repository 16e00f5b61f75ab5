/**
 * Google's Gemini Live API over its WebSocket (`…GenerativeService.BidiGenerateContent?key=…`):
 * JSON messages both ways. Client messages: `setup` (the model, `generationConfig` with audio
 * replies and the voice, `systemInstruction`, `tools` of `functionDeclarations`, transcription of
 * both sides, automatic activity detection), `realtimeInput.audio` (PCM16 at 16 kHz),
 * `clientContent` (turns of the conversation; `turnComplete` asks for a reply) and
 * `toolResponse.functionResponses`. Server messages read: `setupComplete`, `serverContent`
 * (`modelTurn` audio at 24 kHz, `inputTranscription`, `outputTranscription`, `interrupted`,
 * `turnComplete`), `toolCall`, `toolCallCancellation`, `usageMetadata` and `goAway`. Errors come
 * as the socket's close code and reason (1007 a bad request or key, 1008 a refused one, 1011 the
 * server's own failure).
 *
 * Mapped onto the realtime session the flow engine drives (the OpenAI Realtime API's shape):
 * - Gemini has no ids for turns and replies: a reply (`response`) runs from the model's first
 *   audio, words or function call to `turnComplete`, a function call or `interrupted`; the
 *   caller's turn opens at `interrupted` or their first words and its end (`speech_stopped`) is
 *   the model starting its reply; its words are given whole when that reply ends.
 * - A live session cannot change its instructions or tools: a node's new ones (`update`) open a
 *   new session with them and carry the conversation so far as `clientContent` turns, which the
 *   API appends to the context it answers from. Session resumption was not used for this: a
 *   resumed session restores the old session's state, and the documentation does not say a new
 *   `setup` may change its instructions or tools. `goAway` (the connection is about to end) opens
 *   the next session the same way.
 * - The call's language (`config.language`) is the session's `speechConfig.languageCode` and picks
 *   its voice: a switch is an update like a node's, so the next session speaks the new language
 *   in its voice.
 * - Barge-in: Gemini stops the reply (`interrupted`); what the caller heard of it (`truncate`)
 *   cuts its words in the history a later session is given, as the caller heard them.
 */
import WebSocket from 'ws';
import { bytesToPcm, pcmToBytes, resample, Resampler } from '../../lib/audio.js';
import { REALTIME_APPEND_MS } from '../../config/voice.js';
import { heardPart } from '../../voice/realtime/brain.js';
import type { LlmUsage, RealtimeEvent, RealtimeModel, RealtimeSession, RealtimeSessionConfig } from '../../voice/services.js';
import { AppendBatcher, batchBytes } from './batch.js';
import { BACKLOG_MS, INPUT_HZ, openSession, OUTPUT_HZ, parseOutput, type Content, type GeminiLiveOptions, type ServerMessage } from './gemini-wire.js';

export { geminiSchema, geminiSetup, type GeminiLiveOptions } from './gemini-wire.js';

export class GeminiLive implements RealtimeModel {
  readonly label = 'gemini-live';
  readonly model: string;

  constructor(private readonly options: GeminiLiveOptions) {
    this.model = options.model;
  }

  async connect(options: { signal: AbortSignal; sampleRateHz: number; config: RealtimeSessionConfig }): Promise<RealtimeSession> {
    const session = new GeminiLiveSession(this.options, this.label, options.sampleRateHz, options.signal);
    session.adopt(await openSession(this.options, this.label, options.config, options.signal), options.config);
    return session;
  }
}

/** One line of the conversation, kept to carry it into the next session. */
interface Line {
  role: 'user' | 'model';
  text: string;
}

class GeminiLiveSession implements RealtimeSession {
  private readonly listeners: Array<(event: RealtimeEvent) => void> = [];
  private ws: WebSocket | undefined;
  /** Sessions opened so far: a reply from a session that was replaced is not waited for. */
  private generation = 0;
  private config: RealtimeSessionConfig = { instructions: '', tools: [] };
  private closing = false;
  /** Messages to send once the session being opened is set up. */
  private outbox: object[] = [];
  private backlog: Int16Array[] = [];
  private backlogSamples = 0;
  private readonly resampler: Resampler | undefined;
  /** The caller's audio, sent in pieces of `appendMs` (batch.ts). */
  private readonly input: AppendBatcher;
  private readonly history: Line[] = [];
  /** Lines the model has not been told yet (a keypress, a line the TTS spoke). */
  private pendingTurns: Content[] = [];
  /** Function results to send with the next request for a reply. */
  private pendingTools: Array<{ id: string; name: string; output: string }> = [];
  /** Function calls by id: their names and arguments. */
  private readonly calls = new Map<string, { name: string; arguments: string }>();
  /** The caller's turn in hand: opened by their speech, `stopped` once the model answers it. */
  private user: { itemId: string; line: Line; stopped: boolean } | undefined;
  private response: { id: string; itemId: string } | undefined;
  /** Each reply's words and the audio sent of them, for what a barge-in leaves. */
  private readonly items = new Map<string, { line: Line; text: string; audioMs: number }>();
  private usage: LlmUsage | undefined;
  private renewWhenIdle = false;
  private ids = 0;

  constructor(
    private readonly options: GeminiLiveOptions,
    private readonly label: string,
    readonly sampleRateHz: number,
    private readonly signal: AbortSignal,
  ) {
    this.resampler = sampleRateHz === INPUT_HZ ? undefined : new Resampler(sampleRateHz, INPUT_HZ);
    this.input = new AppendBatcher(batchBytes(options.appendMs ?? REALTIME_APPEND_MS, INPUT_HZ, 2), (bytes) => this.sendAudio(bytes));
  }

  /** Takes `ws`, set up with `config`, as the session's connection. */
  adopt(ws: WebSocket, config: RealtimeSessionConfig): void {
    this.ws = ws;
    this.config = config;
    const generation = this.generation;
    ws.on('message', (data) => generation === this.generation && this.receive(data.toString()));
    ws.on('error', () => undefined);
    ws.on('close', (code, reason) => {
      if (generation !== this.generation) return;
      if (this.closing) return this.emit({ type: 'closed' });
      this.emit({ type: 'closed', error: `the connection closed (${code}${reason.length ? ` ${reason.toString()}` : ''})` });
    });
  }

  onEvent(listener: (event: RealtimeEvent) => void): void {
    this.listeners.push(listener);
  }

  update(config: RealtimeSessionConfig): void {
    this.config = config;
    this.renew();
  }

  appendAudio(pcm: Int16Array): void {
    const audio = this.resampler ? this.resampler.process(pcm) : pcm;
    if (!audio.length) return;
    if (this.ws) return this.input.push(pcmToBytes(audio));
    this.backlog.push(audio);
    this.backlogSamples += audio.length;
    while (this.backlogSamples > (BACKLOG_MS * INPUT_HZ) / 1000) this.backlogSamples -= this.backlog.shift()!.length;
  }

  createResponse(): void {
    if (this.pendingTurns.length) this.send({ clientContent: { turns: this.pendingTurns, turnComplete: false } });
    this.pendingTurns = [];
    if (this.pendingTools.length) {
      // The model goes on by itself once it has its functions' results.
      const functionResponses = this.pendingTools.map((t) => ({ id: t.id, name: t.name, response: { result: parseOutput(t.output) } }));
      this.pendingTools = [];
      return this.send({ toolResponse: { functionResponses } });
    }
    this.send({ clientContent: { turnComplete: true } });
  }

  functionOutput(callId: string, output: string): void {
    const call = this.calls.get(callId) ?? { name: '', arguments: '{}' };
    this.pendingTools.push({ id: callId, name: call.name, output });
    this.history.push({ role: 'user', text: `(You called ${call.name} with ${call.arguments}; it returned ${output})` });
  }

  addMessage(role: 'user' | 'assistant', text: string): void {
    const line: Line = { role: role === 'user' ? 'user' : 'model', text };
    this.history.push(line);
    this.pendingTurns.push({ role: line.role, parts: [{ text }] });
  }

  truncate(itemId: string, audioEndMs: number): void {
    const item = this.items.get(itemId);
    if (item) item.line.text = heardPart(item.text, item.audioMs > 0 ? audioEndMs / item.audioMs : 0);
  }

  async close(): Promise<void> {
    this.closing = true;
    const ws = this.ws;
    if (!ws || ws.readyState === WebSocket.CLOSED) return;
    const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
    ws.close(1000);
    const timer = setTimeout(() => ws.terminate(), 1000);
    await closed;
    clearTimeout(timer);
  }

  /** Opens a new session with the current config and the conversation so far; the old one is closed. */
  private renew(): void {
    this.renewWhenIdle = false;
    const generation = ++this.generation;
    const old = this.ws;
    this.ws = undefined;
    // What the old session was about to be sent waits for the new one (the outbox), before the backlog.
    this.input.flush();
    if (old) {
      old.removeAllListeners('close');
      old.close(1000);
    }
    // The old session's reply and its function calls end with it; their results are in the history.
    if (this.response) this.endResponse('cancelled');
    this.pendingTools = [];
    this.pendingTurns = [];
    // The conversation as it stands; what is said or asked for while the session opens follows it.
    const turns = this.historyTurns();
    openSession(this.options, this.label, this.config, this.signal).then(
      (ws) => {
        if (generation !== this.generation || this.closing) return void ws.close(1000);
        this.adopt(ws, this.config);
        if (turns.length) this.send({ clientContent: { turns, turnComplete: false } });
        for (const m of this.outbox.splice(0)) this.send(m);
        for (const audio of this.backlog.splice(0)) this.input.push(pcmToBytes(audio));
        this.backlogSamples = 0;
      },
      (err: Error) => {
        if (generation !== this.generation || this.closing) return;
        this.emit({ type: 'closed', error: `a new session for the node could not be opened: ${err.message}` });
      },
    );
  }

  /** The conversation so far as Gemini turns (consecutive lines of one side joined). */
  private historyTurns(): Content[] {
    const turns: Content[] = [];
    for (const line of this.history) {
      if (!line.text.trim()) continue;
      const last = turns.at(-1);
      if (last && last.role === line.role) last.parts.push({ text: line.text });
      else turns.push({ role: line.role, parts: [{ text: line.text }] });
    }
    return turns;
  }

  private sendAudio(bytes: Buffer): void {
    this.send({ realtimeInput: { audio: { data: bytes.toString('base64'), mimeType: `audio/pcm;rate=${INPUT_HZ}` } } });
  }

  private send(message: object): void {
    if (!this.ws) return void this.outbox.push(message);
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(message));
  }

  private emit(event: RealtimeEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  private nextId(prefix: string): string {
    return `${prefix}_${++this.ids}`;
  }

  /** The caller is speaking: a turn opens unless one is open (late words join the turn being answered). */
  private heardCaller(announce = true): Line {
    if (this.user) return this.user.line;
    const line: Line = { role: 'user', text: '' };
    this.history.push(line);
    this.user = { itemId: this.nextId('user'), line, stopped: false };
    if (announce) this.emit({ type: 'speech_started' });
    return line;
  }

  /** The model's reply in hand, begun by its first audio, words or call. */
  private reply(): { id: string; itemId: string } {
    if (this.response) return this.response;
    if (this.user && !this.user.stopped) {
      this.user.stopped = true;
      this.emit({ type: 'speech_stopped', itemId: this.user.itemId });
    }
    const response = { id: this.nextId('resp'), itemId: this.nextId('item') };
    this.response = response;
    const line: Line = { role: 'model', text: '' };
    this.history.push(line);
    this.items.set(response.itemId, { line, text: '', audioMs: 0 });
    this.emit({ type: 'response_started', responseId: response.id });
    return response;
  }

  private endResponse(status: 'completed' | 'cancelled'): void {
    const r = this.response;
    if (!r) return;
    this.response = undefined;
    const usage = this.usage;
    this.usage = undefined;
    this.emit({ type: 'response_done', responseId: r.id, status, ...(usage ? { usage } : {}) });
    // The caller's turn this reply answered, in their words so far.
    if (this.user?.stopped) {
      const { itemId, line } = this.user;
      this.user = undefined;
      line.text = line.text.trim();
      this.emit({ type: 'user_transcript', itemId, text: line.text });
    }
    if (this.renewWhenIdle) this.renew();
  }

  private receive(raw: string): void {
    let m: ServerMessage;
    try {
      m = JSON.parse(raw) as ServerMessage;
    } catch {
      return this.emit({ type: 'error', message: 'the server sent a message that is not JSON' });
    }
    if (m.usageMetadata) this.usage = { promptTokens: m.usageMetadata.promptTokenCount ?? 0, completionTokens: m.usageMetadata.responseTokenCount ?? 0 };
    const c = m.serverContent;
    if (c) {
      if (c.interrupted) {
        // The barge-in first (the caller heard part of the reply), then the reply's end, as cut.
        this.emit({ type: 'speech_started' });
        this.endResponse('cancelled');
        this.heardCaller(false);
      }
      if (c.inputTranscription?.text) this.heardCaller().text += c.inputTranscription.text;
      for (const part of c.modelTurn?.parts ?? []) {
        if (!part.inlineData?.data || !part.inlineData.mimeType?.startsWith('audio/pcm')) continue;
        const r = this.reply();
        const pcm = bytesToPcm(Buffer.from(part.inlineData.data, 'base64'));
        const rate = Number(/rate=(\d+)/.exec(part.inlineData.mimeType)?.[1] ?? OUTPUT_HZ);
        this.items.get(r.itemId)!.audioMs += (pcm.length * 1000) / rate;
        this.emit({ type: 'audio', responseId: r.id, itemId: r.itemId, pcm: resample(pcm, rate, this.sampleRateHz) });
      }
      if (c.outputTranscription?.text) {
        const r = this.reply();
        const item = this.items.get(r.itemId)!;
        item.text += c.outputTranscription.text;
        item.line.text = item.text;
        this.emit({ type: 'transcript', responseId: r.id, itemId: r.itemId, text: c.outputTranscription.text });
      }
      if (c.turnComplete) this.endResponse('completed');
    }
    if (m.toolCall?.functionCalls?.length) {
      const r = this.reply();
      for (const call of m.toolCall.functionCalls) {
        const id = call.id ?? this.nextId('call');
        const made = { name: call.name ?? '', arguments: JSON.stringify(call.args ?? {}) };
        this.calls.set(id, made);
        this.emit({ type: 'function_call', responseId: r.id, call: { id, ...made } });
      }
      // The model waits for the results: the reply is done.
      this.endResponse('completed');
    }
    if (m.toolCallCancellation?.ids) {
      const gone = new Set(m.toolCallCancellation.ids);
      this.pendingTools = this.pendingTools.filter((t) => !gone.has(t.id));
    }
    if (m.goAway) {
      if (this.response) this.renewWhenIdle = true;
      else this.renew();
    }
  }
}

/**
 * The flow engine's LLM when a realtime model carries the call. The engine runs unchanged: it asks
 * for a reply with the whole context, as it asks a chat model. This adapter mirrors onto the
 * realtime session only what the model does not already hold (function results, a keypress, a
 * line the TTS spoke), updates the session when the node's instructions, tools or the call's
 * language changed (switch_language: the language line joins the instructions), and
 * hands back the model's next reply: the one the server started by itself after the caller's turn,
 * or one it asks for. Replies are given whole when they are done, their text cut to what the caller
 * heard when a barge-in truncated them first.
 *
 * Terminology
 * - response: one reply of the model (audio, its transcript, function calls), `response.created` to `response.done`.
 * - claimed: handed to the engine by `chat`; a response the server started waits unclaimed until then.
 */
import type { ChatMessage, ChatRequest, LLM, LlmEvent, RealtimeEvent, RealtimeSession, RealtimeSessionConfig, ToolCall } from '../services.js';
import { ServiceError } from '../services.js';

interface Response {
  id: string;
  text: string;
  calls: ToolCall[];
  /** The share of its audio the caller heard, when a barge-in cut it. */
  heard?: number;
  done?: { status: string; usage?: { promptTokens: number; completionTokens: number } };
  claimed: boolean;
  /** The text was handed to the engine whole. */
  delivered: boolean;
  wake: () => void;
  changed: Promise<void>;
}

/** The first `fraction` of `text`, ending at a word. */
export function heardPart(text: string, fraction: number): string {
  if (fraction >= 1) return text;
  const cut = text.slice(0, Math.round(text.length * Math.max(0, fraction)));
  const words = cut.length < text.length && !/\s/.test(text[cut.length] ?? ' ') ? cut.replace(/\S*$/, '') : cut;
  return words.trim();
}

export class RealtimeBrain implements LLM {
  readonly voiced = true;
  private session: RealtimeSession | undefined;
  private readonly known = new WeakSet<ChatMessage>();
  /** Caller turns the model heard as audio, not yet matched with the engine's user message. */
  private heardTurns = 0;
  /** Lines the TTS spoke (tts_say, an apology), to tell the model about. */
  private readonly spokenLocally: string[] = [];
  private config = '';
  private readonly responses: Response[] = [];
  /** chat() calls waiting for the response they asked for. */
  private readonly waiting: Array<(r: Response) => void> = [];
  private failure: string | undefined;
  /** Replies asked for by a request that was given up (a barge-in): dropped when they start. */
  private orphans = 0;

  /** `onDelivered`: a response's words reached the engine (in the order of the engine's replies). */
  constructor(
    readonly label: string,
    readonly model: string,
    private readonly options: {
      temperature?: number;
      onDelivered?: (responseId: string) => void;
      /** The language the call speaks now (its switches come with the instruction line that names it). */
      language?: () => string | undefined;
    } = {},
  ) {}

  attach(session: RealtimeSession): void {
    this.session = session;
  }

  /** A reply was asked for (or is being streamed to the engine) and has not ended. */
  get awaiting(): boolean {
    return this.waiting.length > 0 || this.responses.some((r) => r.claimed && !r.done);
  }

  /** The caller's turn reached the engine as text, but the model heard it as audio. */
  heardCaller(): void {
    this.heardTurns++;
  }

  /** A line the TTS spoke on the call (the model did not say it). */
  spokeLocally(text: string): void {
    this.spokenLocally.push(text);
  }

  /** The session failed: every reply waited for ends with this error. */
  fail(message: string): void {
    this.failure = message;
    for (const w of this.waiting.splice(0)) w(this.newResponse(''));
    for (const r of this.responses) r.wake();
  }

  /** A barge-in cut response `id` after `fraction` of its audio. Returns whether its text already reached the engine. */
  cut(id: string, fraction: number): boolean {
    const r = this.responses.find((x) => x.id === id);
    if (!r) return false;
    r.heard = fraction;
    return r.delivered;
  }

  /**
   * Response `id` is one a request waits for and it has not ended: once it does (cancelled, as
   * the server cuts it) the request gets its words as far as the caller heard them.
   */
  finishing(id: string): boolean {
    const r = this.responses.find((x) => x.id === id);
    return !!r && r.claimed && !r.done && !r.delivered;
  }

  /** The text of response `id` as far as the caller heard it. */
  heardText(id: string): string {
    const r = this.responses.find((x) => x.id === id);
    return r ? heardPart(r.text, r.heard ?? 1) : '';
  }

  /** Feeds the session's events in. */
  event(e: RealtimeEvent): void {
    if (e.type === 'response_started') {
      const r = this.newResponse(e.responseId);
      this.responses.push(r);
      const waiter = this.waiting.shift();
      if (waiter || this.orphans > 0) r.claimed = true;
      if (waiter) waiter(r);
      else if (this.orphans > 0) this.orphans--;
      return;
    }
    if (e.type !== 'transcript' && e.type !== 'function_call' && e.type !== 'response_done') return;
    const r = this.responses.find((x) => x.id === e.responseId);
    if (!r) return;
    if (e.type === 'transcript') r.text += e.text;
    else if (e.type === 'function_call') r.calls.push(e.call);
    else r.done = { status: e.status, ...(e.usage ? { usage: e.usage } : {}) };
    r.wake();
  }

  async *chat(request: ChatRequest): AsyncIterable<LlmEvent> {
    const session = this.session;
    if (!session || this.failure) throw new ServiceError(this.label, this.failure ?? 'no session', false);
    this.mirror(request.messages, session);
    const config: RealtimeSessionConfig = {
      instructions: request.messages.filter((m) => m.role === 'system').map((m) => m.content).join('\n\n'),
      tools: request.tools ?? [],
      ...(this.options.temperature !== undefined ? { temperature: this.options.temperature } : {}),
    };
    const language = this.options.language?.();
    if (language) config.language = language;
    const key = JSON.stringify(config);
    if (key !== this.config) {
      this.config = key;
      session.update(config);
    }
    let response = this.responses.find((r) => !r.claimed);
    if (response) response.claimed = true;
    else {
      let take!: (r: Response) => void;
      const asked = new Promise<Response>((resolve) => (take = resolve));
      this.waiting.push(take);
      session.createResponse();
      try {
        response = await abortable(asked, request.signal);
      } catch (err) {
        // The reply asked for is no one's now: it must not answer a later request.
        const at = this.waiting.indexOf(take);
        if (at >= 0) {
          this.waiting.splice(at, 1);
          this.orphans++;
        }
        throw err;
      }
    }
    while (!response.done && !this.failure) await abortable(response.changed, request.signal);
    if (this.failure) throw new ServiceError(this.label, this.failure, false);
    // Handed over whole, as far as the caller heard it; older responses are no longer needed.
    response.delivered = true;
    this.options.onDelivered?.(response.id);
    const text = heardPart(response.text, response.heard ?? 1);
    // Replies handed over are kept a while: a barge-in may still cut one the turn holds.
    while (this.responses.length > 16 && this.responses[0]!.delivered) this.responses.shift();
    if (text) yield { type: 'text', text };
    if (response.done!.status !== 'cancelled') for (const call of response.calls) yield { type: 'tool_call', call };
    yield { type: 'done', finishReason: response.done!.status, ...(response.done!.usage ? { usage: response.done!.usage } : {}) };
  }

  sync(messages: ChatMessage[]): void {
    if (this.session && !this.failure) this.mirror(messages, this.session);
  }

  /** Sends what the model does not hold yet. System messages become the session's instructions. */
  private mirror(messages: ChatMessage[], session: RealtimeSession): void {
    for (const m of messages) {
      if (this.known.has(m)) continue;
      this.known.add(m);
      if (m.role === 'user') {
        if (this.heardTurns > 0) this.heardTurns--;
        else session.addMessage('user', m.content);
      } else if (m.role === 'tool') session.functionOutput(m.tool_call_id, m.content);
      else if (m.role === 'assistant' && !m.tool_calls && m.content) {
        const at = this.spokenLocally.indexOf(m.content);
        if (at >= 0) {
          this.spokenLocally.splice(at, 1);
          session.addMessage('assistant', m.content);
        }
      }
    }
  }

  private newResponse(id: string): Response {
    const r = { id, text: '', calls: [], claimed: false, delivered: false } as unknown as Response;
    const arm = () => {
      r.changed = new Promise<void>((resolve) => {
        r.wake = () => {
          arm();
          resolve();
        };
      });
    };
    arm();
    return r;
  }
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => (signal.removeEventListener('abort', onAbort), resolve(v)),
      (err: unknown) => (signal.removeEventListener('abort', onAbort), reject(err)),
    );
  });
}

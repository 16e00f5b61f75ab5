/**
 * The conversation's spans, under the call's root span (the `traceContext` of the CallContext):
 *
 *   turn                one agent turn: from the caller's first words (or the prompt that started it)
 *                       until its reply was heard, cut by a barge-in, or the call ended
 *     stt               the caller's speech until its final words were known
 *     llm               one LLM request (a turn has more than one when the LLM calls functions)
 *     hook              one template HTTP hook of a function the LLM called
 *     tts               one sentence spoken
 *
 * Only `@opentelemetry/api` is used here; when the call is not traced (no SDK registered, or no
 * context given) nothing is created and no attribute is computed. Times are performance.now()
 * values (the SDK maps them to the wall clock); durations are attributes in ms.
 */
import { SpanStatusCode, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';

export const VOICE_TRACER = 'dialer.voice';

/**
 * performance.now() to wall-clock epoch milliseconds, through the current offset between the two
 * clocks (they drift apart on a long-running process, so `timeOrigin + at` would not do). Span
 * times are given as performance.now() values: the SDK corrects them the same way.
 */
export const wallClockMs = (at: number): number => Date.now() - (performance.now() - at);

const round = (ms: number) => Math.round(ms * 10) / 10;

/** A child span of `parent`, or undefined when the parent is absent or not recorded. */
export function childSpan(parent: Context | undefined, name: string, attributes: Attributes = {}, startedAt?: number): Span | undefined {
  if (!parent || !trace.getSpan(parent)?.isRecording()) return undefined;
  return trace.getTracer(VOICE_TRACER).startSpan(name, { attributes, ...(startedAt !== undefined ? { startTime: startedAt } : {}) }, parent);
}

/** Ends a span as failed, with the error recorded on it. */
export function failSpan(span: Span | undefined, err: unknown): void {
  if (!span) return;
  const error = err instanceof Error ? err : new Error(String(err));
  span.recordException(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
}

export type TurnKind = 'greeting' | 'user' | 'dtmf' | 'idle';

interface OpenTurn {
  span: Span;
  startedAt: number;
  context: Context;
  heard: string[];
}

/** The spans of one conversation: its turns and what happens in them. */
export class CallTrace {
  private readonly turns = new Map<number, OpenTurn>();
  /** Whether this call is traced at all. */
  readonly recording: boolean;

  constructor(
    private readonly parent: Context | undefined,
    /** Labels of the services, for the stt and tts spans. */
    readonly services: { stt: string; tts: string },
  ) {
    this.recording = parent !== undefined && trace.getSpan(parent)?.isRecording() === true;
  }

  /** Opens the span of agent turn `turn`, started at `startedAt` (performance.now()). */
  startTurn(turn: number, kind: TurnKind, startedAt: number, input?: string): void {
    if (!this.recording) return;
    const span = childSpan(this.parent, 'turn', { 'dialer.turn.index': turn, 'dialer.turn.kind': kind, ...(input ? { 'langfuse.observation.input': input } : {}) }, startedAt)!;
    this.turns.set(turn, { span, startedAt, context: trace.setSpan(this.parent!, span), heard: [] });
  }

  /** The context of turn `turn` (the parent of its stt, llm, tts and hook spans); the call's when the turn is unknown or over. */
  context(turn: number | undefined): Context | undefined {
    if (!this.recording) return undefined;
    return (turn !== undefined ? this.turns.get(turn)?.context : undefined) ?? this.parent;
  }

  /** The caller's speech, from its start to the STT's final words (recorded after the fact). */
  stt(turn: number, speech: { startedAt: number; endedAt: number; finalWaitMs: number; text: string }): void {
    const span = childSpan(this.context(turn), 'stt', {}, speech.startedAt);
    if (!span) return;
    const doneAt = speech.endedAt + speech.finalWaitMs;
    span.setAttributes({
      'dialer.stt.service': this.services.stt,
      'dialer.stt.speech_ms': round(speech.endedAt - speech.startedAt),
      'dialer.stt.final_wait_ms': round(speech.finalWaitMs),
      'dialer.stt.characters': speech.text.length,
      'dialer.duration_ms': round(doneAt - speech.startedAt),
      'langfuse.observation.output': speech.text,
    });
    span.end(doneAt);
  }

  /** The first audio of the turn went out: its latency from the end of the caller's speech. */
  latency(turn: number, latencyMs: number, overheadMs: number): void {
    this.turns.get(turn)?.span.setAttributes({ 'dialer.turn.latency_ms': round(latencyMs), 'dialer.turn.overhead_ms': round(overheadMs) });
  }

  /** How the caller's turn that started agent turn `turn` was taken as over (`dialer.turn.end_reason`). */
  endReason(turn: number, reason: string): void {
    this.turns.get(turn)?.span.setAttribute('dialer.turn.end_reason', reason);
  }

  /**
   * Speech over the agent was judged (`kind`: words, duration, speech, ignored_backchannel,
   * ignored_noise): an event on the newest open turn (the one being heard), as `dialer.barge_in.kind`.
   */
  bargeIn(kind: string, text: string, afterMs: number): void {
    const open = [...this.turns.values()].pop();
    open?.span.addEvent('barge_in', { 'dialer.barge_in.kind': kind, 'dialer.barge_in.text': text, 'dialer.barge_in.after_ms': afterMs });
    if (open && kind !== 'ignored_backchannel' && kind !== 'ignored_noise') open.span.setAttribute('dialer.barge_in.kind', kind);
  }

  /** A sentence of the turn was heard in full. */
  heard(turn: number, text: string): void {
    this.turns.get(turn)?.heard.push(text);
  }

  /** The turn is over: its reply heard, cut by a barge-in (`interrupted`), or the call ended. */
  endTurn(turn: number, how: { interrupted?: boolean; node?: string } = {}): void {
    const open = this.turns.get(turn);
    if (!open) return;
    this.turns.delete(turn);
    open.span.setAttributes({
      'dialer.turn.interrupted': how.interrupted ?? false,
      ...(how.node ? { 'dialer.node': how.node } : {}),
      'dialer.duration_ms': round(performance.now() - open.startedAt),
      ...(open.heard.length ? { 'langfuse.observation.output': open.heard.join(' ') } : {}),
    });
    open.span.end();
  }

  /** The call is over: turns still open end now. */
  close(node?: string): void {
    for (const turn of [...this.turns.keys()]) this.endTurn(turn, { ...(node ? { node } : {}) });
  }
}

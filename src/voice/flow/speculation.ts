/**
 * A caller turn taken before its end was confirmed (a speculative reply): the conversation can be
 * taken back to before it, and what its LLM requests cost is counted as cancelled if it is dropped.
 */
import type { ChatMessage, LlmUsage } from '../services.js';
import type { FlowRecord, FlowUsage } from './types.js';

export function emptyUsage(): FlowUsage {
  return { promptTokens: 0, completionTokens: 0, cancelled: { requests: 0, promptTokens: 0, completionTokens: 0 } };
}

/** Adds `usage` to the totals and returns it. */
export function addUsage(total: FlowUsage, usage: LlmUsage): LlmUsage {
  total.promptTokens += usage.promptTokens;
  total.completionTokens += usage.completionTokens;
  return usage;
}

/**
 * What a request cut off before its usage came cost, estimated: the stream's own count comes only
 * at its end; a prompt is about four characters a token, a streamed piece about one token.
 */
export function estimateUsage(messages: ChatMessage[], pieces: number): LlmUsage {
  return { promptTokens: Math.ceil(JSON.stringify(messages).length / 4), completionTokens: pieces };
}

export class Tentative {
  /** What its requests cost (in the totals already). */
  private readonly spent = { requests: 0, promptTokens: 0, completionTokens: 0 };
  private readonly context: number;
  private readonly transcription: number;

  constructor(
    context: ChatMessage[],
    record: FlowRecord,
    /** The verdict: true once the caller's turn is confirmed over. */
    readonly confirmed: Promise<boolean>,
  ) {
    this.context = context.length;
    this.transcription = record.transcription.length;
  }

  /** One of its LLM requests ended (finished or cut off) with this usage. */
  charge(usage: LlmUsage): void {
    this.spent.requests++;
    this.spent.promptTokens += usage.promptTokens;
    this.spent.completionTokens += usage.completionTokens;
  }

  /** The caller went on: the turn's words and replies are taken out, its cost counted as cancelled. */
  rollBack(context: ChatMessage[], record: FlowRecord): void {
    context.splice(this.context);
    record.transcription.splice(this.transcription);
    const c = record.usage.cancelled;
    c.requests += this.spent.requests;
    c.promptTokens += this.spent.promptTokens;
    c.completionTokens += this.spent.completionTokens;
  }
}

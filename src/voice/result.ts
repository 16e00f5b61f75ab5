/**
 * What a template conversation leaves on the lead, whichever way its flow ran (the chat pipeline or
 * a realtime model): the flow's variables, the outcome, the cost of the AI services, the
 * post-call analysis, the trace scores and the metaData.
 */
import type { Pricing } from '../config/voice.js';
import type { CallContext } from './agent.js';
import { CALLBACK_REQUESTED, OPTED_OUT } from './flow/builtins.js';
import type { FlowRecord } from './flow/types.js';
import type { Flow } from './flow/schema.js';
import type { LLM } from './services.js';
import { analyseCall, type Analysis } from './analysis.js';
import type { DisclosureRecord } from './disclosure.js';
import { percentile } from './metrics.js';

/** The flow's `{variable}` values: the call's own, then the lead's payload (the payload wins on a clash). */
export function flowVariables(context: CallContext): Record<string, unknown> {
  return {
    call_id: context.callId,
    from_number: context.ourNumber,
    to_number: context.theirNumber,
    call_direction: context.direction,
    ...context.payload,
  };
}

/** The lead outcome of a conversation: a give-up's (voicemail), an opt-out, the flow's, a callback, or no response after a timeout. */
export function conversationOutcome(record: FlowRecord, endedBy: string | undefined, giveUpOutcome?: string): string | undefined {
  return giveUpOutcome ?? (record.opted_out ? OPTED_OUT : record.outcome) ?? (record.callback ? CALLBACK_REQUESTED : endedBy === 'timeout' ? 'no_response' : undefined);
}

/**
 * The AI services' cost of a call, rounded to 1/10,000: telephony and speech-to-text by the minute,
 * the chat LLM's or the realtime model's tokens, the TTS's characters.
 */
export function conversationCost(pricing: Pricing, spent: { minutes: number; usage: FlowRecord['usage']; spokenCharacters: number; realtime?: boolean }): number {
  const { minutes, usage } = spent;
  const perMillion = spent.realtime
    ? { input: pricing.realtimeInputPerMillionTokens, output: pricing.realtimeOutputPerMillionTokens }
    : { input: pricing.llmInputPerMillionTokens, output: pricing.llmOutputPerMillionTokens };
  const cost =
    minutes * (pricing.telephonyPerMinute + (spent.realtime ? 0 : pricing.sttPerMinute)) +
    (usage.promptTokens * perMillion.input + usage.completionTokens * perMillion.output) / 1e6 +
    (spent.spokenCharacters * pricing.ttsPerMillionCharacters) / 1e6;
  return Math.round(cost * 10_000) / 10_000;
}

/** The template's post-call analysis: one bounded LLM request; a failure is an error of the record, nothing more. */
export async function postCallAnalysis(llm: LLM, flow: Flow, record: FlowRecord, errors: string[], timeoutMs = 20_000): Promise<Analysis | undefined> {
  const spec = flow.post_call_analysis;
  if (!spec || record.transcription.length === 0) return undefined;
  const done = await analyseCall(llm, spec, record.transcription, { timeoutMs });
  if (done.error) errors.push(`post-call analysis failed: ${done.error}`);
  return done.analysis;
}

/** What a conversation measured, for its trace scores. */
export interface ConversationFigures {
  interruptions: number;
  /** From the end of each caller turn to the reply's first audio. */
  turnLatenciesMs: number[];
  mediaFrames: number;
  mediaFramesLate: number;
  outputFrames: number;
  outputFramesLate: number;
  sentiment: number | undefined;
}

/** The call's trace scores: interruptions, turns, frames against the clock, reply latency at p50 and p95, sentiment. */
export function traceScores(f: ConversationFigures): Record<string, number> {
  const scores: Record<string, number> = {
    interruptions: f.interruptions,
    turns: f.turnLatenciesMs.length,
    media_frames: f.mediaFrames,
    media_frames_late: f.mediaFramesLate,
    output_frames: f.outputFrames,
    output_frames_late: f.outputFramesLate,
  };
  const p50 = percentile(f.turnLatenciesMs, 50);
  const p95 = percentile(f.turnLatenciesMs, 95);
  if (p50 !== undefined) scores.turn_latency_p50_ms = Math.round(p50);
  if (p95 !== undefined) scores.turn_latency_p95_ms = Math.round(p95);
  if (f.sentiment !== undefined) scores.sentiment = f.sentiment;
  return scores;
}

/** What the call adds to its flow's record in metaData, on either agent. */
export interface CallFacts {
  disclosure?: DisclosureRecord | undefined;
  endedBy: string | undefined;
  /** The agent's own errors (the record's come first). */
  errors: string[];
  turnLatenciesMs: number[];
  dtmf: string[];
  analysis: Analysis | undefined;
  transferredTo: string | undefined;
}

/**
 * The lead's metaData from the flow's record, the same whichever agent ran the flow: the transcript
 * and path, the end, the errors and usage, and each thing the flow did only when it did it.
 */
export function flowMetaData(record: FlowRecord, facts: CallFacts): Record<string, unknown> {
  return {
    transcription: record.transcription,
    ...(facts.disclosure ? { disclosure: facts.disclosure } : {}),
    node_traversal: record.node_traversal,
    function_calls: record.function_calls,
    call_ended_by: facts.endedBy,
    errors: [...record.errors, ...facts.errors],
    usage: record.usage,
    turn_latency_ms: facts.turnLatenciesMs.map(Math.round),
    ...(facts.dtmf.length ? { dtmf: facts.dtmf.join('') } : {}),
    ...(record.opted_out ? { opted_out: record.opted_out } : {}),
    ...(record.callback ? { callback: record.callback } : {}),
    ...(record.knowledge.length ? { knowledge: record.knowledge } : {}),
    ...(record.language_switches.length ? { language_switches: record.language_switches } : {}),
    ...(record.warm_transfers.length ? { warm_transfers: record.warm_transfers } : {}),
    ...(facts.analysis ? { analysis: facts.analysis } : {}),
    ...(facts.transferredTo ? { transfer_number: facts.transferredTo } : {}),
  };
}

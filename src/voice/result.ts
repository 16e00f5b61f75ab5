/**
 * What a template conversation leaves on the lead, whichever way its flow ran (the chat pipeline or
 * a realtime model): the flow's variables, the outcome, the cost of the AI services, and the
 * post-call analysis.
 */
import type { Pricing } from '../config/voice.js';
import type { CallContext } from './agent.js';
import { CALLBACK_REQUESTED, OPTED_OUT } from './flow/builtins.js';
import type { FlowRecord } from './flow/types.js';
import type { Flow } from './flow/schema.js';
import type { LLM } from './services.js';
import { analyseCall, type Analysis } from './analysis.js';

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

/**
 * A warm transfer as the flow runs it (a function's `warm_transfer`): the caller hears the hold
 * message while the human is called and briefed (`FlowDeps.warmTransfer`), then the human's decision
 * decides what follows: the bridge (the agent leaves), the agent again (declined), or a callback and
 * goodbye (nobody answered). What it says is in briefing.ts.
 */
import { recordingAt } from '../agent.js';
import { callbackAt, DECLINED_MESSAGE, HOLD_MESSAGE, NO_ANSWER_MESSAGE, writeBriefing } from './briefing.js';
import type { FlowFunction, WarmTransfer } from './schema.js';
import { addUsage } from './speculation.js';
import type { AgentAction, FlowDeps, FlowRecord, WarmTransferRecord } from './types.js';

/** The function that transfers warm, as it was called. */
export interface WarmCall {
  settings: WarmTransfer;
  fn: FlowFunction;
  args: Record<string, unknown>;
  /** Its tool result so far (hooks), when the LLM called it. */
  result?: Record<string, unknown>;
}

/** What a warm transfer may do to the conversation (the engine's own moves). */
export interface WarmHost {
  node: string;
  record: FlowRecord;
  deps: FlowDeps;
  fill(text: string): string;
  /** Answers the LLM's call of the function (absent for a `function` action). */
  toolResult?(result: Record<string, unknown>): void;
  say(text: string): AsyncGenerator<AgentAction>;
  end(): AsyncGenerator<AgentAction>;
  /** The caller is bridged to the human: the agent leaves. */
  transfer(): AsyncGenerator<AgentAction>;
}

const NOTES: Record<string, string> = {
  accepted: 'The caller is now talking to the human.',
  declined: 'The human declined: go on helping the caller yourself.',
};

/** Runs a warm transfer; the turn is over after it (bridged, declined and the caller told, or ended with a callback). */
export async function* warmTransfer(host: WarmHost, to: string, w: WarmCall): AsyncGenerator<AgentAction> {
  const { record, deps } = host;
  const hold = host.fill(w.settings.hold_message ?? HOLD_MESSAGE);
  // Kept out of the LLM's context (it sits between a function call and its result here). The space
  // ends the sentence, so it is spoken now rather than when this (long) turn is over.
  record.transcription.push({ role: 'assistant', content: hold, node: host.node, ...recordingAt(deps.recordingMs?.()) });
  yield { type: 'say', text: `${hold} ` };
  const name = deps.variables.customer_name;
  const writing = writeBriefing(w.settings, {
    llm: deps.writer ?? deps.llm,
    fill: host.fill,
    customerName: typeof name === 'string' && name.trim() ? name.trim() : undefined,
    transcription: record.transcription,
    usage: (used) => addUsage(record.usage, used),
    error: (message) => record.errors.push(message),
  });
  const decision = await deps.warmTransfer!({ to, briefing: writing.then((b) => b.text) });
  const briefing = await writing;
  const warm: WarmTransferRecord = { to, node: host.node, function: w.fn.name, briefing: briefing.text, briefing_source: briefing.source, ...decision };
  if (decision.error) record.errors.push(`warm transfer to ${to}: ${decision.error}`);
  record.warm_transfers.push(warm);
  host.toolResult?.({ ...w.result, transfer: decision.decision, note: NOTES[decision.decision] ?? 'Nobody answered: the caller will be called back.' });
  if (decision.decision === 'accepted') return yield* host.transfer();
  if (decision.decision === 'declined') return yield* host.say(host.fill(w.settings.declined_message ?? DECLINED_MESSAGE));
  const at = callbackAt(w.settings, deps.now?.() ?? new Date());
  warm.callback_at = at;
  record.callback = { at, requested: at, reason: `warm transfer: the human at ${to} was not reached (${decision.decision})` };
  yield* host.say(host.fill(w.settings.no_answer_message ?? NO_ANSWER_MESSAGE));
  yield* host.end();
}

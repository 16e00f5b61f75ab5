/**
 * The flow engine's public shape: it runs a template's flow (schema.ts) turn by turn
 * with pipecat-flows semantics and tells the pipeline what to do. It knows nothing of audio.
 *
 * Terminology
 * - turn: the caller said something (one final transcript) and the agent answers.
 * - action: what the pipeline must do now: speak text, end the call, transfer it.
 * - record: what the conversation leaves on the lead (metaData fields, outcome, usage).
 */
import type { Context } from '@opentelemetry/api';
import type { Flow } from './schema.js';
import type { OutboundFetch } from '../../lib/outbound/index.js';
import type { LLM, LlmUsage, SearchKnowledge } from '../services.js';
import type { KnowledgeLookup } from './builtins.js';
import type { TurnTakingSettings } from '../turns/settings.js';
import type { LanguageSwitch } from '../language.js';

export type AgentAction =
  /** Speak this text. LLM replies arrive as streamed pieces (the pipeline groups them into sentences). */
  | { type: 'say'; text: string; /** The model already spoke it in its own voice (a realtime model): the text is its transcript, not for the TTS. */ voiced?: true }
  /** The conversation is over (end_conversation); the pipeline lets queued speech finish, then hangs up. */
  | { type: 'end'; outcome?: string }
  /** Move the caller to a human (a function with `transfer_to_number`); `bridged`: a warm transfer already put them through. */
  | { type: 'transfer'; to: string; bridged?: true };

/** A warm transfer to carry out: call the human at `to` and brief them. */
export interface WarmTransferRun {
  to: string;
  /** Written (by the LLM, or from the template) while the human's phone rings. */
  briefing: Promise<string>;
}

/** How a warm transfer's call to the human went. */
export interface WarmTransferDecision {
  decision: 'accepted' | 'declined' | 'no_answer' | 'busy' | 'failed';
  /** How the human decided: a key (1, 2), their words, or not at all (they hung up, or said nothing in time). */
  via?: 'key' | 'voice' | 'hangup' | 'timeout';
  /** The human's words that decided. */
  heard?: string;
  /** In order: dial, answered (or no_answer, busy, failed), briefed, accepted or declined, bridged. */
  events: Array<{ event: string; at: string }>;
  error?: string;
}

/** A warm transfer as the call record keeps it (metaData.warm_transfers). */
export interface WarmTransferRecord extends WarmTransferDecision {
  to: string;
  node: string;
  function: string;
  /** What the human heard before deciding, and where it came from. */
  briefing: string;
  briefing_source: 'template' | 'llm' | 'default';
  /** When nobody answered: the time the lead is called back. */
  callback_at?: string;
}

export interface FunctionCallRecord {
  node: string;
  name: string;
  arguments: Record<string, unknown>;
  /**
   * Hook results, in order, each with the request as sent (method, URL and body after substitution;
   * headers are left out: they may hold secrets). `response`: at most 8 kB of the body (parsed when
   * it is whole JSON; `truncated` when it was cut); `blocked`: the outbound URL policy refused the address.
   */
  hooks: Array<{ name: string; request?: { method: string; url: string; body?: unknown }; status?: number; ok: boolean; durationMs: number; error?: string; response?: unknown; truncated?: boolean; blocked?: boolean }>;
  transition_to?: string;
  /** The number the caller was transferred to (`transfer_to_number`, substituted). */
  transfer_to?: string;
  error?: string;
  at: string;
}

/** One line of what was said. */
export interface TranscriptLine {
  role: 'user' | 'assistant';
  content: string;
  node?: string;
  at_ms?: number;
  /** The disclosure the call opened with (the transcript's first line). */
  disclosure?: true;
  /** The language it was said in, when the template declares languages (agent.languages). */
  language?: string;
}

export interface FlowRecord {
  /** What was said, in order (assistant text as actually spoken when interrupted), each turn with the node it was said in. */
  /** `at_ms`: where the line begins in the call's recording (milliseconds from its start), when the call is recorded. */
  transcription: TranscriptLine[];
  /** Node names in the order they were entered. */
  node_traversal: string[];
  function_calls: FunctionCallRecord[];
  /** Unknown functions, bad arguments, hook failures, LLM errors: the conversation went on. */
  errors: string[];
  /** Set by end_conversation (or the node's `outcome` when the call ends in it). */
  outcome?: string;
  /** The callee asked not to be called again (the built-in opt_out). */
  opted_out?: { reason?: string; at: string };
  /** The callee chose a time to be called back (the built-in schedule_callback); `at` in UTC. */
  callback?: { at: string; requested: string; reason?: string };
  /** Each warm transfer (a function's `warm_transfer`): the briefing, the human's decision and how it went. */
  warm_transfers: WarmTransferRecord[];
  /** Each search of the knowledge base (the built-in search_knowledge): the question and the chunks that answered it. */
  knowledge: KnowledgeLookup[];
  /** Each change of the call's language, and each refused one (agent.languages; voice/language.ts). */
  language_switches: LanguageSwitch[];
  /** Every token the LLM was asked for and produced, cancelled speculative replies included. */
  usage: FlowUsage;
}

export interface FlowUsage extends LlmUsage {
  /**
   * The share of speculative replies the caller talked over: their requests and tokens (a request cut
   * off before the stream's own count came is estimated: a prompt is about four characters a token,
   * a streamed piece one).
   */
  cancelled: { requests: number; promptTokens: number; completionTokens: number };
}

export interface FlowSession {
  /** Enters the initial node (pre_actions, tools, context, LLM when respond_immediately, post_actions). */
  start(signal: AbortSignal): AsyncIterable<AgentAction>;
  /**
   * The caller's turn (a final transcript): the LLM answers, functions run, transitions happen.
   * `confirmed`: the turn is speculative: its reply streams, but nothing with an effect (a function,
   * a transition) runs before it resolves true; false (or an abort) leaves it to `retract`.
   * `startedMsAgo`: how long ago the caller began saying it (the line's `at_ms` is placed there).
   */
  userTurn(text: string, signal: AbortSignal, options?: { confirmed?: Promise<boolean>; startedMsAgo?: number; /** The language the speech-to-text heard the words in. */ language?: string }): AsyncIterable<AgentAction>;
  /** Takes back a speculative turn the caller talked over: its words, reply and record lines (its tokens stay counted). */
  retract(): void;
  /** The caller was silent for the node's idle timeout: the idle prompt (or a short reprompt). */
  idle(signal: AbortSignal): AsyncIterable<AgentAction>;
  /** The caller interrupted the last reply: only `spoken` of it was heard (the context keeps just that). */
  interrupted(spoken: string): void;
  readonly currentNode: string;
  /** The call's languages: `current`, the one it speaks now (undefined: the template declares none). */
  readonly languages?: { readonly current: string | undefined };
  /** The current node's turn-taking settings (`idle_timeout_seconds`, `vad.stop_secs`, `turn_taking` over the flow's). */
  readonly nodeSettings: { idleMs?: number; endOfSpeechMs?: number; turnTaking: TurnTakingSettings };
  readonly record: FlowRecord;
}

export interface FlowDeps {
  llm: LLM;
  /**
   * Writes the text nobody on the call hears (a warm transfer's briefing) when `llm` speaks
   * whatever it writes (a realtime model): a chat model. Absent: `llm` writes it, unless it speaks.
   */
  writer?: LLM;
  /** Lead payload and call values for `{variable}` substitution (call values such as `call_id`, `from_number`, `to_number` next to the payload fields; the payload wins on a clash). */
  variables: Record<string, unknown>;
  /** HTTP for hooks: the outbound URL policy's fetch (by default the strict one, which allows public addresses only). */
  fetch?: OutboundFetch;
  /** Hook timeout when the hook gives none. */
  hookTimeoutMs?: number;
  /** Clock for the record's timestamps. */
  now?: () => Date;
  /** Where the call's recording is now (ms from its start): stamps each transcript line's `at_ms`. */
  recordingMs?: () => number;
  /** The OpenTelemetry context of the turn being run: parent of its `llm` and `hook` spans (none: not traced). */
  traceParent?: () => Context | undefined;
  /** Offer the built-in opt_out function in every node. */
  optOut?: boolean;
  /** Plays keys on the call (the built-in send_dtmf); undefined where keys cannot be pressed. */
  sendDigits?: (digits: string) => Promise<void>;
  /** The call's knowledge base (the built-in search_knowledge); undefined: the call has none. */
  searchKnowledge?: SearchKnowledge;
  /** The template's languages, the first the one the call starts in (agent.languages); none: one language, no instruction. */
  languages?: readonly string[];
  /** The call switched language (switch_language, or a detected one): its speech-to-text and voice follow. */
  onLanguage?: (language: string) => void;
  /** The call's calling-window zone: callback times without an offset are read in it (default UTC). */
  timeZone?: string;
  /**
   * Calls and briefs the human of a warm transfer (and bridges the caller once they accept);
   * undefined where the transport cannot hold a second leg: a warm transfer is then a plain transfer.
   */
  warmTransfer?: (run: WarmTransferRun) => Promise<WarmTransferDecision>;
}

export type CreateFlowSession = (flow: Flow, deps: FlowDeps) => FlowSession;

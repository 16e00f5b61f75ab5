/**
 * Frames: everything that moves through a conversation pipeline (pipecat's model). A frame's
 * category decides what a barge-in does to it:
 * - system frames (start, end, interruption) are handled at once, ahead of anything queued;
 * - data frames (audio, text) are dropped from every queue on an interruption;
 * - control frames (speaking started/stopped, turn boundaries) keep their order and survive it.
 *
 * Terminology
 * - downstream: from the caller towards the agent's voice (audio in -> STT -> flow -> TTS -> audio out).
 * - upstream: back towards the input (e.g. an interruption raised by the VAD travels both ways).
 */
import type { AgentAction } from './flow/types.js';
import type { EndOfTurnDecision, Prosody } from './turns/end-of-turn.js';

export type Direction = 'down' | 'up';

interface Base {
  /** performance.now() when the frame was made (latency figures). */
  readonly at: number;
}

// System frames.
export interface StartFrame extends Base { kind: 'start' }
/** The conversation is over: processors release what they hold. */
export interface EndFrame extends Base { kind: 'end'; reason: 'agent' | 'customer' | 'timeout' | 'error' | 'transfer' }
/** The caller spoke over the agent: drop queued data, stop speaking, clear the transport's playout. */
export interface InterruptionFrame extends Base { kind: 'interruption' }
/**
 * The caller may be speaking over the agent: hold its audio where it is (`level` 0) or play it on
 * quieter (`level` above 0, a gain), until `output_resume` (it was a backchannel) or an interruption.
 */
export interface OutputPauseFrame extends Base { kind: 'output_pause'; level: number }
export interface OutputResumeFrame extends Base { kind: 'output_resume' }
/**
 * A speculative reply: `turn_hold` comes before its first words (its audio is made but kept back),
 * then `turn_release` (the caller's turn is confirmed over: play it) or `turn_cancel` (the caller
 * went on: drop everything of that turn).
 */
export interface TurnHoldFrame extends Base { kind: 'turn_hold' | 'turn_release' | 'turn_cancel'; turn: number }

// Data frames.
/** Caller audio (PCM) as the transport delivered it. */
export interface InputAudioFrame extends Base { kind: 'input_audio'; pcm: Int16Array; sampleRateHz: number }
export interface TranscriptionFrame extends Base { kind: 'transcription'; text: string; final: boolean; /** The language the STT heard, when it detects it. */ language?: string }
/** A piece of the agent's reply text (streamed from the LLM or a tts_say). */
export interface AgentTextFrame extends Base { kind: 'agent_text'; text: string; turn: number; /** The call's language when it was said (the voice speaks it). */ language?: string }
/** A sentence ready to speak. */
export interface SpeakFrame extends Base { kind: 'speak'; text: string; turn: number; language?: string }
/** Agent audio for the transport, with the text it carries (for the record of what was heard). */
export interface OutputAudioFrame extends Base { kind: 'output_audio'; pcm: Int16Array; sampleRateHz: number; text: string; turn: number; last: boolean }

// Control frames.
/** The VAD heard speech start; `startedAt`: when it began (performance.now()), a little before it was sure. */
export interface UserStartedSpeakingFrame extends Base { kind: 'user_started_speaking'; startedAt?: number }
/** The VAD heard speech end; `endedAt`: when it ended (before the silence that proved it). */
export interface UserStoppedSpeakingFrame extends Base {
  kind: 'user_stopped_speaking';
  endedAt?: number;
  prosody?: Prosody;
  /** The caller's audio up to the end of speech, when an end-of-turn model asked for it (`VadProcessor.keepAudio`). */
  audio?: { pcm: Int16Array; sampleRateHz: number };
}
export type UserSpeakingFrame = UserStartedSpeakingFrame | UserStoppedSpeakingFrame;

/** Why a caller's turn was taken as over (the call record's `end_reason`). */
export type TurnEndReason = 'silence' | 'transcript' | 'speculative_hit' | 'speculative_cancel';

/** The caller's turn is over (or, `speculative`, likely over: a reply may start but is held): the words to answer. */
export interface UserTurnFrame extends Base {
  kind: 'user_turn';
  text: string;
  /** The end of the turn is likely, not sure: the reply is held until a `user_turn_verdict`. */
  speculative?: boolean;
  /** How the end was decided (for a speculative turn: what the verdict will say if confirmed). */
  endReason?: TurnEndReason;
  decision?: EndOfTurnDecision;
  speechEndedAt: number;
  /** When the caller started saying these words (the VAD's first speech start of the turn), when known. */
  speechStartedAt?: number;
  /** How long after the end of speech the STT's final words came (service time, not the engine's). */
  sttWaitMs: number;
  /** The language the STT heard the words in (its last final's), when it detects it. */
  language?: string;
}
/** The speculative turn before it is over after all (`confirmed`) or the caller went on (its reply is dropped). */
export interface UserTurnVerdictFrame extends Base { kind: 'user_turn_verdict'; confirmed: boolean }
export interface DtmfFrame extends Base { kind: 'dtmf'; digit: string }
/** The agent's reply (or a flow action) is complete: nothing more will come for this turn. */
export interface AgentActionFrame extends Base { kind: 'agent_action'; action: Exclude<AgentAction, { type: 'say' }>; turn: number }
export interface TurnDoneFrame extends Base { kind: 'turn_done'; turn: number }
/** An interruption cut the agent's reply of `turn`: only `spoken` of it was heard (upstream, from the transport). */
export interface AgentInterruptedFrame extends Base { kind: 'agent_interrupted'; turn: number; spoken: string }
/** Playout of the agent's speech started or finished (from the transport). */
export interface BotSpeakingFrame extends Base { kind: 'bot_started_speaking' | 'bot_stopped_speaking' }

export type SystemFrame = StartFrame | EndFrame | InterruptionFrame | OutputPauseFrame | OutputResumeFrame | TurnHoldFrame;
export type DataFrame = InputAudioFrame | TranscriptionFrame | AgentTextFrame | SpeakFrame | OutputAudioFrame;
export type ControlFrame = UserSpeakingFrame | UserTurnFrame | UserTurnVerdictFrame | DtmfFrame | AgentActionFrame | TurnDoneFrame | BotSpeakingFrame | AgentInterruptedFrame;
export type Frame = SystemFrame | DataFrame | ControlFrame;

const SYSTEM = new Set<Frame['kind']>(['start', 'end', 'interruption', 'output_pause', 'output_resume', 'turn_hold', 'turn_release', 'turn_cancel']);
const DATA = new Set<Frame['kind']>(['input_audio', 'transcription', 'agent_text', 'speak', 'output_audio']);

export const isSystem = (f: Frame): f is SystemFrame => SYSTEM.has(f.kind);
export const isData = (f: Frame): f is DataFrame => DATA.has(f.kind);

type Without<F> = F extends Frame ? Omit<F, 'at'> : never;

/** Makes a frame, stamping its time. */
export function frame<F extends Without<Frame>>(f: F): F & Base {
  return { ...f, at: performance.now() };
}

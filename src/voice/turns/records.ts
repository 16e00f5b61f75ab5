/** What turn-taking leaves in the call record and the trace (each turn's end and each barge-in), and what it is given. */
import type { TurnEndReason } from '../frames.js';
import type { EndOfTurn } from './end-of-turn.js';
import type { TurnTakingSettings } from './settings.js';

/** How speech over the agent was judged (the call record's `barge_in.kind`). */
export type BargeInKind = 'words' | 'duration' | 'speech' | 'ignored_backchannel' | 'ignored_noise';

export interface TurnDecisionRecord {
  end_reason: TurnEndReason;
  words: number;
  /** The wait from the end of speech that confirmed (or would have confirmed) the end. */
  wait_ms?: number;
  eot_probability?: number;
  eot_reason?: string;
}

export interface BargeInRecord {
  kind: BargeInKind;
  /** The words heard over the agent ('' for a noise). */
  text: string;
  /** From the start of the speech to the decision. */
  after_ms: number;
}

export interface TurnTakingOptions {
  settings?: TurnTakingSettings;
  /** The end-of-turn judge; by default the rules with the settings' waits. */
  endOfTurn?: EndOfTurn;
  /** The conversation so far, for an end-of-turn model that reads it (`EndOfTurn.wants.context`). */
  conversation?: () => Array<{ role: 'user' | 'assistant'; content: string }>;
  /** What the agent said last (its question decides what answer is expected). */
  agentSaid?: () => string | undefined;
  onTurn?: (record: TurnDecisionRecord) => void;
  onBargeIn?: (record: BargeInRecord) => void;
  /** The caller started speaking (a reply may be needed soon: a moment to warm connections). */
  onSpeech?: () => void;
  /** How long to wait for the words of a stretch of speech after it ended (an STT without finals, a slow one). */
  finalWaitMs?: number;
  /** Whether the STT gives words while the caller speaks (default true); else speech over the agent waits for its segment's words. */
  interimResults?: boolean;
}

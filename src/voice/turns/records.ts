/** What turn-taking leaves in the call record and the trace: each turn's end and each barge-in. */
import type { TurnEndReason } from '../frames.js';

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

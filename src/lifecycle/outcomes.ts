/**
 * The outcome vocabulary, written once: every outcome Dialer itself gives a lead, with its class.
 * Whatever else a finished lead carries (`confirmed`, `rescheduled`, ...) is a flow's own outcome,
 * given by `end_conversation`: a conversation took place, the callee was reached.
 *
 * Every list of outcomes elsewhere (which attempts are retried, which finished leads get the
 * reporting webhook's failure payload, which leads analytics count as not reached) is derived
 * from OUTCOMES below; none is written out by hand.
 */
import type { CallEnd } from './types.js';

export interface OutcomeClass {
  /** An attempt that ends so goes to RETRY while the lead has retries left (`max_retry`). */
  retried: boolean;
  /** Why the lead ended so, in the words of the reporting webhook's `failureReason`. */
  reason: string;
}

/**
 * Dialer's own outcomes. None of them is a conversation: the callee was not reached (or was never
 * called). Those `retried` are the unreached attempts: busy, no answer, failed to connect, a
 * telephony error, a worker lost; the rest finish the lead at once.
 */
export const OUTCOMES = {
  no_answer: { retried: true, reason: 'The callee did not answer' },
  busy: { retried: true, reason: 'The line was busy' },
  failed: { retried: true, reason: 'The call could not be connected' },
  error: { retried: true, reason: 'The call failed with an error' },
  worker_lost: { retried: true, reason: 'The worker carrying the call stopped' },
  voicemail: { retried: false, reason: 'The call reached voicemail' },
  PRECHECK_FAILED: { retried: false, reason: 'A pre-dial check stopped the call' },
  BLACKLISTED: { retried: false, reason: 'The number is blacklisted' },
  aborted: { retried: false, reason: 'The lead was aborted' },
} as const satisfies Record<string, OutcomeClass>;

export type DialerOutcome = keyof typeof OUTCOMES;

/** The outcome of a conversation whose flow named none. */
export const COMPLETED = 'completed';

/** Outcomes that mean no conversation took place: analytics count them as not reached, the webhook sends its failure payload. */
export const NOT_REACHED_OUTCOMES = Object.keys(OUTCOMES) as DialerOutcome[];

/** Outcomes of an unreached attempt: the lead is tried again while retries remain. */
export const RETRIED_OUTCOMES = NOT_REACHED_OUTCOMES.filter((o) => OUTCOMES[o].retried);

function isDialerOutcome(outcome: string): outcome is DialerOutcome {
  return Object.hasOwn(OUTCOMES, outcome);
}

/** Whether a finished lead's outcome means the callee was reached (a conversation took place). */
export function isReached(outcome: string | null | undefined): boolean {
  return !isDialerOutcome(outcome ?? COMPLETED);
}

/** The reporting webhook's words for an outcome that is not a conversation; undefined for a conversation. */
export function reasonOf(outcome: string): string | undefined {
  return isDialerOutcome(outcome) ? OUTCOMES[outcome].reason : undefined;
}

/** The outcome an attempt's end gives the lead: the flow's own after a conversation, else the way it failed. */
export function outcomeOf(end: CallEnd): string {
  return end.kind === 'completed' ? (end.outcome ?? COMPLETED) : end.kind;
}

/**
 * Whether an attempt that ended so is tried again (retries permitting). Decided by how the call
 * ended, not by a flow's outcome: a conversation is never retried, whatever its flow named it.
 */
export function isRetried(end: CallEnd): boolean {
  return end.kind !== 'completed' && OUTCOMES[end.kind].retried;
}

/** How many retries a lead has and how long it waits before each (its configuration's `max_retry`, `retry_offset`). */
export interface RetryPolicy {
  max_retry: number;
  /** Seconds. */
  retry_offset: number;
}

/** The policy when a lead's configuration disappeared while it was being called. */
export const FALLBACK_RETRY: RetryPolicy = { max_retry: 0, retry_offset: 3600 };

/** Where an attempt leaves its lead: RETRY after `retryInSeconds`, or FINISHED with `outcome`. */
export type Verdict = { status: 'RETRY'; outcome: null; retryInSeconds: number } | { status: 'FINISHED'; outcome: string; retryInSeconds: null };

/**
 * The retry rule: an attempt that may be retried (`retried`) and was attempt number `attempt`
 * (1 for the first) sends its lead to RETRY while `attempt <= max_retry` (so at most
 * `max_retry + 1` attempts); anything else finishes it with `outcome`.
 */
export function verdict(outcome: string, retried: boolean, attempt: number, policy: RetryPolicy | undefined): Verdict {
  const { max_retry, retry_offset } = policy ?? FALLBACK_RETRY;
  if (retried && attempt <= max_retry) return { status: 'RETRY', outcome: null, retryInSeconds: retry_offset };
  return { status: 'FINISHED', outcome, retryInSeconds: null };
}

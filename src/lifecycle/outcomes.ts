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
  /** Whether a conversation took place (the callee was reached). */
  reached: boolean;
  /**
   * An attempt that ends so goes to RETRY while the lead has retries left (`max_retry`), unless
   * the configuration's `retry_policy` says otherwise for this outcome.
   */
  retried: boolean;
  /** Why the lead ended so, in the words of the reporting webhook's `failureReason` (or, reached, of the record). */
  reason: string;
  /** The `retry_policy` rule that decides this outcome when the policy does not name it. */
  ruledAs?: string;
  /**
   * Given to a lead without dialling it (a pre-dial check, the blacklist, an abort): not the
   * outcome of a call, so analytics that count calls leave it out. Every other outcome ends a dial.
   */
  undialled?: true;
}

/**
 * Dialer's own outcomes. Most are not a conversation: the callee was not reached (or was never
 * called). Those `retried` are the unreached attempts: busy, no answer, failed to connect, a
 * telephony error, a worker lost; the rest finish the lead at once. Two follow a conversation
 * that Dialer's built-in functions ended: the callee opted out, or chose a time to be called back
 * (retried then, see `verdict`).
 */
export const OUTCOMES = {
  no_answer: { reached: false, retried: true, reason: 'The callee did not answer' },
  busy: { reached: false, retried: true, reason: 'The line was busy' },
  failed: { reached: false, retried: true, reason: 'The call could not be connected' },
  error: { reached: false, retried: true, reason: 'The call failed with an error' },
  // A worker lost is an error of Dialer's: a policy's rule for `error` decides it unless the policy names it.
  worker_lost: { reached: false, retried: true, reason: 'The worker carrying the call stopped', ruledAs: 'error' },
  voicemail: { reached: false, retried: false, reason: 'The call reached voicemail' },
  voicemail_left: { reached: false, retried: false, reason: 'The call reached voicemail; a message was left' },
  PRECHECK_FAILED: { reached: false, retried: false, reason: 'A pre-dial check stopped the call', undialled: true },
  BLACKLISTED: { reached: false, retried: false, reason: 'The number is blacklisted', undialled: true },
  // Found at dial time on a do-not-call list the configuration honours; metaData.dnc_list names it.
  DNC_LISTED: { reached: false, retried: false, reason: 'The number is on a do-not-call list', undialled: true },
  aborted: { reached: false, retried: false, reason: 'The lead was aborted', undialled: true },
  OPTED_OUT: { reached: true, retried: false, reason: 'The callee asked not to be called again' },
  callback_requested: { reached: true, retried: true, reason: 'The callee asked to be called back' },
} as const satisfies Record<string, OutcomeClass>;

export type DialerOutcome = keyof typeof OUTCOMES;

/** The outcome of a conversation whose flow named none. */
export const COMPLETED = 'completed';

/** Outcomes that mean no conversation took place: analytics count them as not reached, the webhook sends its failure payload. */
export const NOT_REACHED_OUTCOMES = (Object.keys(OUTCOMES) as DialerOutcome[]).filter((o) => !OUTCOMES[o].reached);

/** Outcomes given without a dial: not a call's outcome (analytics' call outcomes leave them out). */
export const UNDIALLED_OUTCOMES = (Object.keys(OUTCOMES) as DialerOutcome[]).filter((o) => (OUTCOMES[o] as OutcomeClass).undialled === true);

/** Outcomes of an unreached attempt: the lead is tried again while retries remain. */
export const RETRIED_OUTCOMES = NOT_REACHED_OUTCOMES.filter((o) => OUTCOMES[o].retried);

/**
 * Attempts that count as failures for a campaign's circuit breaker: the line was busy, the carrier
 * could not connect the call, or the call failed with an error. A callee who did not answer is not
 * a failure of the campaign's numbers or its provider.
 */
export const BREAKER_FAILURES: readonly DialerOutcome[] = ['busy', 'failed', 'error'];

function isDialerOutcome(outcome: string): outcome is DialerOutcome {
  return Object.hasOwn(OUTCOMES, outcome);
}

/** Whether a finished lead's outcome means the callee was reached (a conversation took place). */
export function isReached(outcome: string | null | undefined): boolean {
  const o = outcome ?? COMPLETED;
  return !isDialerOutcome(o) || OUTCOMES[o].reached;
}

/** The reporting webhook's words for an outcome that is not a conversation; undefined for a conversation. */
export function reasonOf(outcome: string): string | undefined {
  return isDialerOutcome(outcome) && !OUTCOMES[outcome].reached ? OUTCOMES[outcome].reason : undefined;
}

/**
 * The outcome an attempt's end gives the lead: the flow's own after a conversation, else the way it
 * failed. A conversation the callee opted out of is OPTED_OUT whatever else the flow named it.
 */
export function outcomeOf(end: CallEnd): string {
  if (end.kind !== 'completed') return end.kind;
  if (end.metaData?.opted_out) return 'OPTED_OUT';
  return end.outcome ?? COMPLETED;
}

/**
 * Whether an attempt that ended so is tried again by default (retries permitting): an unreached
 * attempt, or a conversation that ended with a callback the callee asked for. Any other
 * conversation is not, whatever its flow named it; a configuration's `retry_policy` may say
 * otherwise for an outcome (see `verdict`).
 */
export function isRetried(end: CallEnd): boolean {
  if (end.kind !== 'completed') return OUTCOMES[end.kind].retried;
  return callbackOf(end) !== undefined && !end.metaData?.opted_out;
}

/** The time the callee chose to be called back at (the built-in schedule_callback), when there is one. */
export function callbackOf(end: CallEnd): Date | undefined {
  if (end.kind !== 'completed') return undefined;
  const at = (end.metaData?.callback as { at?: unknown } | undefined)?.at;
  const date = typeof at === 'string' ? new Date(at) : undefined;
  return date && Number.isFinite(date.getTime()) ? date : undefined;
}

/** Per outcome: whether it is retried and after how many seconds (a configuration's `retry_policy`). */
export type OutcomeRetryRules = Readonly<Record<string, { retry: boolean; after_seconds?: number | undefined }>>;

/**
 * How many retries a lead has and how long it waits before each (its configuration's `max_retry`,
 * `retry_offset`), and the configuration's own rule per outcome, when it has one.
 */
export interface RetryPolicy {
  max_retry: number;
  /** Seconds. */
  retry_offset: number;
  retry_policy?: OutcomeRetryRules | null;
}

/** The policy when a lead's configuration disappeared while it was being called. */
export const FALLBACK_RETRY: RetryPolicy = { max_retry: 0, retry_offset: 3600 };

/** Where an attempt leaves its lead: RETRY after `retryInSeconds` (or at `retryAt`), or FINISHED with `outcome`. */
export type Verdict =
  | { status: 'RETRY'; outcome: null; retryInSeconds: number; retryAt?: Date }
  | { status: 'FINISHED'; outcome: string; retryInSeconds: null };

/**
 * The retry rule: an attempt that may be retried and was attempt number `attempt` (1 for the first)
 * sends its lead to RETRY while `attempt <= max_retry` (so at most `max_retry + 1` attempts);
 * anything else finishes it with `outcome`. Whether it may be retried, and after how long, is the
 * configuration's `retry_policy` rule for the outcome (or the one it is `ruledAs`) when there is one, else `retried` and
 * `retry_offset`. A callback the callee asked for (`callbackAt`) sets the due time itself (the
 * calling window still applies when it comes).
 */
export function verdict(outcome: string, retried: boolean, attempt: number, policy: RetryPolicy | undefined, callbackAt?: Date): Verdict {
  const { max_retry, retry_offset, retry_policy } = policy ?? FALLBACK_RETRY;
  const ruledAs = isDialerOutcome(outcome) ? (OUTCOMES[outcome] as OutcomeClass).ruledAs : undefined;
  const key = retry_policy && !Object.hasOwn(retry_policy, outcome) && ruledAs ? ruledAs : outcome;
  const rule = retry_policy && Object.hasOwn(retry_policy, key) ? retry_policy[key] : undefined;
  const again = rule ? rule.retry : retried;
  if (!again || attempt > max_retry) return { status: 'FINISHED', outcome, retryInSeconds: null };
  if (callbackAt) return { status: 'RETRY', outcome: null, retryInSeconds: 0, retryAt: callbackAt };
  return { status: 'RETRY', outcome: null, retryInSeconds: rule?.after_seconds ?? retry_offset };
}

/**
 * The lead lifecycle: the one writer of a lead's state. Every change of a lead's status (and of the
 * columns that go with it) is a named statement here; the scheduler, WebRTC sessions, inbound
 * calls and the abort API call them and decide nothing about the lead's next state themselves.
 *
 *   BACKLOG --claim--> PROCESSING --finish--> FINISHED (outcome)
 *      ^                 |   |                   ^
 *      |                 |   +--finish, retry--> RETRY --claim--> PROCESSING ...
 *      +----undo claim---+   (recover expired: as a finish with outcome worker_lost)
 *   BACKLOG, RETRY --abort--> FINISHED aborted
 *
 * Terminology
 * - lead: one person to call with one template; a row of `leads`, which is also the queue. It
 *   waits (BACKLOG, then RETRY between attempts), is being called (PROCESSING), or is FINISHED.
 * - attempt: one try at reaching the lead: a phone call, a browser session or an inbound call.
 *   `attempt_count` counts them; each has its row in `call_attempts`.
 * - claim: taking a due lead for an attempt (PROCESSING, attempt_count + 1, an attempt row, a
 *   number for a phone call), in one transaction, so two workers never take the same lead.
 * - lease: how long the claiming worker holds the lead (`locked_by`, `locked_until`); renewed
 *   while the call lives. A lease that expires means the worker died: the lead is recovered.
 * - hold: a due lead kept waiting without an attempt (a closed window, an exhausted rate limit or
 *   number pool, the kill switch): a later `next_attempt_at`, nothing else changes.
 * - window: the hours a lead may be called (`call_start_time`-`call_end_time` in its time zone).
 * - outcome: how a lead finished: a flow's own (a conversation took place) or one of Dialer's
 *   (outcomes.ts, the one table of them).
 */
export type { InboundLead, LeadRow, LeadStatus, ExecutionMode, NewLead, FinishedLeadRow, ClaimedLead, CallEnd, AttemptEnd, OnFinished } from './types.js';
export { LEADS_CHANNEL, LEAD_STATUSES, EXECUTION_MODES } from './types.js';
export { queueLeads, insertFinishedLeads } from './create.js';
export {
  OUTCOMES,
  COMPLETED,
  NOT_REACHED_OUTCOMES,
  UNDIALLED_OUTCOMES,
  RETRIED_OUTCOMES,
  BREAKER_FAILURES,
  FALLBACK_RETRY,
  isReached,
  isRetried,
  callbackOf,
  outcomeOf,
  reasonOf,
  verdict,
  type DialerOutcome,
  type OutcomeClass,
  type OutcomeRetryRules,
  type RetryPolicy,
  type Verdict,
} from './outcomes.js';
export {
  dueCandidates,
  moveAsideUncallable,
  holdUntil,
  releaseAllHeld,
  releaseHeld,
  RELEASE_BATCH,
  HELD_SECONDS,
  claimWithNumbers,
  claimForSession,
  openInbound,
  renewLeases,
  recordCallId,
  notePreChecks,
  moveToTrunk,
  type Candidate,
  type Claimed,
  type PaceSlot,
  type NumberRotation,
} from './claim-statements.js';
export {
  finishAttempts,
  finishUndialled,
  finishWaiting,
  releaseClaim,
  recoverExpired,
  abortLeads,
  forgetRecording,
  eraseLeadContent,
  dropCallContent,
  type ErasedLead,
  isRecordedCall,
  type FinishItem,
  type AbortOutcome,
} from './finish.js';
export { campaignOpenSql, firstSlotSql, paceLookaheadMs, paceSlotsSql, PACE_LOOKAHEAD, startableCampaignsSql } from './campaign-gate.js';
export { trunkLiveSql, trunkOpenSql } from './trunk-gate.js';
export { admitConfigurationStarts, configurationCapHolds } from './configuration-cap.js';
export { isRateLimited, freeSlot, takeSlot, numberDialsSince } from './rate-limit.js';
export { judgeNumbers, DEFAULT_NUMBER_HEALTH, type NumberHealthPolicy, type RestedNumber } from './number-health.js';

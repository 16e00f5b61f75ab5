/**
 * The shapes the lifecycle speaks in: the lead row (the leads table is the queue), how an attempt
 * ended, and the hook a finish calls in its transaction.
 */
import type { Queryable } from '../db/index.js';

/** A lead's statuses: waiting (BACKLOG, then RETRY between attempts), being called, finished. */
export const LEAD_STATUSES = ['BACKLOG', 'PROCESSING', 'RETRY', 'FINISHED'] as const;
export type LeadStatus = (typeof LEAD_STATUSES)[number];
/** How a lead is carried: dialled (TELEPHONY, TELEPHONY_TEST) or a browser's session (the WEBRTC modes). */
export const EXECUTION_MODES = ['TELEPHONY', 'TELEPHONY_TEST', 'WEBRTC', 'WEBRTC_TEST', 'WEBRTC_STREAM'] as const;
export type ExecutionMode = (typeof EXECUTION_MODES)[number];

/** A row of `leads`: the one definition of a lead's columns (the API's view, pushes and demo rows are cut from it). */
export interface LeadRow {
  id: string;
  reseller_id: string;
  merchant_id: string | null;
  template_id: string;
  template_name: string;
  request_id: string;
  status: LeadStatus;
  outcome: string | null;
  attempt_count: number;
  call_id: string | null;
  call_initiated_time: Date | null;
  call_end_time: Date | null;
  duration_seconds: number | null;
  recording_url: string | null;
  /** numeric: text from the driver. */
  cost: string | number | null;
  sentiment: number | null;
  provider: string | null;
  execution_mode: string;
  call_direction: string;
  outbound_number_id: string | null;
  trace_scores: Record<string, number>;
  payload: Record<string, unknown>;
  meta_data: Record<string, unknown>;
  is_playground: boolean;
  configurations_override: Record<string, unknown> | null;
  cancellation_reason: string | null;
  next_attempt_at: Date | null;
  /** The campaign the lead joined, if any. */
  campaign_id?: string | null;
  /** The SIP trunk its call holds a channel of (set by the claim; counted while PROCESSING). */
  trunk_id?: string | null;
  /** The evidence of consent it was pushed with (revoked_at once the callee opted out); null: none. */
  consent?: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
}

/**
 * What a claim reads of each lead it takes: what the claim's rules and the call need. A claim
 * reads no more (each column is parsed by the worker and sent by PostgreSQL for every lead).
 */
export type ClaimedLead = Pick<
  LeadRow,
  'id' | 'reseller_id' | 'merchant_id' | 'template_id' | 'template_name' | 'request_id' | 'execution_mode' | 'payload' | 'is_playground' | 'configurations_override' | 'attempt_count'
>;

/** A pushed lead as it is queued; `due_in_seconds` null means it is never due (no number to dial). */
export type NewLead = Pick<
  LeadRow,
  'id' | 'reseller_id' | 'merchant_id' | 'template_id' | 'template_name' | 'request_id' | 'execution_mode' | 'is_playground' | 'configurations_override' | 'payload'
> & {
  due_in_seconds: number | null;
  /** The campaign it joins, if any. */
  campaign_id?: string | null;
  /** The evidence of consent it was pushed with, if any. */
  consent?: Record<string, unknown> | null;
};

/** A lead as its last attempt left it (FINISHED), written whole: demo data over past days. */
export type FinishedLeadRow = Pick<
  LeadRow,
  | 'id' | 'reseller_id' | 'merchant_id' | 'template_id' | 'template_name' | 'request_id' | 'attempt_count' | 'call_id' | 'call_initiated_time'
  | 'call_end_time' | 'duration_seconds' | 'sentiment' | 'provider' | 'is_playground' | 'payload' | 'meta_data' | 'created_at'
> & { outcome: string; execution_mode: ExecutionMode; /** numeric(12, 4), as text. */ cost: string | null };

/** How an attempt ended, from the lifecycle's point of view. */
export type CallEnd =
  /** The callee answered and a conversation took place; `outcome` is the flow's own. */
  | {
      kind: 'completed';
      outcome?: string;
      durationSeconds?: number;
      metaData?: Record<string, unknown>;
      recordingUrl?: string;
      cost?: number;
      sentiment?: number;
      /** Scores for the lead's trace_scores (sentiment, turn latency, interruptions …). */
      traceScores?: Record<string, number>;
    }
  /** The callee was not reached. */
  | { kind: 'no_answer' | 'busy' | 'failed' | 'voicemail'; error?: string; durationSeconds?: number; metaData?: Record<string, unknown> }
  /** The provider or Dialer failed while placing or carrying the call. */
  | { kind: 'error'; error: string; metaData?: Record<string, unknown> };

/** An attempt's end as the runner that carried it reports it. */
export interface AttemptEnd {
  callId?: string;
  end: CallEnd;
}

/**
 * What a finish queues (its notifications), in the finishing transaction: called with every lead
 * that one statement finished, at once. `concerns`, when given, is the condition (SQL over a lead
 * row named `alias`, as the finish wrote it) outside which a finished lead surely queues nothing:
 * the finish of calls evaluates it as it writes, passes only the leads it holds for, and makes no
 * call when none does (no read in the finishing transaction for leads that notify nobody).
 */
export type OnFinished = ((q: Queryable, leadIds: readonly string[]) => Promise<void>) & { concerns?: (alias: string) => string };

/** NOTIFY channel that tells idle schedulers new leads were queued (or made due). */
export const LEADS_CHANNEL = 'dialer_leads';

/** An inbound call's lead, as its own attempt 1 begins: PROCESSING, with its attempt row. */
export interface InboundLead {
  id: string;
  resellerId: string;
  merchantId: string | null;
  templateId: string;
  templateName: string;
  /** The provider's call SID: the lead's call_id; its request_id is `inbound-<callSid>`. */
  callSid: string;
  provider: string;
  /** The number of ours that was called. */
  numberId: string;
  payload: Record<string, unknown>;
  /** The SIP trunk the call came in through: the call holds one of its channels. */
  trunkId?: string;
}

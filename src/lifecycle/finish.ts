/**
 * Ending attempts and leads: the finish of a call (phone, WebRTC and inbound alike), a claim undone
 * before its dial, the leads whose worker died, an abort, and the leads finished without a dial.
 * Each runs in the caller's transaction together with what the finish queues (`OnFinished`: its
 * notifications), so a lead is never finished without them. Every transition of a claimed lead is
 * guarded by its lease (`locked_by`): a worker that lost its lease (its lead was recovered)
 * changes nothing.
 */
import { effectiveConfiguration } from '../configurations/index.js';
import type { Queryable } from '../db/index.js';
import { callbackOf, isRetried, outcomeOf, OUTCOMES, verdict, type RetryPolicy } from './outcomes.js';
import { giveBackNumbers } from './numbers.js';
import { forgetOldSlots, giveBackSlot } from './rate-limit.js';
import type { AttemptEnd, LeadRow, OnFinished } from './types.js';

export interface FinishItem {
  leadId: string;
  /** The lease holder; null for an inbound call's lead, which has no lease. */
  workerId: string | null;
  attempt: number;
  /** The lead's retry policy (its configuration); undefined: none found (see FALLBACK_RETRY). */
  config: RetryPolicy | undefined;
  result: AttemptEnd;
  /** The attempt's trace (when tracing is on): kept on the lead as `metaData.trace_id`. */
  traceId?: string | undefined;
  /**
   * A late end: written again after its first write failed (the database was unreachable), or
   * from the journal of a worker that died before it could write it. It holds whoever holds the
   * lease, and replaces the `worker_lost` that recovery may have recorded meanwhile for the same
   * attempt: the call took place and ended so, and the lead must not be called again for it. An
   * attempt already ended, or followed by another, is left as it is.
   */
  late?: boolean;
}

/**
 * The finish: records the end of attempts, set-based (one statement for any number of them):
 * RETRY (unreached, retries left) or FINISHED with the flow's outcome or the unreached outcome;
 * each attempt's history row; the numbers given back. Each lead is guarded by its lease and its
 * attempt: the answer for a lead whose lease was lost (it was recovered meanwhile) is undefined
 * and nothing of it changes. The leads it finished go to `onFinished` (those its `concerns` holds for).
 */
export async function finishAttempts(q: Queryable, items: FinishItem[], onFinished: OnFinished): Promise<('RETRY' | 'FINISHED' | undefined)[]> {
  const rows = items.map(({ leadId, workerId, attempt, config, result, traceId, late }) => {
    const { end } = result;
    const outcome = outcomeOf(end);
    const next = verdict(outcome, isRetried(end), attempt, config, callbackOf(end));
    const optedOut = outcome === 'OPTED_OUT' ? (end.kind === 'completed' ? (end.metaData?.opted_out as { reason?: unknown } | undefined) : undefined) : undefined;
    const error = end.kind === 'completed' ? null : (end.error ?? null);
    // A call that was not reached may say how, too (a SIP trunk's statuses).
    const meta: Record<string, unknown> = { ...(end.metaData ?? {}) };
    if (error) meta.last_error = { attempt, outcome, message: error };
    if (traceId) meta.trace_id = traceId;
    return {
      lead_id: leadId,
      worker_id: workerId,
      attempt,
      late: late === true,
      outcome,
      status: next.status,
      lead_outcome: next.outcome,
      retry_in: next.retryInSeconds,
      retry_at: next.status === 'RETRY' && next.retryAt ? next.retryAt.toISOString() : null,
      // The callee asked not to be called again: the number goes on the reseller's blacklist.
      opt_out: optedOut !== undefined,
      opt_out_reason: typeof optedOut?.reason === 'string' ? optedOut.reason : null,
      call_id: result.callId ?? null,
      duration: end.kind === 'error' ? null : (end.durationSeconds ?? null),
      meta,
      recording_url: end.kind === 'completed' ? (end.recordingUrl ?? null) : null,
      cost: end.kind === 'completed' ? (end.cost ?? null) : null,
      sentiment: end.kind === 'completed' ? (end.sentiment ?? null) : null,
      trace_scores: end.kind === 'completed' ? (end.traceScores ?? {}) : {},
      error,
    };
  });
  const { rows: done } = await q.query<{ id: string; status: 'RETRY' | 'FINISHED'; concerned: boolean | null }>(
    `WITH x AS (
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS x (
         lead_id text, worker_id text, attempt integer, late boolean, outcome text, status text, lead_outcome text, retry_in integer, retry_at timestamptz,
         opt_out boolean, opt_out_reason text, call_id text, duration integer, meta jsonb, recording_url text, cost numeric, sentiment real,
         trace_scores jsonb, error text)),
     l AS (
       UPDATE leads SET
         status = x.status, outcome = x.lead_outcome, next_attempt_at = coalesce(x.retry_at, now() + make_interval(secs => x.retry_in)),
         call_id = coalesce(x.call_id, leads.call_id), call_end_time = now(), duration_seconds = x.duration,
         -- (Nothing to merge, as after most unanswered calls: the stored value is kept as it is.)
         meta_data = CASE WHEN x.meta = '{}' THEN leads.meta_data ELSE leads.meta_data || x.meta END,
         recording_url = coalesce(x.recording_url, leads.recording_url), cost = coalesce(x.cost, leads.cost), sentiment = coalesce(x.sentiment, leads.sentiment),
         trace_scores = CASE WHEN x.trace_scores = '{}' THEN leads.trace_scores ELSE leads.trace_scores || x.trace_scores END,
         -- An opt-out revokes the consent the lead was pushed with (kept, marked revoked).
         consent = CASE WHEN x.opt_out AND leads.consent IS NOT NULL
           THEN leads.consent || jsonb_build_object('revoked_at', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), 'revoked_by', 'opt_out')
           ELSE leads.consent END,
         locked_by = NULL, locked_until = NULL, updated_at = now()
       FROM x
       WHERE leads.id = x.lead_id AND leads.attempt_count = x.attempt
         AND ((leads.status = 'PROCESSING' AND (x.late OR leads.locked_by IS NOT DISTINCT FROM x.worker_id))
              OR (x.late AND EXISTS (SELECT 1 FROM call_attempts ca WHERE ca.lead_id = x.lead_id AND ca.attempt = x.attempt AND ca.status = 'LOST')))
       RETURNING leads.id, leads.status, leads.outbound_number_id, leads.reseller_id,
                 CASE WHEN x.opt_out THEN leads.payload->>'customer_mobile_number' END AS phone,
                 coalesce(${onFinished.concerns?.('leads') ?? 'true'}, false) AS concerned),
     b AS (
       INSERT INTO blacklist (id, reseller_id, phone_number, lead_id, reason)
       SELECT gen_random_uuid()::text, l.reseller_id, l.phone, l.id, coalesce(x.opt_out_reason, 'opted out during the call')
       FROM x JOIN l ON l.id = x.lead_id
       WHERE x.opt_out AND l.phone IS NOT NULL
       ON CONFLICT DO NOTHING),
     a AS (
       UPDATE call_attempts SET status = 'ENDED', outcome = x.outcome, call_id = coalesce(x.call_id, call_attempts.call_id), ended_at = now(),
              duration_seconds = x.duration, error = x.error,
              -- A call through a SIP trunk: the attempt keeps its own SIP outcome (a trunk's recent failures are read from it).
              meta_data = CASE WHEN x.meta->'sip_trunk_id' IS NULL THEN call_attempts.meta_data ELSE call_attempts.meta_data || jsonb_strip_nulls(jsonb_build_object(
                'sip_trunk_id', x.meta->'sip_trunk_id', 'sip_status', x.meta->'sip_status', 'sip_statuses', x.meta->'sip_statuses', 'sip_failover', x.meta->'sip_failover')) END
       FROM x JOIN l ON l.id = x.lead_id
       WHERE call_attempts.lead_id = x.lead_id AND call_attempts.attempt = x.attempt),
     n AS (${giveBackNumbers('outbound_numbers.id = l.outbound_number_id AND outbound_numbers.lead_id = l.id', 'l')})
     SELECT id, status, concerned FROM l`,
    [JSON.stringify(rows)],
    { prepare: true },
  );
  const statusOf = new Map(done.map((d) => [d.id, d.status]));
  const finished = done.filter((d) => d.status === 'FINISHED' && d.concerned).map((d) => d.id);
  if (finished.length > 0) await onFinished(q, finished);
  return items.map((i) => statusOf.get(i.leadId));
}

/** A claimed lead that may not be called after all (a pre-dial check said no): FINISHED `outcome`, its attempt undone. */
export async function finishUndialled(
  q: Queryable,
  args: { leadId: string; workerId: string; attempt: number; outcome: string; meta: Record<string, unknown>; onFinished: OnFinished },
): Promise<boolean> {
  const done = await undoClaim(q, args.leadId, args.workerId, args.attempt, { status: 'FINISHED', outcome: args.outcome, meta: args.meta });
  if (done) await args.onFinished(q, [args.leadId]);
  return done;
}

/** Gives a claimed lead back before its dial (shutdown, a failed offer): as it was, due at once. */
export function releaseClaim(q: Queryable, args: { leadId: string; workerId: string; attempt: number; meta?: Record<string, unknown> }): Promise<boolean> {
  return undoClaim(q, args.leadId, args.workerId, args.attempt, { status: args.attempt > 1 ? 'RETRY' : 'BACKLOG', outcome: null, meta: args.meta ?? {} });
}

/** Undoes a claim that did not dial: attempt count, history row, rate-limit slot and number. */
async function undoClaim(
  q: Queryable,
  leadId: string,
  workerId: string,
  attempt: number,
  next: { status: 'FINISHED' | 'BACKLOG' | 'RETRY'; outcome: string | null; meta: Record<string, unknown> },
): Promise<boolean> {
  const { rows } = await q.query<{ outbound_number_id: string | null }>(
    `SELECT outbound_number_id FROM leads WHERE id = $1 AND status = 'PROCESSING' AND locked_by = $2 FOR UPDATE`,
    [leadId, workerId],
  );
  if (!rows[0]) return false;
  await q.query(
    `UPDATE leads SET status = $2, outcome = $3, attempt_count = attempt_count - 1, meta_data = meta_data || $4::jsonb,
            call_initiated_time = NULL, locked_by = NULL, locked_until = NULL,
            next_attempt_at = CASE WHEN $2 = 'FINISHED' THEN NULL ELSE now() END, updated_at = now()
     WHERE id = $1`,
    [leadId, next.status, next.outcome, JSON.stringify(next.meta)],
  );
  await q.query('DELETE FROM call_attempts WHERE lead_id = $1 AND attempt = $2', [leadId, attempt]);
  await giveBackSlot(q, leadId);
  if (rows[0].outbound_number_id) {
    await q.query(giveBackNumbers('outbound_numbers.id = $1 AND outbound_numbers.lead_id = $2'), [rows[0].outbound_number_id, leadId]);
  }
  return true;
}

/**
 * Waiting leads (locked by the caller's claim) that may not be called: FINISHED `outcome` without a
 * dial; `meta` (lead id to fields) is merged into the metaData of the leads it names.
 */
export async function finishWaiting(
  q: Queryable,
  leadIds: readonly string[],
  outcome: string,
  onFinished: OnFinished,
  meta?: Readonly<Record<string, Record<string, unknown>>>,
): Promise<void> {
  if (leadIds.length === 0) return;
  await q.query(
    `UPDATE leads SET status = 'FINISHED', outcome = $2, next_attempt_at = NULL, meta_data = meta_data || coalesce($3::jsonb -> id, '{}'), updated_at = now()
     WHERE id = ANY($1::text[])`,
    [leadIds, outcome, JSON.stringify(meta ?? {})],
  );
  await onFinished(q, leadIds);
}

/**
 * Recovers leads whose lease expired (their worker died). First the ends `journalled` by dead
 * workers (calls that ended while their finish could not be written) are written as the late ends
 * they are; then every other expired lead goes to RETRY while its retry policy allows (the same
 * verdict as any finish: its configuration's, with a playground lead's overrides), else FINISHED
 * `worker_lost`; their numbers go back to the pool. Also frees numbers IN_USE by a lead that is no
 * longer being called, and forgets old rate-limit slots.
 */
export async function recoverExpired(
  q: Queryable,
  onFinished: OnFinished,
  journalled: readonly FinishItem[] = [],
  limit = 500,
): Promise<{ retried: number; finished: number; journalled: number }> {
  const written = journalled.length > 0 ? await finishAttempts(q, journalled.map((item) => ({ ...item, late: true })), onFinished) : [];
  const { rows } = await q.query<{
    id: string;
    attempt_count: number;
    is_playground: boolean;
    configurations_override: Record<string, unknown> | null;
    max_retry: number | null;
    retry_offset: number | null;
    retry_policy: RetryPolicy['retry_policy'];
  }>(
    `SELECT l.id, l.attempt_count, l.is_playground, l.configurations_override, c.max_retry, c.retry_offset, c.retry_policy
     FROM leads l LEFT JOIN configurations c ON c.reseller_id = l.reseller_id AND c.template_id = l.template_id
     WHERE l.status = 'PROCESSING' AND l.locked_until < now()
     ORDER BY l.locked_until LIMIT $1
     FOR NO KEY UPDATE OF l SKIP LOCKED`,
    [limit],
    // This and the numbers' check below run in every worker every few seconds: prepared.
    { prepare: true },
  );
  let retried = 0;
  const finished: string[] = [];
  for (const row of rows) {
    const stored = row.max_retry === null || row.retry_offset === null ? undefined : { max_retry: row.max_retry, retry_offset: row.retry_offset, retry_policy: row.retry_policy };
    const policy = stored && effectiveConfiguration(stored, row);
    const next = verdict('worker_lost', OUTCOMES.worker_lost.retried, row.attempt_count, policy);
    await q.query(
      `UPDATE leads SET status = $2, outcome = $3, call_end_time = coalesce(call_end_time, now()), locked_by = NULL, locked_until = NULL,
              meta_data = meta_data || jsonb_build_object('last_error', jsonb_build_object('attempt', attempt_count, 'outcome', 'worker_lost',
                'message', 'the worker carrying the call stopped renewing its lease')),
              next_attempt_at = now() + make_interval(secs => $4), updated_at = now()
       WHERE id = $1`,
      [row.id, next.status, next.outcome, next.retryInSeconds],
    );
    await q.query(
      `UPDATE call_attempts SET status = 'LOST', outcome = 'worker_lost', ended_at = now(), error = 'lease expired' WHERE lead_id = $1 AND attempt = $2`,
      [row.id, row.attempt_count],
    );
    await q.query(giveBackNumbers('outbound_numbers.lead_id = $1'), [row.id]);
    if (next.status === 'RETRY') retried++;
    else finished.push(row.id);
  }
  if (finished.length > 0) await onFinished(q, finished);
  await q.query(giveBackNumbers(`NOT EXISTS (SELECT 1 FROM leads l WHERE l.id = outbound_numbers.lead_id AND l.status = 'PROCESSING')`), [], { prepare: true });
  await forgetOldSlots(q);
  return { retried, finished: finished.length, journalled: written.filter((status) => status !== undefined).length };
}

export type AbortOutcome = { id: string; aborted: true } | { id: string; aborted: false; status: LeadRow['status'] | null; outcome: string | null };

/**
 * The abort: the leads of `requests` that are BACKLOG or RETRY become FINISHED `aborted`, in one
 * UPDATE. A lead a scheduler is claiming at the same moment is row-locked, so the UPDATE waits for
 * the claim and then finds it PROCESSING; a lead aborted first is FINISHED before any claim can see
 * it. Never both. `scope` is a condition over alias `l` with its params after $1. For the leads
 * not aborted, their status and outcome (none when not found in scope).
 */
export async function abortLeads(
  q: Queryable,
  requests: readonly { lead_id: string; cancellation_reason: string }[],
  scope: { sql: string; params: unknown[] },
  onFinished: OnFinished,
): Promise<AbortOutcome[]> {
  const done = await q.query<{ id: string }>(
    `UPDATE leads AS l SET status = 'FINISHED', outcome = 'aborted', cancellation_reason = r.cancellation_reason,
            next_attempt_at = NULL, locked_by = NULL, locked_until = NULL, updated_at = now()
     FROM jsonb_to_recordset($1::jsonb) AS r (lead_id text, cancellation_reason text)
     WHERE l.id = r.lead_id AND l.status IN ('BACKLOG', 'RETRY') AND ${scope.sql}
     RETURNING l.id`,
    [JSON.stringify(requests), ...scope.params],
  );
  const aborted = new Set(done.rows.map((r) => r.id));
  if (aborted.size > 0) await onFinished(q, [...aborted]);
  const rest = requests.map((r) => r.lead_id).filter((id) => !aborted.has(id));
  const found = new Map<string, { status: LeadRow['status']; outcome: string | null }>();
  if (rest.length > 0) {
    const { rows } = await q.query<{ id: string; status: LeadRow['status']; outcome: string | null }>(
      `SELECT l.id, l.status, l.outcome FROM leads l WHERE l.id = ANY($1::text[]) AND ${scope.sql}`,
      [rest, ...scope.params],
    );
    for (const row of rows) found.set(row.id, row);
  }
  return requests.map(({ lead_id: id }) =>
    aborted.has(id) ? { id, aborted: true as const } : { id, aborted: false as const, status: found.get(id)?.status ?? null, outcome: found.get(id)?.outcome ?? null },
  );
}

/** A finished lead's recording was deleted (its retention ran out): the lead no longer points at it, and says when. */
export async function forgetRecording(q: Queryable, leadId: string): Promise<void> {
  await q.query(
    `UPDATE leads SET recording_url = NULL, meta_data = meta_data || jsonb_build_object('recording_expired_at', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')),
            updated_at = now()
     WHERE id = $1`,
    [leadId],
  );
}

/** Whether some lead carries call `callId` (a late callback for a call whose session is over). */
export async function isRecordedCall(q: Queryable, callId: string): Promise<boolean> {
  const { rows } = await q.query('SELECT 1 FROM leads WHERE call_id = $1 LIMIT 1', [callId]);
  return rows.length > 0;
}

/** What erasure leaves of a lead: its payload and metaData as the caller cut them, its consent without the evidence. */
export interface ErasedLead {
  id: string;
  payload: Record<string, unknown>;
  meta_data: Record<string, unknown>;
  consent: Record<string, unknown> | null;
}

/**
 * Erasure on request: each lead's personal content is replaced by what is left of it, and its
 * recording forgotten. Its status, outcome and figures are kept (analytics count it as before). A
 * lead in a call is left alone (the caller refuses those first); returns the ids written.
 */
export async function eraseLeadContent(q: Queryable, leads: readonly ErasedLead[]): Promise<string[]> {
  if (leads.length === 0) return [];
  const { rows } = await q.query<{ id: string }>(
    `UPDATE leads l SET payload = x.payload, meta_data = x.meta_data, consent = x.consent, recording_url = NULL, updated_at = now()
     FROM jsonb_to_recordset($1::jsonb) AS x (id text, payload jsonb, meta_data jsonb, consent jsonb)
     WHERE l.id = x.id AND l.status <> 'PROCESSING'
     RETURNING l.id`,
    [JSON.stringify(leads)],
  );
  return rows.map((r) => r.id);
}

/**
 * Retention: finished calls' recordings and transcripts deleted (their files gone first), noted in
 * metaData (`recording_deleted_at`, `transcript_deleted_at`). Outcome and figures stay.
 */
export async function dropCallContent(q: Queryable, items: readonly { id: string; recording: boolean; transcript: boolean }[]): Promise<void> {
  if (items.length === 0) return;
  const stamp = `to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`;
  await q.query(
    `UPDATE leads l SET
       recording_url = CASE WHEN x.recording THEN NULL ELSE l.recording_url END,
       meta_data = CASE WHEN x.transcript THEN l.meta_data - 'transcription' - 'function_calls' || jsonb_build_object('transcript_deleted_at', ${stamp}) ELSE l.meta_data END
                   || CASE WHEN x.recording THEN jsonb_build_object('recording_deleted_at', ${stamp}) ELSE '{}'::jsonb END,
       updated_at = now()
     FROM jsonb_to_recordset($1::jsonb) AS x (id text, recording boolean, transcript boolean)
     WHERE l.id = x.id`,
    [JSON.stringify(items)],
  );
}

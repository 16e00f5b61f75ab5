/**
 * How an attempt ends, in one transaction each: the lead's next state, its attempt history, the
 * number given back, and the reporting webhook queued when the lead finishes. Every transition is
 * guarded by the lease (`locked_by`): a worker that lost its lease (its lead was recovered) changes
 * nothing.
 */
import type { ConfigurationRow } from '../configurations/index.js';
import type { Queryable } from '../db/index.js';
import type { CallEnd } from '../telephony/index.js';
import type { PreCheckResult } from '../scheduler/prechecks.js';

/** Outcomes of an unreached callee: the lead is retried while retries remain (DESIGN 5). */
export const UNREACHED = new Set(['no_answer', 'busy', 'failed', 'error', 'worker_lost']);

/** What a finish queues (its notifications), in the finishing transaction: every lead one statement finished, at once. */
export type OnFinished = (q: Queryable, leadIds: readonly string[]) => Promise<void>;

export interface AttemptEnd {
  callId?: string;
  end: CallEnd;
}

/** Default retry policy when a configuration disappeared while its lead was being called. */
const FALLBACK = { max_retry: 0, retry_offset: 3600 };

export interface FinishItem {
  leadId: string;
  workerId: string;
  attempt: number;
  config: Pick<ConfigurationRow, 'max_retry' | 'retry_offset'> | undefined;
  result: AttemptEnd;
  /** The attempt's trace (when tracing is on): kept on the lead as `metaData.trace_id`. */
  traceId?: string;
}

/**
 * Records the end of dialled attempts, set-based (one statement for any number of them): RETRY
 * (unreached, retries left) or FINISHED with the flow's outcome or the unreached outcome; each
 * attempt's history row; the numbers given back. Each lead is guarded by its lease: the answer for
 * a lead whose lease was lost (it was recovered meanwhile) is undefined and nothing of it changes.
 */
export async function finishAttempts(q: Queryable, items: FinishItem[], onFinished: OnFinished): Promise<('RETRY' | 'FINISHED' | undefined)[]> {
  const rows = items.map(({ leadId, workerId, attempt, config, result, traceId }) => {
    const { end } = result;
    const policy = config ?? FALLBACK;
    const outcome = end.kind === 'completed' ? (end.outcome ?? 'completed') : end.kind;
    const error = end.kind === 'completed' ? null : (end.error ?? null);
    const meta: Record<string, unknown> = end.kind === 'completed' ? { ...(end.metaData ?? {}) } : {};
    if (error) meta.last_error = { attempt, outcome, message: error };
    if (traceId) meta.trace_id = traceId;
    return {
      lead_id: leadId,
      worker_id: workerId,
      attempt,
      outcome,
      call_id: result.callId ?? null,
      duration: end.kind === 'error' ? null : (end.durationSeconds ?? null),
      meta,
      recording_url: end.kind === 'completed' ? (end.recordingUrl ?? null) : null,
      cost: end.kind === 'completed' ? (end.cost ?? null) : null,
      sentiment: end.kind === 'completed' ? (end.sentiment ?? null) : null,
      trace_scores: end.kind === 'completed' ? (end.traceScores ?? {}) : {},
      retry: UNREACHED.has(end.kind),
      max_retry: policy.max_retry,
      retry_offset: policy.retry_offset,
      error,
    };
  });
  const { rows: done } = await q.query<{ id: string; status: 'RETRY' | 'FINISHED' }>(
    `WITH x AS (
       SELECT * FROM jsonb_to_recordset($1::jsonb) AS x (
         lead_id text, worker_id text, attempt integer, outcome text, call_id text, duration integer, meta jsonb,
         recording_url text, cost numeric, sentiment real, trace_scores jsonb, retry boolean, max_retry integer, retry_offset integer, error text)),
     l AS (
       UPDATE leads SET
         status = CASE WHEN x.retry AND leads.attempt_count <= x.max_retry THEN 'RETRY' ELSE 'FINISHED' END,
         outcome = CASE WHEN x.retry AND leads.attempt_count <= x.max_retry THEN NULL ELSE x.outcome END,
         call_id = coalesce(x.call_id, leads.call_id), call_end_time = now(), duration_seconds = x.duration,
         meta_data = leads.meta_data || x.meta, recording_url = coalesce(x.recording_url, leads.recording_url),
         cost = coalesce(x.cost, leads.cost), sentiment = coalesce(x.sentiment, leads.sentiment),
         trace_scores = leads.trace_scores || x.trace_scores, locked_by = NULL, locked_until = NULL,
         next_attempt_at = CASE WHEN x.retry AND leads.attempt_count <= x.max_retry THEN now() + make_interval(secs => x.retry_offset) END,
         updated_at = now()
       FROM x
       WHERE leads.id = x.lead_id AND leads.status = 'PROCESSING' AND leads.locked_by = x.worker_id
       RETURNING leads.id, leads.status, leads.outbound_number_id),
     a AS (
       UPDATE call_attempts SET status = 'ENDED', outcome = x.outcome, call_id = coalesce(x.call_id, call_attempts.call_id), ended_at = now(),
              duration_seconds = x.duration, error = x.error
       FROM x JOIN l ON l.id = x.lead_id
       WHERE call_attempts.lead_id = x.lead_id AND call_attempts.attempt = x.attempt),
     n AS (
       UPDATE outbound_numbers SET status = 'AVAILABLE', lead_id = NULL, updated_at = now()
       FROM l WHERE outbound_numbers.id = l.outbound_number_id AND outbound_numbers.lead_id = l.id AND outbound_numbers.status = 'IN_USE')
     SELECT id, status FROM l`,
    [JSON.stringify(rows)],
    { prepare: true },
  );
  const statusOf = new Map(done.map((d) => [d.id, d.status]));
  const finished = done.filter((d) => d.status === 'FINISHED').map((d) => d.id);
  if (finished.length > 0) await onFinished(q, finished);
  return items.map((i) => statusOf.get(i.leadId));
}

/** A pre-check stopped the lead before any dial: FINISHED PRECHECK_FAILED, the attempt undone. */
export async function finishPrecheckFailed(
  q: Queryable,
  args: { leadId: string; workerId: string; attempt: number; results: PreCheckResult[]; onFinished: OnFinished; traceId?: string | undefined },
): Promise<boolean> {
  const done = await undoAttempt(q, args.leadId, args.workerId, args.attempt, {
    status: 'FINISHED',
    outcome: 'PRECHECK_FAILED',
    meta: { pre_check_results: args.results, ...(args.traceId ? { trace_id: args.traceId } : {}) },
  });
  if (done) await args.onFinished(q, [args.leadId]);
  return done;
}

/** Gives a claimed lead back before its dial (shutdown): as it was, due at once. */
export function releaseClaim(q: Queryable, args: { leadId: string; workerId: string; attempt: number; preCheckResults?: PreCheckResult[] }): Promise<boolean> {
  return undoAttempt(q, args.leadId, args.workerId, args.attempt, {
    status: args.attempt > 1 ? 'RETRY' : 'BACKLOG',
    outcome: null,
    meta: args.preCheckResults ? { pre_check_results: args.preCheckResults } : {},
  });
}

/** Undoes a claim that did not dial: attempt count, history row, rate-limit slot and number. */
async function undoAttempt(
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
  await q.query(
    `DELETE FROM rate_limit_events WHERE ctid IN (SELECT ctid FROM rate_limit_events WHERE lead_id = $1 ORDER BY at DESC LIMIT 1)`,
    [leadId],
  );
  if (rows[0].outbound_number_id) await releaseHeld(q, rows[0].outbound_number_id, leadId);
  return true;
}

async function releaseHeld(q: Queryable, numberId: string, leadId: string): Promise<void> {
  await q.query(
    `UPDATE outbound_numbers SET status = 'AVAILABLE', lead_id = NULL, updated_at = now() WHERE id = $1 AND lead_id = $2 AND status = 'IN_USE'`,
    [numberId, leadId],
  );
}

/** Renews a live call's lease; false when the lease was lost (the lead was recovered). */
export async function renewLease(q: Queryable, leadId: string, workerId: string, leaseSeconds: number): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE leads SET locked_until = now() + make_interval(secs => $3) WHERE id = $1 AND status = 'PROCESSING' AND locked_by = $2`,
    [leadId, workerId, leaseSeconds],
    { prepare: true },
  );
  return rowCount > 0;
}

/** Notes the provider's call SID on the lead and its attempt as soon as it is known. */
export async function recordCallId(q: Queryable, leadId: string, workerId: string, attempt: number, callId: string): Promise<void> {
  await q.query(
    `WITH l AS (UPDATE leads SET call_id = $3, updated_at = now() WHERE id = $1 AND status = 'PROCESSING' AND locked_by = $2 RETURNING id)
     UPDATE call_attempts SET call_id = $3 WHERE lead_id = (SELECT id FROM l) AND attempt = $4`,
    [leadId, workerId, callId, attempt],
    { prepare: true },
  );
}

/**
 * Recovers leads whose lease expired (their worker died): RETRY while retries remain, else
 * FINISHED `worker_lost`; their numbers go back to the pool. Also frees numbers IN_USE by a lead
 * that is no longer being called, and forgets rate-limit history older than a day.
 */
export async function recoverExpired(q: Queryable, onFinished: OnFinished, limit = 500): Promise<{ retried: number; finished: number }> {
  const { rows } = await q.query<{ id: string; attempt_count: number; max_retry: number | null; retry_offset: number | null }>(
    `SELECT l.id, l.attempt_count, c.max_retry, c.retry_offset
     FROM leads l LEFT JOIN configurations c ON c.reseller_id = l.reseller_id AND c.template_id = l.template_id
     WHERE l.status = 'PROCESSING' AND l.locked_until < now()
     ORDER BY l.locked_until LIMIT $1
     FOR UPDATE OF l SKIP LOCKED`,
    [limit],
  );
  let retried = 0;
  const finished: string[] = [];
  for (const row of rows) {
    const retry = row.attempt_count <= (row.max_retry ?? FALLBACK.max_retry);
    await q.query(
      `UPDATE leads SET status = $2, outcome = $3, call_end_time = coalesce(call_end_time, now()), locked_by = NULL, locked_until = NULL,
              meta_data = meta_data || jsonb_build_object('last_error', jsonb_build_object('attempt', attempt_count, 'outcome', 'worker_lost',
                'message', 'the worker carrying the call stopped renewing its lease')),
              next_attempt_at = CASE WHEN $2 = 'RETRY' THEN now() + make_interval(secs => $4) END, updated_at = now()
       WHERE id = $1`,
      [row.id, retry ? 'RETRY' : 'FINISHED', retry ? null : 'worker_lost', row.retry_offset ?? FALLBACK.retry_offset],
    );
    await q.query(
      `UPDATE call_attempts SET status = 'LOST', outcome = 'worker_lost', ended_at = now(), error = 'lease expired' WHERE lead_id = $1 AND attempt = $2`,
      [row.id, row.attempt_count],
    );
    await q.query(`UPDATE outbound_numbers SET status = 'AVAILABLE', lead_id = NULL, updated_at = now() WHERE lead_id = $1 AND status = 'IN_USE'`, [row.id]);
    if (retry) retried++;
    else finished.push(row.id);
  }
  if (finished.length > 0) await onFinished(q, finished);
  await q.query(
    `UPDATE outbound_numbers n SET status = 'AVAILABLE', lead_id = NULL, updated_at = now()
     WHERE n.status = 'IN_USE' AND NOT EXISTS (SELECT 1 FROM leads l WHERE l.id = n.lead_id AND l.status = 'PROCESSING')`,
  );
  await q.query(`DELETE FROM rate_limit_events WHERE at < now() - interval '1 day'`);
  return { retried, finished: finished.length };
}

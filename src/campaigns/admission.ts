/**
 * A campaign's admission of call starts, decided inside a claim's transaction with the campaign's
 * row locked, so claims of every worker take turns per campaign and each sees the starts of the
 * one before (under READ COMMITTED each statement after the lock reads what was committed):
 * - open: active (not paused or stopped) and between its dates;
 * - cap: its PROCESSING leads (live calls and calls being placed) plus the starts admitted now
 *   never exceed `max_concurrent_calls`;
 * - pace: at most one start per claim, and only once the database's clock has reached
 *   `next_start_at`, which then moves to this start + 1/rate: the recorded start times of any two
 *   calls of the campaign are at least 1/rate apart;
 * - breaker: at most once a second, the attempts that ended in its window (and since the campaign
 *   was last resumed: a resume starts the count afresh) are counted; more failures (busy, failed,
 *   error) than its ratio, over at least `min_calls` attempts, pause the campaign with the figures
 *   as its reason.
 */
import type { Queryable } from '../db/index.js';
import { BREAKER_FAILURES, campaignOpenSql } from '../lifecycle/index.js';

export interface Admission {
  /** Per campaign, how many of its leads this claim may start. */
  allowed: Map<string, number>;
  /** The earliest instant a paced campaign may start its next call (the worker looks again then). */
  wakeAt?: Date;
}

interface Reading {
  id: string;
  open: boolean;
  cap: number | null;
  paced: boolean;
  pace_ready: boolean;
  live: number;
  ratio: number | null;
  min_calls: number | null;
  calls: number | null;
  failures: number | null;
}

/**
 * Locks the campaigns `ids` (in id order: claims never wait on each other in a circle) and decides
 * how many starts each may have in this claim, writing what the decision moves on (the pace, the
 * breaker's look, a pause). Call it in the claim's transaction, before its leads are taken.
 */
export async function admitCampaignStarts(q: Queryable, ids: readonly string[]): Promise<Admission> {
  const admission: Admission = { allowed: new Map() };
  if (ids.length === 0) return admission;
  await q.query('SELECT id FROM campaigns WHERE id = ANY($1::text[]) ORDER BY id FOR NO KEY UPDATE', [ids], { prepare: true });
  const { rows } = await q.query<Reading>(
    `SELECT c.id, ${campaignOpenSql('c')} AS open, c.max_concurrent_calls AS cap, c.max_calls_per_second IS NOT NULL AS paced,
            (c.next_start_at IS NULL OR c.next_start_at <= now()) AS pace_ready,
            CASE WHEN c.max_concurrent_calls IS NULL THEN 0
                 ELSE (SELECT count(*)::int FROM leads l WHERE l.campaign_id = c.id AND l.status = 'PROCESSING') END AS live,
            c.breaker_failure_ratio AS ratio, c.breaker_min_calls AS min_calls, b.calls, b.failures
     FROM campaigns c
     LEFT JOIN LATERAL (
       SELECT count(*)::int AS calls, count(*) FILTER (WHERE a.outcome = ANY($2::text[]))::int AS failures
       FROM call_attempts a JOIN leads l ON l.id = a.lead_id
       WHERE a.ended_at > greatest(now() - make_interval(secs => c.breaker_window_seconds), coalesce(c.breaker_since, '-infinity')) AND l.campaign_id = c.id) AS b
       ON c.breaker_failure_ratio IS NOT NULL AND c.state = 'active'
          AND (c.breaker_checked_at IS NULL OR c.breaker_checked_at <= now() - interval '1 second')
     WHERE c.id = ANY($1::text[])`,
    [ids, BREAKER_FAILURES],
    { prepare: true },
  );
  const moves: { id: string; started: boolean; checked: boolean; pause: string | null }[] = [];
  for (const r of rows) {
    const checked = r.calls !== null;
    const tripped = checked && r.calls! >= r.min_calls! && r.failures! / r.calls! > r.ratio!;
    const pause = tripped
      ? `circuit breaker: ${r.failures} of the last ${r.calls} attempts failed (busy, failed or error), more than ${Math.round(r.ratio! * 100)} %`
      : null;
    let allowed = r.open && !tripped ? Number.MAX_SAFE_INTEGER : 0;
    if (r.cap !== null) allowed = Math.min(allowed, Math.max(0, r.cap - r.live));
    if (r.paced) allowed = r.pace_ready ? Math.min(allowed, 1) : 0;
    admission.allowed.set(r.id, allowed);
    const started = r.paced && allowed > 0;
    if (started || checked) moves.push({ id: r.id, started, checked, pause });
  }
  if (moves.length > 0) {
    const { rows: paced } = await q.query<{ next_start_at: Date | null }>(
      `UPDATE campaigns c SET
         next_start_at = CASE WHEN m.started THEN now() + make_interval(secs => 1.0 / c.max_calls_per_second) ELSE c.next_start_at END,
         breaker_checked_at = CASE WHEN m.checked THEN now() ELSE c.breaker_checked_at END,
         state = CASE WHEN m.pause IS NOT NULL THEN 'paused' ELSE c.state END,
         paused_reason = coalesce(m.pause, c.paused_reason),
         updated_at = CASE WHEN m.pause IS NOT NULL THEN now() ELSE c.updated_at END
       FROM jsonb_to_recordset($1::jsonb) AS m (id text, started boolean, checked boolean, pause text)
       WHERE c.id = m.id
       RETURNING CASE WHEN m.started THEN c.next_start_at END AS next_start_at`,
      [JSON.stringify(moves)],
      { prepare: true },
    );
    for (const { next_start_at: at } of paced) {
      if (at && (!admission.wakeAt || at < admission.wakeAt)) admission.wakeAt = at;
    }
  }
  return admission;
}

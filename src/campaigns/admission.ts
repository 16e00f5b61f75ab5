/**
 * A campaign's admission of call starts, decided inside a claim's transaction with the campaign's
 * row locked, so claims of every worker take turns per campaign and each sees the starts of the
 * one before (under READ COMMITTED each statement after the lock reads what was committed):
 * - open: active (not paused or stopped) and between its dates;
 * - cap: its PROCESSING leads (live calls and calls being placed) plus the starts admitted now
 *   never exceed `max_concurrent_calls`;
 * - pace: starts on a grid of 1/rate steps from `next_start_at`: a claim takes the slots that fall
 *   within the claim's lookahead (PACE_LOOKAHEAD) from now (as many as it has leads of the campaign, at most), gives one
 *   to each lead it admits, and moves `next_start_at` past the last; the worker dials each lead at
 *   its slot. Two starts of a campaign are at least 1/rate apart however the claims fall; when its
 *   next slot has passed, the grid moves on from now (no burst to catch up);
 * - breaker: at most once a second, the attempts that ended in its window (and since the campaign
 *   was last resumed: a resume starts the count afresh) are counted; more failures (busy, failed,
 *   error) than its ratio, over at least `min_calls` attempts, pause the campaign with the figures
 *   as its reason.
 */
import type { Queryable } from '../db/index.js';
import type { PaceSlot } from '../lifecycle/index.js';
import { BREAKER_FAILURES, campaignOpenSql, firstSlotSql, paceLookaheadMs, paceSlotsSql } from '../lifecycle/index.js';

export interface Admission {
  /** Per campaign, how many of its leads this claim may start. */
  allowed: Map<string, number>;
  /** Per paced campaign, its admitted starts' slots, in order (one per lead admitted). */
  slots: Map<string, PaceSlot[]>;
  /** When a paced campaign's next slot comes within the lookahead (the worker claims again then). */
  wakeAt?: Date;
}

interface Reading {
  id: string;
  open: boolean;
  cap: number | null;
  paced: boolean;
  /** Paced: the first slot it may give now, and how many fall within the lookahead. */
  first_slot: Date | null;
  pace_slots: number;
  step_ms: number | null;
  live: number;
  ratio: number | null;
  min_calls: number | null;
  /** The breaker's look is due (it has one, the campaign runs, and it last looked a second ago or more). */
  breaker_due: boolean;
}

/**
 * Locks the campaigns of `leads` (campaign id -> how many of its leads the claim holds; in id
 * order: claims never wait on each other in a circle) and decides how many starts each may have in
 * this claim, writing what the decision moves on (the pace, the breaker's look, a pause). Call it
 * in the claim's transaction, before its leads are taken. `lookaheadMs`: how far ahead it takes a
 * paced campaign's start slots (see PACE_LOOKAHEAD).
 */
export async function admitCampaignStarts(q: Queryable, leads: ReadonlyMap<string, number>, lookaheadMs?: number): Promise<Admission> {
  const lookahead = paceLookaheadMs(lookaheadMs ?? 0);
  const admission: Admission = { allowed: new Map(), slots: new Map() };
  const ids = [...leads.keys()];
  if (ids.length === 0) return admission;
  await q.query('SELECT id FROM campaigns WHERE id = ANY($1::text[]) ORDER BY id FOR NO KEY UPDATE', [ids], { prepare: true });
  const { rows } = await q.query<Reading>(
    `SELECT c.id, ${campaignOpenSql('c')} AS open, c.max_concurrent_calls AS cap, c.max_calls_per_second IS NOT NULL AS paced,
            CASE WHEN c.max_calls_per_second IS NOT NULL THEN ${firstSlotSql('c')} END AS first_slot,
            CASE WHEN c.max_calls_per_second IS NOT NULL THEN ${paceSlotsSql('c', lookahead)} ELSE 0 END AS pace_slots,
            1000.0 / c.max_calls_per_second AS step_ms,
            CASE WHEN c.max_concurrent_calls IS NULL THEN 0
                 ELSE (SELECT count(*)::int FROM leads l WHERE l.campaign_id = c.id AND l.status = 'PROCESSING') END AS live,
            c.breaker_failure_ratio AS ratio, c.breaker_min_calls AS min_calls,
            c.breaker_failure_ratio IS NOT NULL AND c.state = 'active'
              AND (c.breaker_checked_at IS NULL OR c.breaker_checked_at <= now() - interval '1 second') AS breaker_due
     FROM campaigns c
     WHERE c.id = ANY($1::text[])`,
    [ids],
    { prepare: true },
  );
  // The breaker's look, only for the campaigns whose look is due (a breaker at most once a second):
  // the attempts that ended in its window, counted by the ended_at index.
  const due = rows.filter((r) => r.breaker_due).map((r) => r.id);
  const looks = new Map<string, { calls: number; failures: number }>();
  if (due.length > 0) {
    const { rows: counted } = await q.query<{ id: string; calls: number; failures: number }>(
      `SELECT c.id, b.calls, b.failures
       FROM campaigns c
       CROSS JOIN LATERAL (
         SELECT count(*)::int AS calls, count(*) FILTER (WHERE a.outcome = ANY($2::text[]))::int AS failures
         FROM call_attempts a JOIN leads l ON l.id = a.lead_id
         WHERE a.ended_at > greatest(now() - make_interval(secs => c.breaker_window_seconds), coalesce(c.breaker_since, '-infinity')) AND l.campaign_id = c.id) AS b
       WHERE c.id = ANY($1::text[])`,
      [due, BREAKER_FAILURES],
      { prepare: true },
    );
    for (const r of counted) looks.set(r.id, { calls: r.calls, failures: r.failures });
  }
  const moves: { id: string; started: number; first: string | null; checked: boolean; pause: string | null }[] = [];
  for (const r of rows) {
    const look = looks.get(r.id);
    const checked = look !== undefined;
    const tripped = look !== undefined && look.calls >= r.min_calls! && look.failures / look.calls > r.ratio!;
    const pause = tripped
      ? `circuit breaker: ${look.failures} of the last ${look.calls} attempts failed (busy, failed or error), more than ${Math.round(r.ratio! * 100)} %`
      : null;
    let allowed = r.open && !tripped ? (leads.get(r.id) ?? 0) : 0;
    if (r.cap !== null) allowed = Math.min(allowed, Math.max(0, r.cap - r.live));
    if (r.paced) allowed = Math.min(allowed, r.pace_slots);
    admission.allowed.set(r.id, allowed);
    const started = r.paced && allowed > 0 ? allowed : 0;
    if (started > 0) {
      const first = new Date(r.first_slot!).getTime();
      admission.slots.set(r.id, Array.from({ length: allowed }, (_, i) => ({ at: new Date(first + i * r.step_ms!), campaignId: r.id, stepMs: r.step_ms! })));
    }
    if (started > 0 || checked) moves.push({ id: r.id, started, first: started > 0 ? new Date(r.first_slot!).toISOString() : null, checked, pause });
  }
  if (moves.length > 0) {
    const { rows: paced } = await q.query<{ next_start_at: Date | null }>(
      `UPDATE campaigns c SET
         next_start_at = CASE WHEN m.started > 0 THEN m.first + make_interval(secs => m.started / c.max_calls_per_second) ELSE c.next_start_at END,
         breaker_checked_at = CASE WHEN m.checked THEN now() ELSE c.breaker_checked_at END,
         state = CASE WHEN m.pause IS NOT NULL THEN 'paused' ELSE c.state END,
         paused_reason = coalesce(m.pause, c.paused_reason),
         updated_at = CASE WHEN m.pause IS NOT NULL THEN now() ELSE c.updated_at END
       FROM jsonb_to_recordset($1::jsonb) AS m (id text, started integer, first timestamptz, checked boolean, pause text)
       WHERE c.id = m.id
       RETURNING CASE WHEN m.started > 0 THEN c.next_start_at END AS next_start_at`,
      [JSON.stringify(moves)],
      { prepare: true },
    );
    for (const { next_start_at: next } of paced) {
      // The next slot comes within reach of a claim a lookahead before it is due.
      const at = next ? new Date(new Date(next).getTime() - lookahead) : undefined;
      if (at && (!admission.wakeAt || at < admission.wakeAt)) admission.wakeAt = at;
    }
  }
  return admission;
}

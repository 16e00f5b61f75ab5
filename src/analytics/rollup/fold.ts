/**
 * Folding the rollup: moving the delta rows the leads trigger appends (migration 006) into the
 * rollup tables. One statement per table, so the deltas it deletes and the leads it may read to
 * recompute a bucket's minimum or maximum duration are seen in the same snapshot. The folder
 * (../fold.ts) runs it, one folder at a time.
 */
import type { Queryable } from '../../db/index.js';
import { NOT_REACHED_OUTCOMES } from '../../lifecycle/index.js';

const TOTALS_KEY = 'reseller_id, merchant_id, template_id, hour, status';
const BREAKDOWN_KEY = 'reseller_id, merchant_id, template_id, hour, dimension, value';
const NOT_REACHED = NOT_REACHED_OUTCOMES.map((o) => `'${o}'`).join(', ');

/**
 * Totals. A bucket's min/max is recomputed from the leads when a removed duration may have been its
 * minimum or maximum (every removed value lies within [min, max] of what was there plus what was
 * added, so it was an extreme only when it reaches one).
 */
const FOLD_TOTALS = `
WITH moved AS (DELETE FROM lead_stats_delta RETURNING *),
d AS (
  SELECT ${TOTALS_KEY}, sum(leads) AS leads, sum(dialled) AS dialled, sum(connected) AS connected, sum(completed) AS completed,
         sum(with_duration) AS with_duration, sum(duration_sum) AS duration_sum,
         min(duration_min) AS added_min, max(duration_max) AS added_max, min(removed_min) AS removed_min, max(removed_max) AS removed_max,
         sum(negative) AS negative, sum(neutral) AS neutral, sum(positive) AS positive
  FROM moved GROUP BY ${TOTALS_KEY}),
m AS (
  SELECT d.reseller_id, d.merchant_id, d.template_id, d.hour, d.status,
         coalesce(s.leads, 0) + d.leads AS leads, coalesce(s.dialled, 0) + d.dialled AS dialled,
         coalesce(s.connected, 0) + d.connected AS connected, coalesce(s.completed, 0) + d.completed AS completed,
         coalesce(s.with_duration, 0) + d.with_duration AS with_duration, coalesce(s.duration_sum, 0) + d.duration_sum AS duration_sum,
         least(s.duration_min, d.added_min) AS duration_min, greatest(s.duration_max, d.added_max) AS duration_max,
         coalesce(d.removed_min <= least(s.duration_min, d.added_min) OR d.removed_max >= greatest(s.duration_max, d.added_max), false) AS dirty,
         coalesce(s.negative, 0) + d.negative AS negative, coalesce(s.neutral, 0) + d.neutral AS neutral,
         coalesce(s.positive, 0) + d.positive AS positive
  FROM d LEFT JOIN lead_stats s USING (${TOTALS_KEY})),
f AS (
  SELECT m.reseller_id, m.merchant_id, m.template_id, m.hour, m.status, m.leads, m.dialled, m.connected, m.completed,
         m.with_duration, m.duration_sum,
         CASE WHEN m.with_duration = 0 THEN NULL WHEN m.dirty THEN r.duration_min ELSE m.duration_min END AS duration_min,
         CASE WHEN m.with_duration = 0 THEN NULL WHEN m.dirty THEN r.duration_max ELSE m.duration_max END AS duration_max,
         m.negative, m.neutral, m.positive
  FROM m
  LEFT JOIN LATERAL (
    -- Read only for a dirty bucket (the condition in here is a one-time filter: a clean bucket
    -- reads nothing), and only its leads with a duration (leads_durations_idx): an hour's bucket
    -- may hold a whole import's queued leads, none of which has one.
    SELECT min(l.duration_seconds) AS duration_min, max(l.duration_seconds) AS duration_max
    FROM leads l
    WHERE m.dirty AND m.with_duration > 0 AND l.duration_seconds IS NOT NULL
      AND l.reseller_id = m.reseller_id
      AND coalesce(l.call_initiated_time, l.created_at) >= m.hour
      AND coalesce(l.call_initiated_time, l.created_at) < m.hour + interval '1 hour'
      AND NOT l.is_playground AND l.execution_mode NOT IN ('TELEPHONY_TEST', 'WEBRTC_TEST')
      AND coalesce(l.merchant_id, '') = m.merchant_id AND l.template_id = m.template_id AND l.status = m.status
  ) AS r ON m.dirty AND m.with_duration > 0),
upserted AS (
  INSERT INTO lead_stats (${TOTALS_KEY}, leads, dialled, connected, completed, with_duration, duration_sum, duration_min, duration_max,
                          negative, neutral, positive)
  SELECT * FROM f WHERE f.leads <> 0
  ON CONFLICT (reseller_id, hour, merchant_id, template_id, status) DO UPDATE SET
    leads = excluded.leads, dialled = excluded.dialled, connected = excluded.connected, completed = excluded.completed,
    with_duration = excluded.with_duration, duration_sum = excluded.duration_sum,
    duration_min = excluded.duration_min, duration_max = excluded.duration_max,
    negative = excluded.negative, neutral = excluded.neutral, positive = excluded.positive),
emptied AS (
  DELETE FROM lead_stats s USING f
  WHERE f.leads = 0 AND (s.reseller_id, s.merchant_id, s.template_id, s.hour, s.status) = (f.reseller_id, f.merchant_id, f.template_id, f.hour, f.status))
SELECT (SELECT count(*) FROM moved)::int AS moved`;

/** Breakdown: the hourly rows and, from the same deltas, the daily rows. */
const FOLD_BREAKDOWN = `
WITH moved AS (DELETE FROM lead_stats_breakdown_delta RETURNING *),
d AS (
  SELECT ${BREAKDOWN_KEY}, sum(leads) AS leads, sum(reached) AS reached, sum(with_duration) AS with_duration, sum(duration_sum) AS duration_sum
  FROM moved GROUP BY ${BREAKDOWN_KEY}),
f AS (
  SELECT d.reseller_id, d.merchant_id, d.template_id, d.hour, d.dimension, d.value,
         coalesce(s.leads, 0) + d.leads AS leads, coalesce(s.reached, 0) + d.reached AS reached,
         coalesce(s.with_duration, 0) + d.with_duration AS with_duration, coalesce(s.duration_sum, 0) + d.duration_sum AS duration_sum
  FROM d LEFT JOIN lead_stats_breakdown s USING (${BREAKDOWN_KEY})),
upserted AS (
  INSERT INTO lead_stats_breakdown (${BREAKDOWN_KEY}, leads, reached, with_duration, duration_sum)
  SELECT * FROM f WHERE f.leads <> 0
  ON CONFLICT (reseller_id, dimension, hour, merchant_id, template_id, value) DO UPDATE SET
    leads = excluded.leads, reached = excluded.reached, with_duration = excluded.with_duration, duration_sum = excluded.duration_sum),
emptied AS (
  DELETE FROM lead_stats_breakdown s USING f
  WHERE f.leads = 0
    AND (s.reseller_id, s.merchant_id, s.template_id, s.hour, s.dimension, s.value) = (f.reseller_id, f.merchant_id, f.template_id, f.hour, f.dimension, f.value)),
dd AS (
  SELECT reseller_id, merchant_id, template_id, date_trunc('day', hour AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS day, dimension, value,
         sum(leads) AS leads, sum(reached) AS reached, sum(with_duration) AS with_duration, sum(duration_sum) AS duration_sum
  FROM d GROUP BY 1, 2, 3, 4, 5, 6),
fd AS (
  SELECT dd.reseller_id, dd.merchant_id, dd.template_id, dd.day, dd.dimension, dd.value,
         coalesce(s.leads, 0) + dd.leads AS leads, coalesce(s.reached, 0) + dd.reached AS reached,
         coalesce(s.with_duration, 0) + dd.with_duration AS with_duration, coalesce(s.duration_sum, 0) + dd.duration_sum AS duration_sum
  FROM dd LEFT JOIN lead_stats_breakdown_daily s USING (reseller_id, merchant_id, template_id, day, dimension, value)),
upserted_daily AS (
  INSERT INTO lead_stats_breakdown_daily (reseller_id, merchant_id, template_id, day, dimension, value, leads, reached, with_duration, duration_sum)
  SELECT * FROM fd WHERE fd.leads <> 0
  ON CONFLICT (reseller_id, dimension, day, merchant_id, template_id, value) DO UPDATE SET
    leads = excluded.leads, reached = excluded.reached, with_duration = excluded.with_duration, duration_sum = excluded.duration_sum),
emptied_daily AS (
  DELETE FROM lead_stats_breakdown_daily s USING fd
  WHERE fd.leads = 0
    AND (s.reseller_id, s.merchant_id, s.template_id, s.day, s.dimension, s.value) = (fd.reseller_id, fd.merchant_id, fd.template_id, fd.day, fd.dimension, fd.value))
SELECT (SELECT count(*) FROM moved)::int AS moved`;

/** Moves the pending deltas into the rollup tables; returns the number of delta rows moved. */
export async function foldDeltas(q: Queryable): Promise<number> {
  return (await foldTable(q, FOLD_TOTALS)) + (await foldTable(q, FOLD_BREAKDOWN));
}

async function foldTable(q: Queryable, sql: string): Promise<number> {
  // Prepared: the folder runs every second or so, and planning these statements cost more than
  // running them on the few delta rows a second brings (on the embedded database, 20 to 100 ms
  // that every other statement waited behind).
  const { rows } = await q.query<{ moved: number }>(sql, [], { prepare: true });
  return rows[0]?.moved ?? 0;
}

/**
 * The twelve query types answered from the rollup (migration 006): the same rows as the queries
 * over the leads (../queries), from hourly statistics rows instead of one row per lead.
 *
 * Terminology
 * - rollup row: a row of lead_stats (totals), lead_stats_breakdown or lead_stats_breakdown_daily,
 *   or a not yet folded delta row (hourly); the sources below read folded rows and deltas in one
 *   statement, so every committed change counts exactly once.
 * - bucket: a UTC hour (a UTC day in lead_stats_breakdown_daily). A request the rollup answers
 *   selects whole hours (see eligibility.ts).
 *
 * A query returns undefined when the rollup cannot promise the exact answer (a minimum or maximum
 * duration whose holder left a bucket since the last fold; a time zone whose local hours do not
 * start on UTC hours in the data's range): the service then asks the leads.
 */
import { callOutcome } from '../filters.js';
import { bucketing } from '../queries/series.js';
import { runPaged, runPagedChecked, type MaybeRowsPage, type QueryContext } from '../queries/context.js';
import { PERCENTAGE } from '../queries/shares.js';
import type { AnalyticsRow, QueryType } from '../schemas.js';
import type { Queryable } from '../../db/index.js';

/** A query context with the rollup's WHERE clauses: `where` (scope and hours), and `scope` and `hours` apart. */
export interface RollupContext extends QueryContext {
  scope: string;
  /** The selected hours: from inclusive, to exclusive, both on whole hours. */
  hours: { from?: Date; to?: Date };
}

export type RollupQuery = (q: Queryable, c: RollupContext) => Promise<MaybeRowsPage<AnalyticsRow>>;

const DAY_MS = 86_400_000;

const TOTALS_COLUMNS = 'reseller_id, merchant_id, template_id, hour, status, leads, dialled, connected, completed, with_duration, duration_sum';
const SENTIMENT_COLUMNS = 'negative, neutral, positive';

/** Totals rows (alias `s`): folded rows and pending deltas. Filter with `c.where`. */
const TOTALS = `(SELECT ${TOTALS_COLUMNS}, duration_min, duration_max, NULL::int AS removed_min, NULL::int AS removed_max, ${SENTIMENT_COLUMNS}
                 FROM lead_stats
                 UNION ALL
                 SELECT ${TOTALS_COLUMNS}, duration_min, duration_max, removed_min, removed_max, ${SENTIMENT_COLUMNS}
                 FROM lead_stats_delta) AS s`;

const BREAKDOWN_COLUMNS = 'reseller_id, merchant_id, template_id, dimension, value, leads, reached, with_duration, duration_sum';

/**
 * Breakdown rows (alias `s`) of one dimension: the whole UTC days of the selected hours from the
 * daily rows, the hours before the first and after the last whole day from the hourly rows, and the
 * pending deltas (hourly) of all the selected hours.
 */
function breakdown(c: RollupContext, dimension: 'outcome' | 'attempts' | 'provider'): string {
  const { from, to } = c.hours;
  const at = (d: Date) => `${c.params.add(d.toISOString())}::timestamptz`;
  const firstDay = from && new Date(Math.ceil(from.getTime() / DAY_MS) * DAY_MS);
  const endDay = to && new Date(Math.floor(to.getTime() / DAY_MS) * DAY_MS);
  const daily: string[] = [];
  const hourly: string[] = [];
  if (firstDay && endDay && firstDay >= endDay) {
    daily.push('FALSE');
    hourly.push(`(s.hour >= ${at(from!)} AND s.hour < ${at(to!)})`);
  } else {
    if (firstDay) {
      daily.push(`s.day >= ${at(firstDay)}`);
      hourly.push(`(s.hour >= ${at(from!)} AND s.hour < ${at(firstDay)})`);
    }
    if (endDay) {
      daily.push(`s.day < ${at(endDay)}`);
      hourly.push(`(s.hour >= ${at(endDay)} AND s.hour < ${at(to!)})`);
    }
  }
  const kind = `s.dimension = '${dimension}'`;
  return `(SELECT ${BREAKDOWN_COLUMNS} FROM lead_stats_breakdown_daily s WHERE ${kind} AND ${c.scope}${daily.map((d) => ` AND ${d}`).join('')}
           UNION ALL
           SELECT ${BREAKDOWN_COLUMNS} FROM lead_stats_breakdown s WHERE ${kind} AND ${c.scope} AND (${hourly.length > 0 ? hourly.join(' OR ') : 'FALSE'})
           UNION ALL
           SELECT ${BREAKDOWN_COLUMNS} FROM lead_stats_breakdown_delta s WHERE ${kind} AND ${c.where}) AS s`;
}

/** Average of durations from sums, as round(avg(duration), 2) over the leads gives it. */
const AVG_DURATION = 'round(sum(s.duration_sum)::numeric / nullif(sum(s.with_duration), 0), 2)::float8';

/** What a counting query sums over totals rows: their leads, or their dialled leads (calls) with `callsOnly`. */
const counted = (c: QueryContext) => (c.callsOnly ? 's.dialled' : 's.leads');

const callCount: RollupQuery = (q, c) =>
  runPaged(q, c, `SELECT coalesce(sum(${counted(c)}), 0)::int AS count FROM ${TOTALS} WHERE ${c.where}`, 'count');

/**
 * Min and max are exact unless a pending delta removed a duration that reaches the minimum or
 * maximum seen (it may have been the only lead holding it): then `exact` is false.
 */
const callDuration: RollupQuery = (q, c) =>
  runPagedChecked(
    q,
    c,
    `SELECT ${AVG_DURATION} AS avg,
            CASE WHEN sum(s.with_duration) > 0 THEN min(s.duration_min) END AS min,
            CASE WHEN sum(s.with_duration) > 0 THEN max(s.duration_max) END AS max,
            coalesce(sum(s.duration_sum), 0)::bigint AS total,
            coalesce(NOT (min(s.removed_min) <= min(s.duration_min) OR max(s.removed_max) >= max(s.duration_max)), true) AS exact
     FROM ${TOTALS} WHERE ${c.where}`,
    'total',
  );

const outcomes = (c: RollupContext) =>
  `SELECT key, count, ${PERCENTAGE} AS percentage
   FROM (SELECT s.value AS key, sum(s.leads)::int AS count
         FROM ${breakdown(c, 'outcome')}${c.callsOnly ? ` WHERE ${callOutcome('s.value')}` : ''}
         GROUP BY s.value
         HAVING sum(s.leads) <> 0) AS outcomes`;

const outcomeDistribution: RollupQuery = (q, c) => runPaged(q, c, outcomes(c), 'key COLLATE "C"');
const topOutcomes: RollupQuery = (q, c) => runPaged(q, c, outcomes(c), 'count DESC, key COLLATE "C"');

const statusDistribution: RollupQuery = (q, c) =>
  runPaged(
    q,
    c,
    `SELECT ord, key, count, ${PERCENTAGE} AS percentage
     FROM (SELECT st.ord, st.key, coalesce(n.count, 0) AS count
           FROM (VALUES (1, 'BACKLOG'), (2, 'PROCESSING'), (3, 'RETRY'), (4, 'FINISHED')) AS st (ord, key)
           LEFT JOIN (SELECT s.status, sum(s.leads)::int AS count
                      FROM ${TOTALS}
                      WHERE ${c.where}
                      GROUP BY s.status) AS n ON n.status = st.key) AS statuses`,
    'ord',
  );

const sentimentDistribution: RollupQuery = (q, c) =>
  runPaged(
    q,
    c,
    `SELECT ord, key, count, ${PERCENTAGE} AS percentage
     FROM (SELECT k.ord, k.key, k.count
           FROM (SELECT coalesce(sum(s.negative), 0)::int AS negative, coalesce(sum(s.neutral), 0)::int AS neutral,
                        coalesce(sum(s.positive), 0)::int AS positive
                 FROM ${TOTALS}
                 WHERE ${c.where}) AS t
           CROSS JOIN LATERAL (VALUES (1, 'negative', t.negative), (2, 'neutral', t.neutral), (3, 'positive', t.positive))
             AS k (ord, key, count)) AS classes`,
    'ord',
  );

/**
 * A rollup hour belongs to one local bucket only when the zone's offset is whole hours at that
 * time: `aligned` says so per bucket, and the answer is exact only when every bucket is.
 */
function series(c: QueryContext, measure: string, present: string) {
  const b = bucketing(c, 's.hour');
  const local = `s.hour AT TIME ZONE ${c.params.add(c.timeZone)}::text`;
  return `WITH buckets AS (
       SELECT ${b.bucket} AS bucket, ${measure} AS value, bool_and(date_trunc('hour', ${local}) = ${local}) AS aligned
       FROM ${TOTALS}
       WHERE ${c.where}
       GROUP BY 1
       HAVING sum(${present}) <> 0
     )
     SELECT sr.bucket AS ord, ${b.label('sr.bucket')} AS date, coalesce(buckets.value, 0) AS %VALUE%,
            coalesce((SELECT bool_and(aligned) FROM buckets), true) AS exact
     FROM ${b.series('buckets')} AS sr (bucket)
     LEFT JOIN buckets ON buckets.bucket = sr.bucket`;
}

const callsOverTime: RollupQuery = (q, c) =>
  runPagedChecked(q, c, series(c, `sum(${counted(c)})::int`, counted(c)).replace('%VALUE%', 'count'), 'ord');

const avgDurationOverTime: RollupQuery = (q, c) =>
  runPagedChecked(q, c, series(c, AVG_DURATION, 's.leads').replace('%VALUE%', 'avg_duration'), 'ord');

const hourlyHeatmap: RollupQuery = (q, c) => {
  const local = `s.hour AT TIME ZONE ${c.params.add(c.timeZone)}::text`;
  const aligned = `bool_and(date_trunc('hour', ${local}) = ${local})`;
  if (!c.byWeekday) {
    return runPagedChecked(
      q,
      c,
      `WITH n AS (SELECT extract(hour FROM ${local})::int AS hour, sum(${counted(c)})::int AS count, ${aligned} AS aligned
                  FROM ${TOTALS}
                  WHERE ${c.where}
                  GROUP BY 1)
       SELECT h.hour AS ord, h.hour, coalesce(n.count, 0) AS count, coalesce((SELECT bool_and(aligned) FROM n), true) AS exact
       FROM generate_series(0, 23) AS h (hour)
       LEFT JOIN n ON n.hour = h.hour`,
      'ord',
    );
  }
  return runPagedChecked(
    q,
    c,
    `WITH n AS (SELECT extract(isodow FROM ${local})::int AS weekday, extract(hour FROM ${local})::int AS hour, sum(${counted(c)})::int AS count,
                       ${aligned} AS aligned
                FROM ${TOTALS}
                WHERE ${c.where}
                GROUP BY 1, 2)
     SELECT d.weekday * 100 + h.hour AS ord, d.weekday, h.hour, coalesce(n.count, 0) AS count,
            coalesce((SELECT bool_and(aligned) FROM n), true) AS exact
     FROM generate_series(1, 7) AS d (weekday)
     CROSS JOIN generate_series(0, 23) AS h (hour)
     LEFT JOIN n ON n.weekday = d.weekday AND n.hour = h.hour`,
    'ord',
  );
};

const retryAnalysis: RollupQuery = (q, c) =>
  runPaged(
    q,
    c,
    `SELECT s.value::int AS attempts, sum(s.leads)::int AS count,
            round(sum(s.reached)::numeric / sum(s.leads), 4)::float8 AS success_rate
     FROM ${breakdown(c, 'attempts')}
     GROUP BY s.value
     HAVING sum(s.leads) <> 0`,
    'attempts',
  );

const providerBreakdown: RollupQuery = (q, c) =>
  runPaged(
    q,
    c,
    `SELECT s.value AS provider, sum(s.leads)::int AS count, ${AVG_DURATION} AS avg_duration
     FROM ${breakdown(c, 'provider')}
     GROUP BY s.value
     HAVING sum(s.leads) <> 0`,
    'count DESC, provider COLLATE "C"',
  );

const conversionFunnel: RollupQuery = (q, c) =>
  runPaged(
    q,
    c,
    `SELECT k.ord, k.stage, k.count
     FROM (SELECT coalesce(sum(s.leads), 0)::int AS pushed, coalesce(sum(s.dialled), 0)::int AS dialled,
                  coalesce(sum(s.connected), 0)::int AS connected, coalesce(sum(s.completed), 0)::int AS completed
           FROM ${TOTALS}
           WHERE ${c.where}) AS t
     CROSS JOIN LATERAL (VALUES (1, 'pushed', t.pushed), (2, 'dialled', t.dialled),
                                (3, 'connected', t.connected), (4, 'completed', t.completed)) AS k (ord, stage, count)`,
    'ord',
  );

export const ROLLUP_QUERIES: Readonly<Record<QueryType, RollupQuery>> = {
  call_count: callCount,
  call_duration: callDuration,
  outcome_distribution: outcomeDistribution,
  sentiment_distribution: sentimentDistribution,
  status_distribution: statusDistribution,
  calls_over_time: callsOverTime,
  avg_duration_over_time: avgDurationOverTime,
  top_outcomes: topOutcomes,
  retry_analysis: retryAnalysis,
  provider_breakdown: providerBreakdown,
  hourly_heatmap: hourlyHeatmap,
  conversion_funnel: conversionFunnel,
};

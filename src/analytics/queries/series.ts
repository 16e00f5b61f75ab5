/**
 * Time-based queries: calls_over_time, avg_duration_over_time (zero-filled buckets) and the
 * hourly heatmap. Buckets are cut on the wall clock of the request's time zone.
 */
import type { Granularity, HeatmapRow, TimeAverageRow, TimeCountRow } from '../schemas.js';
import { callsCondition, runPaged, type AnalyticsQuery, type QueryContext } from './context.js';

const STEP: Record<Granularity, string> = { hour: '1 hour', day: '1 day', week: '1 week', month: '1 month' };
const LABEL: Record<Granularity, string> = { hour: 'YYYY-MM-DD"T"HH24:00', day: 'YYYY-MM-DD', week: 'YYYY-MM-DD', month: 'YYYY-MM-DD' };

/**
 * SQL pieces of a time series: `bucket`, the local bucket start of a lead's activity time;
 * `series(cte)`, every bucket from the request's date range (or, without one, from the first to
 * the last bucket of `cte`'s `bucket` column); `label(col)`, a bucket's text. `instant`: the SQL
 * of the time being bucketed (a row's activity time, or a rollup row's hour).
 */
export function bucketing(c: QueryContext, instant: string = c.activityAt) {
  const granularity = `${c.params.add(c.granularity)}::text`;
  const zone = `${c.params.add(c.timeZone)}::text`;
  const local = (instant: string) => `date_trunc(${granularity}, ${instant} AT TIME ZONE ${zone})`;
  const from = c.range.from ? local(`${c.params.add(c.range.from.toISOString())}::timestamptz`) : 'NULL::timestamp';
  const to = c.range.to ? local(`${c.params.add(c.range.to.toISOString())}::timestamptz`) : 'NULL::timestamp';
  const step = `${c.params.add(STEP[c.granularity])}::interval`;
  const format = `${c.params.add(LABEL[c.granularity])}::text`;
  return {
    bucket: local(instant),
    series: (cte: string) =>
      `generate_series((SELECT coalesce(${from}, min(bucket), ${to}) FROM ${cte}),
                       (SELECT coalesce(${to}, max(bucket), ${from}) FROM ${cte}),
                       ${step})`,
    label: (column: string) => `to_char(${column}, ${format})`,
  };
}

/** Leads (calls with `callsOnly`) per bucket of activity time. */
export const callsOverTime: AnalyticsQuery<TimeCountRow> = (q, c) => {
  const b = bucketing(c);
  return runPaged(
    q,
    c,
    `WITH counts AS (
       SELECT ${b.bucket} AS bucket, count(*)::int AS count
       FROM ${c.from}
       WHERE ${c.where}${callsCondition(c)}
       GROUP BY 1
     )
     SELECT s.bucket AS ord, ${b.label('s.bucket')} AS date, coalesce(counts.count, 0) AS count
     FROM ${b.series('counts')} AS s (bucket)
     LEFT JOIN counts ON counts.bucket = s.bucket`,
    'ord',
  );
};

export const avgDurationOverTime: AnalyticsQuery<TimeAverageRow> = (q, c) => {
  const b = bucketing(c);
  return runPaged(
    q,
    c,
    `WITH averages AS (
       SELECT ${b.bucket} AS bucket, round(avg(l.duration_seconds), 2)::float8 AS avg_duration
       FROM ${c.from}
       WHERE ${c.where}
       GROUP BY 1
     )
     SELECT s.bucket AS ord, ${b.label('s.bucket')} AS date, coalesce(averages.avg_duration, 0) AS avg_duration
     FROM ${b.series('averages')} AS s (bucket)
     LEFT JOIN averages ON averages.bucket = s.bucket`,
    'ord',
  );
};

/** Leads (calls with `callsOnly`) by local hour of their activity time (all 24), or by ISO weekday and hour (all 168). */
export const hourlyHeatmap: AnalyticsQuery<HeatmapRow> = (q, c) => {
  const local = `${c.activityAt} AT TIME ZONE ${c.params.add(c.timeZone)}::text`;
  const where = `${c.where}${callsCondition(c)}`;
  if (!c.byWeekday) {
    return runPaged(
      q,
      c,
      `SELECT h.hour AS ord, h.hour, coalesce(n.count, 0) AS count
       FROM generate_series(0, 23) AS h (hour)
       LEFT JOIN (SELECT extract(hour FROM ${local})::int AS hour, count(*)::int AS count
                  FROM ${c.from}
                  WHERE ${where}
                  GROUP BY 1) AS n ON n.hour = h.hour`,
      'ord',
    );
  }
  return runPaged(
    q,
    c,
    `SELECT d.weekday * 100 + h.hour AS ord, d.weekday, h.hour, coalesce(n.count, 0) AS count
     FROM generate_series(1, 7) AS d (weekday)
     CROSS JOIN generate_series(0, 23) AS h (hour)
     LEFT JOIN (SELECT extract(isodow FROM ${local})::int AS weekday, extract(hour FROM ${local})::int AS hour, count(*)::int AS count
                FROM ${c.from}
                WHERE ${where}
                GROUP BY 1, 2) AS n ON n.weekday = d.weekday AND n.hour = h.hour`,
    'ord',
  );
};

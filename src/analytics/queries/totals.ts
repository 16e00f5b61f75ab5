/** call_count and call_duration: one row each. */
import type { CountRow, DurationRow } from '../schemas.js';
import { callsCondition, runPaged, type AnalyticsQuery } from './context.js';

/** Leads matching the filters; calls (dialled leads) with `callsOnly`. */
export const callCount: AnalyticsQuery<CountRow> = (q, c) =>
  runPaged(q, c, `SELECT count(*)::int AS count FROM ${c.from} WHERE ${c.where}${callsCondition(c)}`, 'count');

/** Over leads with a duration; avg, min and max are null when there is none. */
export const callDuration: AnalyticsQuery<DurationRow> = (q, c) =>
  runPaged(
    q,
    c,
    `SELECT round(avg(l.duration_seconds), 2)::float8 AS avg,
            min(l.duration_seconds) AS min,
            max(l.duration_seconds) AS max,
            coalesce(sum(l.duration_seconds), 0)::bigint AS total
     FROM ${c.from}
     WHERE ${c.where}`,
    'total',
  );

/** retry_analysis, provider_breakdown and conversion_funnel. */
import { REACHED } from '../filters.js';
import type { FunnelRow, ProviderRow, RetryRow } from '../schemas.js';
import { callsCondition, runPaged, type AnalyticsQuery } from './context.js';

/** Finished, dialled leads by the attempts they took, and the share of them that reached someone. */
export const retryAnalysis: AnalyticsQuery<RetryRow> = (q, c) =>
  runPaged(
    q,
    c,
    `SELECT l.attempt_count AS attempts,
            count(*)::int AS count,
            round(count(*) FILTER (WHERE ${REACHED})::numeric / count(*), 4)::float8 AS success_rate
     FROM ${c.from}
     WHERE ${c.where} AND l.status = 'FINISHED' AND l.attempt_count >= 1
     GROUP BY l.attempt_count`,
    'attempts',
  );

/**
 * Leads with a telephony provider, by provider, busiest first; with `callsOnly` the dialled ones (a
 * claim that a pre-dial check undid leaves its provider on a lead that was never dialled).
 */
export const providerBreakdown: AnalyticsQuery<ProviderRow> = (q, c) =>
  runPaged(
    q,
    c,
    `SELECT l.provider AS provider,
            count(*)::int AS count,
            round(avg(l.duration_seconds), 2)::float8 AS avg_duration
     FROM ${c.from}
     WHERE ${c.where} AND l.provider IS NOT NULL${callsCondition(c)}
     GROUP BY l.provider`,
    'count DESC, provider COLLATE "C"',
  );

/** pushed > dialled > connected > completed, each stage inside the previous one. */
export const conversionFunnel: AnalyticsQuery<FunnelRow> = (q, c) =>
  runPaged(
    q,
    c,
    `SELECT s.ord, s.stage, s.count
     FROM (SELECT count(*)::int AS pushed,
                  count(*) FILTER (WHERE l.attempt_count >= 1)::int AS dialled,
                  count(*) FILTER (WHERE l.attempt_count >= 1 AND l.duration_seconds > 0)::int AS connected,
                  count(*) FILTER (WHERE l.attempt_count >= 1 AND l.duration_seconds > 0 AND ${REACHED})::int AS completed
           FROM ${c.from}
           WHERE ${c.where}) AS t
     CROSS JOIN LATERAL (VALUES (1, 'pushed', t.pushed), (2, 'dialled', t.dialled),
                                (3, 'connected', t.connected), (4, 'completed', t.completed)) AS s (ord, stage, count)`,
    'ord',
  );

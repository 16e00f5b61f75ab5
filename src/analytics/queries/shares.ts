/** The {key, count, percentage} queries: outcome, status and sentiment distributions, top outcomes. */
import type { ShareRow } from '../schemas.js';
import { callOutcome } from '../filters.js';
import { runPaged, type AnalyticsQuery, type QueryContext } from './context.js';

/** Share of the whole, in percent with two decimals; 0 when there is nothing. */
export const PERCENTAGE = 'coalesce(round(100.0 * count / nullif(sum(count) OVER (), 0), 2), 0)::float8';

const outcomes = (c: QueryContext) =>
  `SELECT key, count, ${PERCENTAGE} AS percentage
   FROM (SELECT l.outcome AS key, count(*)::int AS count
         FROM ${c.from}
         WHERE ${c.where} AND l.outcome IS NOT NULL${c.callsOnly ? ` AND ${callOutcome('l.outcome')}` : ''}
         GROUP BY l.outcome) AS outcomes`;

/** Leads with an outcome (a call outcome with `callsOnly`), by outcome (alphabetical). */
export const outcomeDistribution: AnalyticsQuery<ShareRow> = (q, c) => runPaged(q, c, outcomes(c), 'key COLLATE "C"');

/** The same population as outcome_distribution, most frequent first (page_size = how many). */
export const topOutcomes: AnalyticsQuery<ShareRow> = (q, c) => runPaged(q, c, outcomes(c), 'count DESC, key COLLATE "C"');

/** Every status, in lifecycle order, zero when no lead is in it. */
export const statusDistribution: AnalyticsQuery<ShareRow> = (q, c) =>
  runPaged(
    q,
    c,
    `SELECT ord, key, count, ${PERCENTAGE} AS percentage
     FROM (SELECT s.ord, s.key, coalesce(n.count, 0) AS count
           FROM (VALUES (1, 'BACKLOG'), (2, 'PROCESSING'), (3, 'RETRY'), (4, 'FINISHED')) AS s (ord, key)
           LEFT JOIN (SELECT l.status, count(*)::int AS count
                      FROM ${c.from}
                      WHERE ${c.where}
                      GROUP BY l.status) AS n ON n.status = s.key) AS statuses`,
    'ord',
  );

/** Sentiment (0..1) in three classes: negative below 0.4, neutral 0.4 to 0.6, positive above 0.6. */
export const sentimentDistribution: AnalyticsQuery<ShareRow> = (q, c) =>
  runPaged(
    q,
    c,
    `SELECT ord, key, count, ${PERCENTAGE} AS percentage
     FROM (SELECT s.ord, s.key, s.count
           FROM (SELECT count(*) FILTER (WHERE l.sentiment < 0.4::real)::int AS negative,
                        count(*) FILTER (WHERE l.sentiment >= 0.4::real AND l.sentiment <= 0.6::real)::int AS neutral,
                        count(*) FILTER (WHERE l.sentiment > 0.6::real)::int AS positive
                 FROM ${c.from}
                 WHERE ${c.where}) AS t
           CROSS JOIN LATERAL (VALUES (1, 'negative', t.negative), (2, 'neutral', t.neutral), (3, 'positive', t.positive))
             AS s (ord, key, count)) AS classes`,
    'ord',
  );

/**
 * Numbers that stay healthy. A caller ID that callees have learnt to ignore (labelled as spam by
 * their carrier or phone) burns leads: its calls go unanswered while its peers' are picked up.
 * The health round measures each outbound number over a rolling window and rests the ones whose
 * answer rate fell far below their pool's (the other numbers of the same provider); the claim skips
 * a resting number (`FREE_NUMBER_SQL`), and it comes back by itself when its rest ends, measured
 * afresh from then on.
 *
 * Terminology:
 * - window: a number's last `windowCalls` dialled attempts that ended, started in the last
 *   `windowHours` hours and since its `health_since` (the end of its last rest).
 * - answered: a conversation took place (the outcome's class is `reached`, see outcomes.ts).
 * - short call: answered, but shorter than `shortCallSeconds` (callees who hang up at once).
 * - pool rate: the answer rate of the provider's other numbers over their windows.
 */
import type { Config } from '../config.js';
import type { Queryable } from '../db/index.js';
import { NOT_REACHED_OUTCOMES, UNDIALLED_OUTCOMES } from './outcomes.js';

/** How a number's health is measured and when it is rested: the settings (docs/configuration.md) but how often. */
export type NumberHealthPolicy = Omit<Config['scheduler']['numberHealth'], 'everyMs'>;

export const DEFAULT_NUMBER_HEALTH: NumberHealthPolicy = {
  windowCalls: 100,
  windowHours: 24,
  shortCallSeconds: 10,
  restBelowRatio: 0.5,
  restMinCalls: 20,
  restSeconds: 4 * 3600,
};

/** A number the round rested, with the figures that rested it. */
export interface RestedNumber {
  id: string;
  phone_number: string;
  provider: string;
  rested_until: Date;
  calls: number;
  answered: number;
  pool_calls: number;
  pool_answered: number;
}

/** Attempts that are not a call of the number's: undialled, or lost by Dialer itself. */
const NOT_A_CALL = [...UNDIALLED_OUTCOMES, 'worker_lost'];

/**
 * The health round: measures every number (kept in `outbound_number_health` for the API and the
 * dashboard) and rests those far below their pool, in one statement. Several workers may run it
 * at once: a number is rested by whichever gets there first (a number resting already is left as
 * it is). Only the numbers it rests are locked: the pool claims take numbers from is not.
 */
export async function judgeNumbers(q: Queryable, policy: NumberHealthPolicy): Promise<RestedNumber[]> {
  const { rows } = await q.query<RestedNumber>(
    `WITH w AS MATERIALIZED (
       SELECT n.id, n.provider, n.rested_until > now() AS resting, s.calls, s.answered, s.short_calls
       FROM outbound_numbers n
       CROSS JOIN LATERAL (
         SELECT count(*)::int AS calls,
                count(*) FILTER (WHERE a.reached)::int AS answered,
                count(*) FILTER (WHERE a.reached AND coalesce(a.duration_seconds, 0) < $3)::int AS short_calls
         FROM (
           SELECT NOT (coalesce(ca.outcome, 'completed') = ANY ($1::text[])) AS reached, ca.duration_seconds
           FROM call_attempts ca
           WHERE ca.outbound_number_id = n.id AND ca.status = 'ENDED' AND NOT (coalesce(ca.outcome, '') = ANY ($2::text[]))
             AND ca.started_at >= greatest(now() - make_interval(hours => $4), coalesce(n.health_since, '-infinity'))
           ORDER BY ca.started_at DESC
           LIMIT $5) AS a) AS s),
     pool AS (SELECT provider, sum(calls)::int AS calls, sum(answered)::int AS answered FROM w GROUP BY provider),
     -- Against the pool without the number itself (its peers).
     judged AS (
       SELECT w.*, pool.calls - w.calls AS pool_calls, pool.answered - w.answered AS pool_answered
       FROM w JOIN pool USING (provider)),
     kept AS (
       INSERT INTO outbound_number_health (number_id, calls, answered, short_calls, pool_calls, pool_answered, measured_at)
       -- A resting number keeps the figures that rested it (its window starts afresh when it ends).
       SELECT id, calls, answered, short_calls, pool_calls, pool_answered, now() FROM judged WHERE resting IS NOT TRUE
       ON CONFLICT (number_id) DO UPDATE SET calls = excluded.calls, answered = excluded.answered, short_calls = excluded.short_calls,
         pool_calls = excluded.pool_calls, pool_answered = excluded.pool_answered, measured_at = excluded.measured_at)
     UPDATE outbound_numbers n
     SET rested_until = now() + make_interval(secs => $8), health_since = now() + make_interval(secs => $8),
         rest_reason = format('answered %s of %s calls, its pool %s of %s', j.answered, j.calls, j.pool_answered, j.pool_calls)
     FROM judged j
     WHERE n.id = j.id AND n.status <> 'DISABLED' AND (n.rested_until IS NULL OR n.rested_until <= now())
       AND j.calls >= $6 AND j.pool_calls >= $6
       -- answered / calls < ratio * pool_answered / pool_calls, without dividing.
       AND j.answered::float8 * j.pool_calls < $7 * j.pool_answered::float8 * j.calls
     RETURNING n.id, n.phone_number, n.provider, n.rested_until, j.calls, j.answered, j.pool_calls, j.pool_answered`,
    [NOT_REACHED_OUTCOMES, NOT_A_CALL, policy.shortCallSeconds, policy.windowHours, policy.windowCalls, policy.restMinCalls, policy.restBelowRatio, policy.restSeconds],
  );
  return rows;
}

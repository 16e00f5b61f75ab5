/**
 * A configuration's cap on live calls (`max_concurrent_calls`): the PROCESSING leads of its
 * template (calls live or being placed, on any worker) never exceed it. Decided like a campaign's
 * cap: inside the claim's transaction with the configuration's row locked, so claims of every
 * worker take turns per capped configuration and each counts the leads the one before committed
 * (under READ COMMITTED each statement after the lock reads what was committed). Configurations
 * without a cap are neither locked nor counted: their leads are claimed as before.
 */
import type { Queryable } from '../db/index.js';

/**
 * The configurations at their cap now, as (reseller, template) pairs: read without locks with the
 * queue head, a hint that keeps their leads out of it (so a full configuration's leads never crowd
 * out the leads behind them); the admission decides. Computed once per claim (a hashed subplan),
 * over the configurations that have a cap only.
 */
export const FULL_CONFIGURATIONS_SQL = `(
  SELECT c.reseller_id, c.template_id FROM configurations c
  WHERE c.max_concurrent_calls IS NOT NULL
    AND (SELECT count(*) FROM leads p
         WHERE p.status = 'PROCESSING' AND p.reseller_id = c.reseller_id AND p.template_id = c.template_id) >= c.max_concurrent_calls)`;

/**
 * Locks the configurations `ids` (each with a cap; in id order, after the campaigns: claims never
 * wait on each other in a circle) and answers, per configuration, how many of its leads this claim
 * may start. Call it in the claim's transaction, before its leads are taken.
 */
export async function admitConfigurationStarts(q: Queryable, ids: readonly string[]): Promise<Map<string, number>> {
  const allowed = new Map<string, number>();
  if (ids.length === 0) return allowed;
  await q.query('SELECT id FROM configurations WHERE id = ANY($1::text[]) ORDER BY id FOR NO KEY UPDATE', [ids], { prepare: true });
  const { rows } = await q.query<{ id: string; room: number }>(
    `SELECT c.id, greatest(0, c.max_concurrent_calls - (
       SELECT count(*)::int FROM leads p
       WHERE p.status = 'PROCESSING' AND p.reseller_id = c.reseller_id AND p.template_id = c.template_id)) AS room
     FROM configurations c WHERE c.id = ANY($1::text[]) AND c.max_concurrent_calls IS NOT NULL`,
    [ids],
    { prepare: true },
  );
  for (const r of rows) allowed.set(r.id, r.room);
  return allowed;
}

/**
 * Whether a due waiting lead of (reseller, template) is held by its configuration's cap: the
 * configuration has one and its live calls are at it.
 */
export async function configurationCapHolds(q: Queryable, resellerId: string, templateId: string): Promise<boolean> {
  const { rows } = await q.query<{ full: boolean }>(
    `SELECT (SELECT count(*) FROM leads p WHERE p.status = 'PROCESSING' AND p.reseller_id = c.reseller_id AND p.template_id = c.template_id)
              >= c.max_concurrent_calls AS full
     FROM configurations c WHERE c.reseller_id = $1 AND c.template_id = $2 AND c.max_concurrent_calls IS NOT NULL`,
    [resellerId, templateId],
  );
  return rows[0]?.full === true;
}

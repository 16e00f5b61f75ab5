import type { Queryable } from '../db/index.js';
import { phoneHashSql } from '../lib/phone-hash.js';

/**
 * The blacklist rule, written once: a number is blacklisted for a reseller when it is on that
 * reseller's list or on the platform-wide list (reseller_id NULL), as itself or, once it was
 * erased, as its one-way hash (an opt-out outlives the erasure of the person who gave it). As an
 * SQL condition over the given expressions, so push time (a 403, through the push-target lookup)
 * and dial time (FINISHED BLACKLISTED, in the claim) ask exactly the same question inside their
 * own statements.
 */
export function blacklistedSql(phone: string, resellerId: string): string {
  return `EXISTS (SELECT 1 FROM blacklist b WHERE b.phone_number IN (${phone}, ${phoneHashSql(phone)}) AND (b.reseller_id = ${resellerId} OR b.reseller_id IS NULL))`;
}

/**
 * Erasure: the opt-outs of `phone` in scope (`scope`: SQL over the entry `b`, its parameters
 * numbered from $1) keep only the number's hash and forget what the callee said (an entry whose hash is
 * already listed in the same scope is removed instead). Returns how many entries it changed.
 */
export async function hashOptOuts(q: Queryable, phone: string, scope: { sql: string; params: readonly unknown[] }): Promise<number> {
  const hash = phoneHashSql('$1::text');
  const inScope = scope.sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + 1}`);
  const { rows } = await q.query<{ id: string }>(
    `WITH gone AS (
       DELETE FROM blacklist b WHERE b.phone_number = $1 AND ${inScope}
         AND EXISTS (SELECT 1 FROM blacklist h WHERE h.phone_number = ${hash} AND coalesce(h.reseller_id, '') = coalesce(b.reseller_id, ''))
       RETURNING b.id),
     hashed AS (
       UPDATE blacklist b SET phone_number = ${hash}, reason = CASE WHEN b.reason IS NULL THEN NULL ELSE 'erased on request' END
       WHERE b.phone_number = $1 AND ${inScope} AND b.id NOT IN (SELECT id FROM gone)
       RETURNING b.id)
     SELECT id FROM gone UNION ALL SELECT id FROM hashed`,
    [phone, ...scope.params],
  );
  return rows.length;
}

import type { Queryable } from '../db/index.js';

/**
 * Whether `phone` (E.164) is on the blacklist of `resellerId` or on the platform-wide list
 * (reseller_id NULL). Used at push time (403) and again at dial time (FINISHED BLACKLISTED).
 */
export async function isBlacklisted(db: Queryable, resellerId: string, phone: string): Promise<boolean> {
  const { rows } = await db.query(
    'SELECT 1 FROM blacklist WHERE phone_number = $1 AND (reseller_id = $2 OR reseller_id IS NULL) LIMIT 1',
    [phone, resellerId],
  );
  return rows.length > 0;
}

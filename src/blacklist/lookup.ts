/**
 * The blacklist rule, written once: a number is blacklisted for a reseller when it is on that
 * reseller's list or on the platform-wide list (reseller_id NULL). As an SQL condition over the
 * given expressions, so push time (a 403, through the push-target lookup) and dial time (FINISHED
 * BLACKLISTED, in the claim) ask exactly the same question inside their own statements.
 */
export function blacklistedSql(phone: string, resellerId: string): string {
  return `EXISTS (SELECT 1 FROM blacklist b WHERE b.phone_number = ${phone} AND (b.reseller_id = ${resellerId} OR b.reseller_id IS NULL))`;
}

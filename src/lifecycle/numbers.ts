/**
 * Giving a number back to the pool, written once: a call's number stays IN_USE, held by its lead,
 * until its attempt ends (finished, undone before its dial, or recovered from a dead worker). A
 * number is only ever given back by the lead that holds it and only while it is IN_USE: a number
 * disabled meanwhile stays DISABLED, and one already given back and taken by another call is not
 * touched. (Numbers are taken in `claim-statements.ts`, by the claim that takes the lead.)
 */

/**
 * A number a claim may take, written once: AVAILABLE and not resting (a number whose answer rate
 * fell far below its pool's is rested for a while, see `number-health.ts`; it comes back by
 * itself when `rested_until` passes). A condition over `outbound_numbers` (unqualified columns).
 */
export const FREE_NUMBER_SQL = `status = 'AVAILABLE' AND (rested_until IS NULL OR rested_until <= now())`;

/**
 * The statement that gives numbers back: `which` picks them (SQL over `outbound_numbers`, and over
 * `from`'s relation when given, e.g. a CTE of the leads just finished).
 */
export function giveBackNumbers(which: string, from?: string): string {
  return `UPDATE outbound_numbers SET status = 'AVAILABLE', lead_id = NULL, updated_at = now()${from ? ` FROM ${from}` : ''}
       WHERE outbound_numbers.status = 'IN_USE' AND (${which})`;
}

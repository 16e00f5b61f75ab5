/**
 * Which campaigns' leads a claim may take: the rule of a campaign's dates and state, in SQL, once.
 * A claim reads it with the queue head (leads of other campaigns are passed over, not locked), and
 * the campaign's admission (src/campaigns/admission.ts) reads it again under the campaign's lock,
 * where the cap and the pace are decided exactly.
 */

/** Whether campaign `c` may start calls now: running (not paused or stopped), between its dates. */
export function campaignOpenSql(c: string): string {
  return `(${c}.state = 'active' AND (${c}.start_at IS NULL OR ${c}.start_at <= now()) AND (${c}.end_at IS NULL OR ${c}.end_at > now()))`;
}

/**
 * The ids of the campaigns that may start a call now: open, under their cap of live calls, and
 * past the instant their pace allows the next start. Read without locks: a hint that keeps leads
 * of a paused, full or paced campaign out of the queue head; the admission decides.
 */
export const STARTABLE_CAMPAIGNS_SQL = `ARRAY(
  SELECT c.id FROM campaigns c
  WHERE ${campaignOpenSql('c')}
    AND (c.next_start_at IS NULL OR c.next_start_at <= now())
    AND (c.max_concurrent_calls IS NULL
         OR (SELECT count(*) FROM leads p WHERE p.campaign_id = c.id AND p.status = 'PROCESSING') < c.max_concurrent_calls))`;

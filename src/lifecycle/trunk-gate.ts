/**
 * What a SIP trunk holds of the leads, in SQL, once: a trunk's channels in use are the PROCESSING
 * leads whose call holds it (`leads.trunk_id`, set by the claim), and a trunk is open when it has a
 * channel free and its pace lets a call start now. A claim reads it with the queue head (leads
 * whose trunk and failover trunk are both closed are passed over, not locked); the trunks'
 * admission (src/trunks/admission.ts) reads it again under the trunks' locks, where it decides.
 */

/** Live calls through trunk `t` (the PROCESSING leads holding it). */
export function trunkLiveSql(t: string): string {
  return `(SELECT count(*)::int FROM leads p WHERE p.status = 'PROCESSING' AND p.trunk_id = ${t}.id)`;
}

/** Whether trunk `t` may start a call now: a channel free, and its pace reached. */
export function trunkOpenSql(t: string): string {
  return `((${t}.next_start_at IS NULL OR ${t}.next_start_at <= now()) AND (${t}.max_channels IS NULL OR ${trunkLiveSql(t)} < ${t}.max_channels))`;
}

/**
 * The configurations whose calls no trunk can take now, as (reseller, template) pairs: their trunk
 * is closed and so is its failover (or it has none). Read without locks: a hint that keeps their
 * leads out of the queue head; the admission decides. Over the SIP configurations only.
 */
export const CLOSED_TRUNK_CONFIGURATIONS_SQL = `(
  SELECT c.reseller_id, c.template_id FROM configurations c
  JOIN sip_trunks t ON t.id = c.trunk_id LEFT JOIN sip_trunks f ON f.id = t.failover_trunk_id
  WHERE c.calling_provider = 'SIP' AND NOT ${trunkOpenSql('t')} AND (f.id IS NULL OR NOT ${trunkOpenSql('f')}))`;

/**
 * Rate-limit slots: a configuration with `rate_limit_enabled` dials at most `rate_limit_max_calls`
 * leads in any `rate_limit_window_seconds` (numbers on `rate_limit_whitelist` are not counted).
 * Each dial takes a slot (a row of rate_limit_events) in the claim's transaction; a claim undone
 * before its dial gives its slot back. Exact across workers: a configuration's slots are counted
 * under one advisory lock.
 */
import type { ConfigurationRow } from '../configurations/index.js';
import type { Queryable } from '../db/index.js';

type Limits = Pick<ConfigurationRow, 'rate_limit_enabled' | 'rate_limit_max_calls' | 'rate_limit_window_seconds' | 'rate_limit_whitelist'>;

/** Whether a dial of `phone` under this configuration needs a slot. */
export function isRateLimited(config: Limits, phone: string): boolean {
  return config.rate_limit_enabled && config.rate_limit_max_calls != null && config.rate_limit_window_seconds != null && !config.rate_limit_whitelist.includes(phone);
}

/**
 * Whether configuration `configurationId` has a free slot now. Takes the configuration's advisory
 * lock for the rest of the transaction, so no other claim counts its slots until this one commits.
 * When none is free: when the next one frees (the oldest dial in the window leaves it).
 */
export async function freeSlot(
  q: Queryable,
  configurationId: string,
  limits: { maxCalls: number; windowSeconds: number },
): Promise<{ free: true } | { free: false; freesAt: Date }> {
  await q.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`dialer-rate:${configurationId}`]);
  const { rows } = await q.query<{ n: number; first: Date | null }>(
    `SELECT count(*)::int AS n, min(at) AS first FROM rate_limit_events
     WHERE configuration_id = $1 AND at > clock_timestamp() - make_interval(secs => $2)`,
    [configurationId, limits.windowSeconds],
  );
  if (rows[0]!.n < limits.maxCalls) return { free: true };
  return { free: false, freesAt: new Date(rows[0]!.first!.getTime() + limits.windowSeconds * 1000 + 1) };
}

/** Takes a slot of the configuration for the lead just claimed (after `freeSlot` said one is free). */
export async function takeSlot(q: Queryable, configurationId: string, leadId: string): Promise<void> {
  await q.query('INSERT INTO rate_limit_events (configuration_id, at, lead_id) VALUES ($1, clock_timestamp(), $2)', [configurationId, leadId]);
}

/** Gives back the lead's last slot (its claim was undone before the dial). */
export async function giveBackSlot(q: Queryable, leadId: string): Promise<void> {
  await q.query(`DELETE FROM rate_limit_events WHERE ctid IN (SELECT ctid FROM rate_limit_events WHERE lead_id = $1 ORDER BY at DESC LIMIT 1)`, [leadId]);
}

/** Forgets slots older than any window can reach back (a day). */
export async function forgetOldSlots(q: Queryable): Promise<void> {
  await q.query(`DELETE FROM rate_limit_events WHERE at < now() - interval '1 day'`, [], { prepare: true });
}

/**
 * How often a reseller's leads dialled `phone` since `since` (the start of the recipient's day), for
 * a configuration's `max_calls_per_number_per_day`. Takes the number's advisory lock for the rest
 * of the transaction, so two claims of the same number (other leads, other workers) count one
 * after the other: the first one's attempt row is there when the second counts.
 */
export async function numberDialsSince(q: Queryable, resellerId: string, phone: string, since: Date): Promise<number> {
  await q.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`dialer-number:${resellerId}:${phone}`]);
  const { rows } = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM call_attempts a JOIN leads l ON l.id = a.lead_id
     WHERE a.phone_number = $1 AND a.started_at >= $2 AND l.reseller_id = $3`,
    [phone, since, resellerId],
  );
  return rows[0]!.n;
}

/**
 * Claiming: the leads table is the queue (DESIGN 1). One transaction locks a batch of due leads
 * with FOR UPDATE SKIP LOCKED (other workers skip them) and, lead by lead, applies the rules that
 * can be decided in the database: the blacklist at dial time, the calling window, the rate limit
 * (exact across workers: one advisory lock per configuration), and the outbound number (taken
 * atomically). A lead that passes becomes PROCESSING with a lease; one that must wait gets its next
 * due time; one that may not be called is finished. All of it commits together or not at all.
 */
import { isBlacklisted } from '../blacklist/index.js';
import type { ConfigurationRow } from '../configurations/index.js';
import type { Queryable } from '../db/index.js';
import type { LeadRow } from '../leads/index.js';
import { acquireNumber, type OutboundNumberRow } from '../numbers/index.js';
import { effectiveConfiguration, EFFECTIVE_PROVIDER_SQL } from './effective.js';
import { inWindow, leadZone, nextOpening } from './windows.js';

export interface Claimed {
  lead: LeadRow;
  configuration: ConfigurationRow;
  number: OutboundNumberRow;
  attempt: number;
}

export interface ClaimOptions {
  workerId: string;
  limit: number;
  leaseSeconds: number;
  /** Providers this worker has drivers for; leads of other providers are left to other workers. */
  providers: string[];
  /** Called in the claim's transaction for each lead it finishes (blacklisted). */
  onFinished: (q: Queryable, leadId: string) => Promise<void>;
}

export interface ClaimReport {
  claimed: Claimed[];
  /** Leads moved to the next window opening or rate-limit slot. */
  deferred: number;
  /** Leads finished without a dial (blacklisted at dial time). */
  finished: number;
}

type Candidate = LeadRow & { configuration: ConfigurationRow; now: Date };

export async function claimBatch(q: Queryable, options: ClaimOptions): Promise<ClaimReport> {
  const report: ClaimReport = { claimed: [], deferred: 0, finished: 0 };
  if (options.providers.length === 0 || options.limit <= 0) return report;
  // Due leads with a configuration that calls, through a provider this worker dials, that has a
  // free number now (so leads of an exhausted pool do not crowd out the others).
  const { rows } = await q.query<Candidate>(
    `SELECT l.*, to_jsonb(c) AS configuration, clock_timestamp() AS now
     FROM leads l
     JOIN configurations c ON c.reseller_id = l.reseller_id AND c.template_id = l.template_id
     WHERE l.status IN ('BACKLOG', 'RETRY') AND l.next_attempt_at <= now()
       AND (c.enable_calling OR l.is_playground)
       AND ${EFFECTIVE_PROVIDER_SQL} = ANY($2::text[])
       AND EXISTS (SELECT 1 FROM outbound_numbers n WHERE n.status = 'AVAILABLE' AND n.provider = ${EFFECTIVE_PROVIDER_SQL})
     ORDER BY l.next_attempt_at, l.id
     LIMIT $1
     FOR UPDATE OF l SKIP LOCKED`,
    [options.limit, options.providers],
  );
  const exhausted = new Set<string>();
  for (const row of rows) {
    const { configuration: stored, now, ...lead } = row;
    const config = effectiveConfiguration(stored, lead);
    const phone = lead.payload.customer_mobile_number as string;
    const defer = async (until: Date) => {
      await q.query('UPDATE leads SET next_attempt_at = $2, updated_at = now() WHERE id = $1', [lead.id, until]);
      report.deferred++;
    };

    if (!config.enable_calling) {
      await defer(new Date(now.getTime() + 60_000));
      continue;
    }
    if (config.enforce_blacklist && (await isBlacklisted(q, lead.reseller_id, phone))) {
      await q.query(
        `UPDATE leads SET status = 'FINISHED', outcome = 'BLACKLISTED', next_attempt_at = NULL, updated_at = now() WHERE id = $1`,
        [lead.id],
      );
      await options.onFinished(q, lead.id);
      report.finished++;
      continue;
    }
    const zone = leadZone(lead.payload, config.call_timezone);
    if (!inWindow(now, config.call_start_time, config.call_end_time, zone)) {
      await defer(nextOpening(now, config.call_start_time, config.call_end_time, zone));
      continue;
    }
    const limited =
      config.rate_limit_enabled && config.rate_limit_max_calls != null && config.rate_limit_window_seconds != null && !config.rate_limit_whitelist.includes(phone);
    if (limited) {
      await q.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`dialer-rate:${stored.id}`]);
      const { rows: used } = await q.query<{ n: number; first: Date | null }>(
        `SELECT count(*)::int AS n, min(at) AS first FROM rate_limit_events
         WHERE configuration_id = $1 AND at > clock_timestamp() - make_interval(secs => $2)`,
        [stored.id, config.rate_limit_window_seconds],
      );
      if (used[0]!.n >= config.rate_limit_max_calls!) {
        // The next slot frees when the oldest dial in the window leaves it.
        await defer(new Date(used[0]!.first!.getTime() + config.rate_limit_window_seconds! * 1000 + 1));
        continue;
      }
    }
    const provider = config.calling_provider;
    const number = exhausted.has(provider) ? undefined : await acquireNumber(q, provider, lead.id);
    if (!number) {
      // Lost the race for the last free number; the lead stays due and is tried on the next round.
      exhausted.add(provider);
      continue;
    }
    if (limited) {
      await q.query('INSERT INTO rate_limit_events (configuration_id, at, lead_id) VALUES ($1, clock_timestamp(), $2)', [stored.id, lead.id]);
    }
    const { rows: updated } = await q.query<LeadRow>(
      `UPDATE leads SET status = 'PROCESSING', attempt_count = attempt_count + 1, call_initiated_time = now(), call_end_time = NULL,
              call_id = NULL, locked_by = $2, locked_until = now() + make_interval(secs => $3), outbound_number_id = $4,
              provider = $5, next_attempt_at = NULL, updated_at = now()
       WHERE id = $1 RETURNING *`,
      [lead.id, options.workerId, options.leaseSeconds, number.id, provider],
    );
    const claimed = updated[0]!;
    await q.query(
      `INSERT INTO call_attempts (id, lead_id, attempt, provider, outbound_number_id, status, worker_id)
       VALUES (gen_random_uuid()::text, $1, $2, $3, $4, 'DIALLING', $5)`,
      [lead.id, claimed.attempt_count, provider, number.id, options.workerId],
    );
    report.claimed.push({ lead: claimed, configuration: config, number, attempt: claimed.attempt_count });
  }
  return report;
}

/**
 * Claiming: the leads table is the queue (DESIGN 1). One transaction locks a batch of due leads
 * with FOR UPDATE SKIP LOCKED (other workers skip them) and applies the rules that can be decided
 * in the database, set-based where it can: the blacklist at dial time, the calling window, the rate limit
 * (exact across workers: one advisory lock per configuration), and the outbound number (taken
 * atomically). A lead that passes becomes PROCESSING with a lease; one that must wait gets its next
 * due time; one that may not be called is finished. All of it commits together or not at all.
 */
import type { ConfigurationRow } from '../configurations/index.js';
import type { Queryable } from '../db/index.js';
import type { LeadRow } from '../leads/index.js';
import type { OutboundNumberRow } from '../numbers/index.js';
import { effectiveConfiguration, EFFECTIVE_PROVIDER_SQL } from '../configurations/index.js';
import { inWindow, leadZone, nextOpening } from '../lib/windows.js';

export interface Claimed {
  lead: LeadRow;
  configuration: ConfigurationRow;
  number: OutboundNumberRow;
  attempt: number;
}

/** Of these resellers, those whose dialling is switched off now (the kill-switch flag). */
export type StoppedResellers = (resellerIds: string[]) => Promise<Set<string>>;

export interface ClaimOptions {
  workerId: string;
  limit: number;
  leaseSeconds: number;
  /** Providers this worker has drivers for; leads of other providers are left to other workers. */
  providers: string[];
  /** Called in the claim's transaction with the leads it finishes (blacklisted). */
  onFinished: (q: Queryable, leadIds: readonly string[]) => Promise<void>;
  /** The per-reseller kill switch: leads of the resellers it names wait (a minute at a time). */
  stoppedResellers?: StoppedResellers;
  /**
   * Whether a claim that finds some leads, but fewer than it wants, moves uncallable leads out of
   * the queue head (default true; a claim that finds none always does). A busy worker asks at most
   * once a second: its short claims are mostly leads another worker took a moment before.
   */
  unclogWhenShort?: boolean;
}

export interface ClaimReport {
  claimed: Claimed[];
  /** Leads moved to the next window opening or rate-limit slot. */
  deferred: number;
  /** Leads finished without a dial (blacklisted at dial time). */
  finished: number;
  /** Whether the queue head was examined for uncallable leads. */
  unclogged: boolean;
}

/** How long a lead of a reseller whose dialling is switched off waits before it is looked at again. */
const KILL_SWITCH_RECHECK_MS = 10_000;

/**
 * The execution modes the scheduler dials. WebRTC leads (WEBRTC, WEBRTC_TEST, WEBRTC_STREAM) are
 * never dialled: the browser's offer claims them (src/webrtc).
 */
const PHONE_MODES_SQL = `'TELEPHONY', 'TELEPHONY_TEST'`;

/**
 * Due leads examined per claim, at least (and three times the leads wanted): enough that leads
 * another worker is claiming at the same moment (skipped) leave enough behind them, few enough that
 * a claim reads little more than it takes. Leads that cannot be called now are moved out of the
 * head (`unclog`), so they never hide the others for long.
 */
const HEAD = 48;
/** Due leads examined for ones that cannot be called now, at least. */
const UNCLOG_HEAD = 200;

/**
 * When the claim's head of the queue (`head` leads) is full and holds leads this worker cannot
 * call now, defers those among the first `examine` due leads:
 * by 10 s when only a number or a driver is missing, by 5 min without a calling configuration.
 */
async function unclog(q: Queryable, providers: string[], head: number, examine: number): Promise<number> {
  const { rows } = await q.query<{ n: number }>(
    `WITH h AS (
       SELECT l.id, c.id AS configuration_id, (c.enable_calling OR l.is_playground) AS calling, ${EFFECTIVE_PROVIDER_SQL} AS provider
       FROM leads l LEFT JOIN configurations c ON c.reseller_id = l.reseller_id AND c.template_id = l.template_id
       WHERE l.status IN ('BACKLOG', 'RETRY') AND l.next_attempt_at <= now() AND l.execution_mode IN (${PHONE_MODES_SQL})
       ORDER BY l.next_attempt_at, l.id
       LIMIT $3
       FOR UPDATE OF l SKIP LOCKED),
     full_head AS (SELECT count(*) >= $2 AS full FROM h),
     moved AS (
       UPDATE leads SET next_attempt_at = now() + make_interval(secs => CASE WHEN h.configuration_id IS NULL OR NOT h.calling THEN 300 ELSE 10 END),
              updated_at = now()
       FROM h, full_head
       WHERE full_head.full AND leads.id = h.id
         AND (h.configuration_id IS NULL OR NOT h.calling OR NOT (h.provider = ANY($1::text[]))
              OR h.provider NOT IN (SELECT provider FROM outbound_numbers WHERE status = 'AVAILABLE'))
       RETURNING 1)
     SELECT count(*)::int AS n FROM moved`,
    [providers, head, examine],
    { prepare: true },
  );
  return rows[0]!.n;
}

type Candidate = LeadRow & { configuration_id: string; configuration: ConfigurationRow | null; now: Date; blacklisted: boolean };

interface Ready {
  lead: LeadRow;
  config: ConfigurationRow;
}

export async function claimBatch(q: Queryable, options: ClaimOptions): Promise<ClaimReport> {
  const report: ClaimReport = { claimed: [], deferred: 0, finished: 0, unclogged: false };
  const limit = Math.trunc(options.limit);
  if (options.providers.length === 0 || !(limit > 0)) return report;
  // Due leads with a configuration that calls, through a provider this worker dials, that has a
  // free number now (so leads of an exhausted pool do not crowd out the others).
  // The head of the queue (an index scan in due order, cheap at any queue length); of it, the leads
  // this worker can call now, locked; then what the rules need, for those alone.
  // The limits are written into the statement, not passed as parameters: with a parameter for a
  // LIMIT PostgreSQL plans the statement afresh on every claim (its generic plan assumes a tenth of
  // the table), 0.5 ms each time; as literals there is one prepared statement per limit a worker
  // uses (at most its call slots), whose plan is kept.
  const head = Math.max(HEAD, limit * 3);
  const { rows } = await q.query<Candidate>(
    `WITH head AS MATERIALIZED (
       SELECT id FROM leads
       WHERE status IN ('BACKLOG', 'RETRY') AND next_attempt_at <= now() AND execution_mode IN (${PHONE_MODES_SQL})
       ORDER BY next_attempt_at, id
       LIMIT ${head}),
     picked AS (
       SELECT l.id FROM leads l
       JOIN configurations c ON c.reseller_id = l.reseller_id AND c.template_id = l.template_id
       WHERE l.id = ANY (ARRAY(SELECT id FROM head))
         AND l.status IN ('BACKLOG', 'RETRY') AND l.next_attempt_at <= now()
         AND (c.enable_calling OR l.is_playground)
         -- Computed once per claim (an InitPlan), not once per lead of the head.
         AND ${EFFECTIVE_PROVIDER_SQL} = ANY (ARRAY(
           SELECT p FROM unnest($1::text[]) AS p WHERE EXISTS (SELECT 1 FROM outbound_numbers WHERE provider = p AND status = 'AVAILABLE')))
       ORDER BY l.next_attempt_at, l.id
       LIMIT ${limit}
       FOR UPDATE OF l SKIP LOCKED)
     SELECT l.*, c.id AS configuration_id, clock_timestamp() AS now,
            -- Each configuration once (the leads of a batch mostly share one), not once per lead.
            CASE WHEN row_number() OVER (PARTITION BY c.id) = 1 THEN to_jsonb(c) END AS configuration,
            EXISTS (SELECT 1 FROM blacklist b WHERE b.phone_number = l.payload->>'customer_mobile_number'
                    AND (b.reseller_id = l.reseller_id OR b.reseller_id IS NULL)) AS blacklisted
     FROM picked JOIN leads l ON l.id = picked.id
     JOIN configurations c ON c.reseller_id = l.reseller_id AND c.template_id = l.template_id
     ORDER BY l.next_attempt_at, l.id`,
    [options.providers],
    { prepare: true },
  );
  // A head full of leads that cannot be called now (no configuration, calling disabled, no free
  // number, no driver here) would hide the callable ones behind it: move those aside for a while.
  if (rows.length === 0 || (rows.length < limit && options.unclogWhenShort !== false)) {
    // Over a longer head than a claim reads: a clogged queue is cleared in a few rounds.
    report.deferred += await unclog(q, options.providers, head, Math.max(UNCLOG_HEAD, head));
    report.unclogged = true;
  }
  const deferrals: { id: string; until: string }[] = [];
  const blacklisted: string[] = [];
  const ready = new Map<string, Ready[]>();
  const stopped = options.stoppedResellers && rows.length > 0 ? await options.stoppedResellers(rows.map((r) => r.reseller_id)) : undefined;
  const configurations = new Map<string, ConfigurationRow>();
  for (const row of rows) if (row.configuration) configurations.set(row.configuration_id, row.configuration);
  for (const row of rows) {
    const { configuration: _once, configuration_id, now, blacklisted: isBlacklisted, ...lead } = row;
    const stored = configurations.get(configuration_id)!;
    const config = effectiveConfiguration(stored, lead);
    const phone = lead.payload.customer_mobile_number as string;
    if (!config.enable_calling) {
      deferrals.push({ id: lead.id, until: new Date(now.getTime() + 60_000).toISOString() });
      continue;
    }
    if (stopped?.has(lead.reseller_id)) {
      // Looked at again soon: switching dialling back on takes effect within seconds.
      deferrals.push({ id: lead.id, until: new Date(now.getTime() + KILL_SWITCH_RECHECK_MS).toISOString() });
      continue;
    }
    if (config.enforce_blacklist && isBlacklisted) {
      blacklisted.push(lead.id);
      continue;
    }
    const zone = leadZone(lead.payload, config.call_timezone);
    if (!inWindow(now, config.call_start_time, config.call_end_time, zone)) {
      deferrals.push({ id: lead.id, until: nextOpening(now, config.call_start_time, config.call_end_time, zone).toISOString() });
      continue;
    }
    const limited =
      config.rate_limit_enabled && config.rate_limit_max_calls != null && config.rate_limit_window_seconds != null && !config.rate_limit_whitelist.includes(phone);
    if (limited) {
      // Rate-limited leads go one by one, each counted against its configuration's window.
      await q.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`dialer-rate:${stored.id}`]);
      const { rows: used } = await q.query<{ n: number; first: Date | null }>(
        `SELECT count(*)::int AS n, min(at) AS first FROM rate_limit_events
         WHERE configuration_id = $1 AND at > clock_timestamp() - make_interval(secs => $2)`,
        [stored.id, config.rate_limit_window_seconds],
      );
      if (used[0]!.n >= config.rate_limit_max_calls!) {
        // The next slot frees when the oldest dial in the window leaves it.
        deferrals.push({ id: lead.id, until: new Date(used[0]!.first!.getTime() + config.rate_limit_window_seconds! * 1000 + 1).toISOString() });
        continue;
      }
      const claimed = await claimWithNumbers(q, config.calling_provider, [{ lead, config }], options);
      if (claimed.length > 0) {
        await q.query('INSERT INTO rate_limit_events (configuration_id, at, lead_id) VALUES ($1, clock_timestamp(), $2)', [stored.id, lead.id]);
      }
      report.claimed.push(...claimed);
      continue;
    }
    const group = ready.get(config.calling_provider) ?? [];
    group.push({ lead, config });
    ready.set(config.calling_provider, group);
  }
  for (const [provider, group] of ready) report.claimed.push(...(await claimWithNumbers(q, provider, group, options)));
  if (deferrals.length > 0) {
    await q.query(
      `UPDATE leads l SET next_attempt_at = x.until, updated_at = now() FROM jsonb_to_recordset($1::jsonb) AS x (id text, until timestamptz) WHERE l.id = x.id`,
      [JSON.stringify(deferrals)],
    );
    report.deferred += deferrals.length;
  }
  if (blacklisted.length > 0) {
    await q.query(`UPDATE leads SET status = 'FINISHED', outcome = 'BLACKLISTED', next_attempt_at = NULL, updated_at = now() WHERE id = ANY($1::text[])`, [blacklisted]);
    await options.onFinished(q, blacklisted);
    report.finished += blacklisted.length;
  }
  return report;
}

/**
 * Gives each lead of `group` a free number of `provider`, makes it PROCESSING and opens its attempt
 * history row: one set-based statement. Numbers are taken with SKIP LOCKED, so two workers never
 * take the same one; leads left without a number (the pool ran dry) stay due and are tried on the
 * next round.
 */
async function claimWithNumbers(q: Queryable, provider: string, group: Ready[], options: ClaimOptions): Promise<Claimed[]> {
  const { rows } = await q.query<LeadRow & { number: OutboundNumberRow }>(
    `WITH free AS (
       SELECT id, row_number() OVER () AS rn FROM (
         SELECT id FROM outbound_numbers WHERE provider = $1 AND status = 'AVAILABLE'
         ORDER BY updated_at, id LIMIT $2 FOR UPDATE SKIP LOCKED) AS f),
     want AS (SELECT lead_id, rn FROM unnest($3::text[]) WITH ORDINALITY AS w (lead_id, rn)),
     taken AS (
       UPDATE outbound_numbers n SET status = 'IN_USE', lead_id = want.lead_id, updated_at = now()
       FROM free JOIN want USING (rn)
       WHERE n.id = free.id
       RETURNING n.*),
     claimed AS (
       UPDATE leads l SET status = 'PROCESSING', attempt_count = l.attempt_count + 1, call_initiated_time = now(), call_end_time = NULL,
              call_id = NULL, locked_by = $4, locked_until = now() + make_interval(secs => $5), outbound_number_id = taken.id,
              provider = $1, next_attempt_at = NULL, updated_at = now()
       FROM taken
       WHERE l.id = taken.lead_id
       RETURNING l.*, to_jsonb(taken) AS number),
     history AS (
       INSERT INTO call_attempts (id, lead_id, attempt, provider, outbound_number_id, status, worker_id)
       SELECT gen_random_uuid()::text, claimed.id, claimed.attempt_count, $1, claimed.outbound_number_id, 'DIALLING', $4
       FROM claimed)
     SELECT * FROM claimed`,
    [provider, group.length, group.map((g) => g.lead.id), options.workerId, options.leaseSeconds],
    { prepare: true },
  );
  const configOf = new Map(group.map((g) => [g.lead.id, g.config]));
  return rows.map(({ number, ...lead }) => ({
    lead,
    configuration: configOf.get(lead.id)!,
    // Read back through JSON: timestamps as the pg driver would give them.
    number: { ...number, created_at: new Date(number.created_at), updated_at: new Date(number.updated_at) },
    attempt: lead.attempt_count,
  }));
}

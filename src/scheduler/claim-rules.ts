/**
 * The claim's rules. One transaction locks a batch of due leads with FOR NO KEY UPDATE SKIP LOCKED (other
 * workers skip them) and decides each: its campaign's admission and its configuration's cap of live
 * calls (src/lifecycle/configuration-cap.ts), its SIP trunk's channels and pace (the trunk or its
 * failover; src/trunks/admission.ts), the blacklist and the do-not-call lists at dial time,
 * the kill switch, the calling window and the calling hours of law, the rate limit (exact across
 * workers), and the outbound number (taken atomically). A
 * lead that passes becomes PROCESSING with a lease; one that must wait is held to its next due
 * time; one that may not be called is finished. All of it commits together or not at all. The
 * statements themselves are the lifecycle's (src/lifecycle/claim-statements.ts).
 */
import { admitCampaignStarts } from '../campaigns/index.js';
import type { ConfigurationRow } from '../configurations/index.js';
import { effectiveConfiguration } from '../configurations/index.js';
import type { Queryable } from '../db/index.js';
import {
  claimWithNumbers,
  dueCandidates,
  finishWaiting,
  freeSlot,
  holdUntil,
  isRateLimited,
  moveAsideUncallable,
  numberDialsSince,
  takeSlot,
  type Claimed,
  type PaceSlot,
  type Candidate,
  type ClaimedLead,
  type NumberRotation,
  type OnFinished,
  admitConfigurationStarts,
} from '../lifecycle/index.js';
import { findDncHits, type DncHit } from '../compliance/index.js';
import { admitTrunkStarts } from '../trunks/index.js';
import { inWindow, leadZone, legalHold, localDay, nextOpening } from '../lib/windows.js';

export type { Claimed } from '../lifecycle/index.js';

/** Of these resellers, those whose dialling is switched off now (the kill-switch flag). */
export type StoppedResellers = (resellerIds: string[]) => Promise<Set<string>>;

export interface ClaimOptions {
  workerId: string;
  limit: number;
  leaseSeconds: number;
  /** Providers this worker has drivers for; leads of other providers are left to other workers. */
  providers: string[];
  /** Called in the claim's transaction with the leads it finishes (blacklisted). */
  onFinished: OnFinished;
  /** The per-reseller kill switch: leads of the resellers it names wait (a minute at a time). */
  stoppedResellers?: StoppedResellers;
  /**
   * Whether a claim that finds some leads, but fewer than it wants, moves uncallable leads out of
   * the queue head (default true; a claim that finds none always does). A busy worker asks at most
   * once a second: its short claims are mostly leads another worker took a moment before.
   */
  unclogWhenShort?: boolean;
  /** Where this worker's rotation through the outbound numbers stands (see NumberRotation); moved on by the claim. */
  rotation?: NumberRotation;
  /**
   * The instant the calling rules (window, the recipient's day) are judged at; default the
   * database's clock. Lets the lifecycle tests judge a claim on a day clocks change.
   */
  judgedAt?: () => Date;
  /** How far ahead paced campaigns' start slots are taken (PACE_LOOKAHEAD; default its least). */
  paceLookaheadMs?: number;
}

export interface ClaimReport {
  claimed: Claimed[];
  /** Leads moved to the next window opening or rate-limit slot. */
  deferred: number;
  /** Leads finished without a dial (blacklisted or on a do-not-call list at dial time). */
  finished: number;
  /** Whether the queue head was examined for uncallable leads. */
  unclogged: boolean;
  /** When a paced campaign may start its next call: the worker claims again then. */
  wakeAt?: Date;
}

/** How long a lead of a reseller whose dialling is switched off waits before it is looked at again. */
const KILL_SWITCH_RECHECK_MS = 10_000;

/** Due leads examined for ones that cannot be called now, at least. */
const UNCLOG_HEAD = 200;

interface Ready {
  lead: ClaimedLead;
  config: ConfigurationRow;
  /** A paced campaign's lead: its start slot. */
  slot?: PaceSlot | undefined;
  /** The SIP trunk the call takes a channel of. */
  trunkId?: string | null;
}

/**
 * Claims up to `options.limit` due leads in the caller's transaction. It must be the last thing the
 * transaction does: its last statement carries the COMMIT (`QueryOptions.final`).
 */
export async function claimBatch(q: Queryable, options: ClaimOptions): Promise<ClaimReport> {
  const report: ClaimReport = { claimed: [], deferred: 0, finished: 0, unclogged: false };
  const limit = Math.trunc(options.limit);
  if (options.providers.length === 0 || !(limit > 0)) return report;
  // Due leads that may be called (configurations' `mayCall`, decided in the statement), through a
  // provider this worker dials that has a free number now (so leads of an exhausted pool do not
  // crowd out the others); then the rules.
  const rows = await dueCandidates(q, options.providers, limit, options.paceLookaheadMs);
  // A head holding leads that cannot be called now (no configuration, calling disabled, no free
  // number, no driver here) would hide the callable ones behind it: move those aside for a while.
  if (rows.length === 0 || (rows.length < limit && options.unclogWhenShort !== false)) {
    // Over a longer head than a claim reads: a clogged queue is cleared in a few rounds.
    report.deferred += await moveAsideUncallable(q, options.providers, limit, Math.max(UNCLOG_HEAD, limit));
    report.unclogged = true;
  }
  const deferrals: { id: string; until: string; meta?: Record<string, unknown> }[] = [];
  const blacklisted: string[] = [];
  const dncListed: Record<string, Record<string, unknown>> = {};
  const ready = new Map<string, Ready[]>();
  const stopped = options.stoppedResellers && rows.length > 0 ? await options.stoppedResellers(rows.map((r) => r.reseller_id)) : undefined;
  // Campaigns' leads start only as their campaign admits (state, dates, cap, pace, breaker), decided
  // under the campaign's lock; those it does not admit are left as they are, due.
  const campaignLeads = new Map<string, number>();
  for (const r of rows) if (r.campaign_id) campaignLeads.set(r.campaign_id, (campaignLeads.get(r.campaign_id) ?? 0) + 1);
  const admission = campaignLeads.size > 0 ? await admitCampaignStarts(q, campaignLeads, options.paceLookaheadMs) : undefined;
  if (admission?.wakeAt) report.wakeAt = admission.wakeAt;
  const configurations = new Map<string, ConfigurationRow>();
  for (const row of rows) if (row.configuration) configurations.set(row.configuration_id, row.configuration);
  // A configuration's cap on live calls, decided under its lock (after the campaigns'); only
  // configurations that have one are locked and counted.
  const capped = [...configurations.values()].filter((c) => c.max_concurrent_calls != null).map((c) => c.id);
  const configurationRoom = capped.length > 0 ? await admitConfigurationStarts(q, capped.sort()) : undefined;
  // SIP trunks' channels and pace, under their locks (after the configurations'): the trunk of each
  // SIP lead's configuration, and their failover trunks.
  const trunkOf = (row: Candidate) => {
    const stored = configurations.get(row.configuration_id)!;
    return stored.trunk_id && effectiveConfiguration(stored, row).calling_provider === 'SIP' ? stored.trunk_id : undefined;
  };
  const trunkIds = [...new Set(rows.flatMap((r) => trunkOf(r) ?? []))];
  const trunks = trunkIds.length > 0 ? await admitTrunkStarts(q, trunkIds) : undefined;
  // The database's clock, read with the leads.
  const now = options.judgedAt?.() ?? rows.find((r) => r.now)?.now ?? new Date();
  const dnc = await dncHits(q, rows, configurations);
  for (const row of rows) {
    const { configuration: _once, configuration_id, now: _read, blacklisted: isBlacklisted, campaign_id: campaignId, ...lead } = row;
    // A start is taken from the campaign's and the configuration's allowance only when both have one.
    const left = campaignId && admission ? (admission.allowed.get(campaignId) ?? 0) : undefined;
    const room = configurationRoom?.get(configuration_id);
    if ((left !== undefined && left <= 0) || (room !== undefined && room <= 0)) continue;
    const trunk = trunkOf(row);
    const trunkId = trunk && trunks!.route(trunk);
    if (trunk && !trunkId) continue;
    // A paced campaign's lead takes the next start slot of its pace (dialled then).
    const paceSlot = left !== undefined ? admission!.slots.get(campaignId!)?.shift() : undefined;
    if (left !== undefined) admission!.allowed.set(campaignId!, left - 1);
    if (room !== undefined) configurationRoom!.set(configuration_id, room - 1);
    const stored = configurations.get(configuration_id)!;
    const config = effectiveConfiguration(stored, lead);
    const phone = lead.payload.customer_mobile_number as string;
    if (stopped?.has(lead.reseller_id)) {
      // Looked at again soon: switching dialling back on takes effect within seconds.
      deferrals.push({ id: lead.id, until: new Date(now.getTime() + KILL_SWITCH_RECHECK_MS).toISOString() });
      continue;
    }
    if (config.enforce_blacklist && isBlacklisted) {
      blacklisted.push(lead.id);
      continue;
    }
    const listed = dnc.get(lead.id);
    if (listed) {
      dncListed[lead.id] = { dnc_list: { id: listed.list_id, name: listed.name, checked_at: now.toISOString() } };
      continue;
    }
    const zone = leadZone(lead.payload, config.call_timezone, config.window_timezone);
    if (!inWindow(now, config.call_start_time, config.call_end_time, zone)) {
      deferrals.push({ id: lead.id, until: nextOpening(now, config.call_start_time, config.call_end_time, zone).toISOString() });
      continue;
    }
    const lawful = legalHold(now, phone, config.legal_hours ?? []);
    if (lawful) {
      const until = lawful.until.toISOString();
      deferrals.push({ id: lead.id, until, meta: { legal_hours_hold: { jurisdiction: lawful.jurisdiction, hours: lawful.hours, zones: lawful.zones, judged_at: now.toISOString(), until } } });
      continue;
    }
    if (config.max_calls_per_number_per_day != null) {
      // A number dialled often enough today (the recipient's day) waits for tomorrow; one by one, each counted.
      const day = localDay(now, zone);
      if ((await numberDialsSince(q, lead.reseller_id, phone, day.start)) >= config.max_calls_per_number_per_day) {
        deferrals.push({ id: lead.id, until: day.next.toISOString() });
        continue;
      }
      if (!isRateLimited(config, phone)) {
        report.claimed.push(...(await claimWithNumbers(q, config.calling_provider, [{ lead, config, slot: paceSlot, trunkId }], options)));
        continue;
      }
    }
    if (isRateLimited(config, phone)) {
      // Rate-limited leads go one by one, each counted against its configuration's window.
      const slot = await freeSlot(q, stored.id, { maxCalls: config.rate_limit_max_calls!, windowSeconds: config.rate_limit_window_seconds! });
      if (!slot.free) {
        deferrals.push({ id: lead.id, until: slot.freesAt.toISOString() });
        continue;
      }
      const claimed = await claimWithNumbers(q, config.calling_provider, [{ lead, config, slot: paceSlot, trunkId }], options);
      if (claimed.length > 0) await takeSlot(q, stored.id, lead.id);
      report.claimed.push(...claimed);
      continue;
    }
    const group = ready.get(config.calling_provider) ?? [];
    group.push({ lead, config, slot: paceSlot, trunkId });
    ready.set(config.calling_provider, group);
  }
  const trunkWake = await trunks?.commit(q);
  if (trunkWake && (!report.wakeAt || trunkWake < report.wakeAt)) report.wakeAt = trunkWake;
  // The claim's last statement carries its COMMIT (one round trip fewer): mostly the only claim.
  const groups = [...ready];
  for (const [i, [provider, group]] of groups.entries()) {
    const final = i === groups.length - 1 && deferrals.length === 0 && blacklisted.length === 0 && Object.keys(dncListed).length === 0;
    report.claimed.push(...(await claimWithNumbers(q, provider, group, { ...options, final })));
  }
  await holdUntil(q, deferrals);
  report.deferred += deferrals.length;
  if (blacklisted.length > 0) {
    await finishWaiting(q, blacklisted, 'BLACKLISTED', options.onFinished);
    report.finished += blacklisted.length;
  }
  const onDnc = Object.keys(dncListed);
  if (onDnc.length > 0) {
    await finishWaiting(q, onDnc, 'DNC_LISTED', options.onFinished, dncListed);
    report.finished += onDnc.length;
  }
  return report;
}

/**
 * The leads of `rows` whose number is on a do-not-call list their configuration honours (the
 * lists as they are now, not as they were at push), with the list: one lookup for the claim, and
 * none when no configuration names a list.
 */
async function dncHits(q: Queryable, rows: readonly Candidate[], configurations: ReadonlyMap<string, ConfigurationRow>): Promise<Map<string, DncHit>> {
  const asks: { id: string; phone: string; lists: readonly string[] }[] = [];
  for (const row of rows) {
    const lists = effectiveConfiguration(configurations.get(row.configuration_id)!, row).dnc_lists ?? [];
    const phone = row.payload.customer_mobile_number;
    if (lists.length > 0 && typeof phone === 'string') asks.push({ id: row.id, phone, lists });
  }
  const hits = await findDncHits(q, asks);
  return new Map(asks.flatMap((a, i) => (hits[i] ? [[a.id, hits[i]] as const] : [])));
}

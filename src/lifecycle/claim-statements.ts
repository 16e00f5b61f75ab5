/**
 * Taking leads: the statements that make a lead PROCESSING (a claim by the scheduler, a claim by a
 * browser's offer, an inbound call's new lead), that keep it so (the lease), and that hold a due
 * lead back (a later due time). Every one is guarded: a claim takes only leads that are waiting
 * (BACKLOG or RETRY), a lease is renewed only by the worker that holds it.
 */
import { randomUUID } from 'node:crypto';
import { blacklistedSql } from '../blacklist/index.js';
import { EFFECTIVE_PROVIDER_SQL, MAY_CALL_SQL, type ConfigurationRow } from '../configurations/index.js';
import type { Queryable } from '../db/index.js';
import { localPrefixes } from '../lib/phone.js';
import type { OutboundNumberRow } from '../numbers/index.js';
import { dueHeadSql, HEAD_COLUMNS, PHONE_MODES_SQL } from './due-head.js';
import { FREE_NUMBER_SQL } from './numbers.js';
import { trunkLiveSql } from './trunk-gate.js';
import { LEADS_CHANNEL, type ClaimedLead, type InboundLead, type LeadRow } from './types.js';

/** A due lead the claim may take, locked, with what its rules need. */
export type Candidate = ClaimedLead & {
  configuration_id: string;
  /** The lead's configuration, on the first lead of each configuration only (the rest share it). */
  configuration: ConfigurationRow | null;
  blacklisted: boolean;
  /** The database's clock when the claim read its leads: with the configuration (null on the rest). */
  now: Date | null;
  /** The campaign the lead joined: its admission decides whether the lead starts now. */
  campaign_id: string | null;
};

/**
 * Locks up to `limit` due leads that this worker can call now (a configuration that calls, through
 * one of `providers` with a free number), out of the first `limit` due leads in due order that no
 * other claim holds: an index scan that stays cheap at any queue length. Leads other workers are
 * claiming are skipped as the head is read (SKIP LOCKED), so claims at the same moment each take
 * a head of their own, and a claim locks no more leads than it may take (every row lock is a
 * write and a WAL record; see docs/dispatch.md). Leads of the head that cannot be called now make
 * the claim short; the scheduler then moves them aside (`moveAsideUncallable`).
 * The limit is written into the statement, not passed as a parameter: with a parameter for a
 * LIMIT PostgreSQL plans the statement afresh on every claim (its generic plan assumes a tenth of
 * the table), 0.5 ms each time; as a literal there is one prepared statement per limit a worker
 * uses (at most its call slots), whose plan is kept. `lookaheadMs`: how far ahead paced
 * campaigns' start slots are taken (PACE_LOOKAHEAD; in 50 ms steps, a statement for each).
 */
export async function dueCandidates(q: Queryable, providers: string[], limit: number, lookaheadMs?: number): Promise<Candidate[]> {
  const { rows } = await q.query<Candidate>(
    // The head is read and locked once: a lead another claim changed meanwhile is checked again as
    // it is locked (and skipped if no longer due), and what is read of it is its locked version.
    `WITH ${dueHeadSql(HEAD_COLUMNS, Math.trunc(limit), true, lookaheadMs)},
     picked AS (
       SELECT l.*, c.id AS configuration_id
       FROM due_head l
       JOIN configurations c ON c.reseller_id = l.reseller_id AND c.template_id = l.template_id
       WHERE ${MAY_CALL_SQL}
         -- Computed once per claim (an InitPlan), not once per lead of the head.
         AND ${EFFECTIVE_PROVIDER_SQL} = ANY (ARRAY(
           SELECT p FROM unnest($1::text[]) AS p WHERE EXISTS (SELECT 1 FROM outbound_numbers WHERE provider = p AND ${FREE_NUMBER_SQL}))))
     SELECT p.id, p.reseller_id, p.merchant_id, p.template_id, p.template_name, p.request_id, p.execution_mode, p.payload, p.is_playground,
            p.configurations_override, p.attempt_count, p.configuration_id, p.campaign_id,
            -- Each configuration once (the leads of a batch mostly share one), not once per lead; with
            -- it the clock (a timestamp costs the worker more to read than any other column).
            CASE WHEN row_number() OVER (PARTITION BY p.configuration_id) = 1
              THEN (SELECT to_jsonb(c) FROM configurations c WHERE c.id = p.configuration_id) END AS configuration,
            CASE WHEN row_number() OVER (PARTITION BY p.configuration_id) = 1 THEN clock_timestamp() END AS now,
            ${blacklistedSql(`p.payload->>'customer_mobile_number'`, 'p.reseller_id')} AS blacklisted
     FROM picked p
     ORDER BY p.next_attempt_at, p.id`,
    [providers],
    { prepare: true },
  );
  return rows;
}

/**
 * How long a lead that nothing may call waits before it is looked at again: no configuration for
 * its template yet, or one with calling disabled. Such a lead is pushed with this due time rather
 * than due at once, and a due one found in the queue head is moved aside by it. Creating the
 * configuration or enabling its calling brings the template's waiting leads forward at once
 * (`releaseHeld`); the recheck remains for those it leaves alone (leads waiting for a retry).
 */
export const HELD_SECONDS = 300;

/**
 * When the first `head` due leads are all there and hold leads this worker cannot call now, moves
 * those among the first `examine` due leads aside: by 10 s when only a number or a driver is
 * missing (a number only while another of the worker's providers has one free), by HELD_SECONDS
 * without a calling configuration. Returns how many it moved.
 */
export async function moveAsideUncallable(q: Queryable, providers: string[], head: number, examine: number): Promise<number> {
  const { rows } = await q.query<{ n: number }>(
    `WITH enough AS (
       -- First the cheap look: with fewer than $2 due leads of any kind the head cannot be full, and
       -- nothing more is read (most empty claims, e.g. while pushes arrive a few at a time). In
       -- the index's order, so the scan stops at $2 (unordered, the plan may read every due lead
       -- into a bitmap first: 120 ms with a paused campaign of 100,000 queued).
       SELECT count(*) >= $2 AS due FROM (
         SELECT 1 FROM leads WHERE status IN ('BACKLOG', 'RETRY') AND next_attempt_at <= now() ORDER BY next_attempt_at, id LIMIT $2) AS d),
     ${dueHeadSql('id, reseller_id, template_id, is_playground, configurations_override, next_attempt_at', Math.trunc(examine), false)},
     h AS (
       SELECT l.id, c.id AS configuration_id, ${MAY_CALL_SQL} AS calling, ${EFFECTIVE_PROVIDER_SQL} AS provider
       FROM due_head l LEFT JOIN configurations c ON c.reseller_id = l.reseller_id AND c.template_id = l.template_id
       WHERE (SELECT due FROM enough)),
     full_head AS (SELECT count(*) >= $2 AS full FROM h),
     -- Only the leads it moves are locked (those another worker holds are left to it): locking the
     -- whole head would leave other workers' claims meanwhile with nothing to take.
     aside AS (
       SELECT l.id, CASE WHEN h.configuration_id IS NULL OR NOT h.calling THEN ${HELD_SECONDS} ELSE 10 END AS secs
       FROM leads l JOIN h ON h.id = l.id, full_head
       WHERE full_head.full AND l.status IN ('BACKLOG', 'RETRY') AND l.next_attempt_at <= now()
         AND (h.configuration_id IS NULL OR NOT h.calling OR NOT (h.provider = ANY($1::text[]))
              -- A provider without a free number hides only when another has one: with every
              -- number of this worker's providers taken, nothing behind it could be called either,
              -- and the next finish gives a number back.
              OR (h.provider NOT IN (SELECT provider FROM outbound_numbers WHERE ${FREE_NUMBER_SQL})
                  AND EXISTS (SELECT 1 FROM outbound_numbers WHERE provider = ANY($1::text[]) AND ${FREE_NUMBER_SQL})))
       FOR NO KEY UPDATE OF l SKIP LOCKED),
     moved AS (
       UPDATE leads SET next_attempt_at = now() + make_interval(secs => aside.secs), updated_at = now()
       FROM aside
       WHERE leads.id = aside.id
       RETURNING 1)
     SELECT count(*)::int AS n FROM moved`,
    [providers, head],
    { prepare: true },
  );
  return rows[0]!.n;
}

/** How many held leads one statement releases: a larger queue is released a batch at a time. */
export const RELEASE_BATCH = 2000;

/**
 * A template's configuration now calls (it was created, or its calling enabled): its leads that
 * were never attempted and are not due yet (held while nothing could call them, or by a rule the
 * claim checks again) become due at their creation + `initialOffsetSeconds` (the configuration's
 * first-attempt delay), or at once if that has passed, and idle schedulers are woken. Retries keep
 * their times: their retry policy set them. At most `limit` leads, first due first; returns how
 * many it rescheduled (`limit`: there may be more, see `releaseAllHeld`).
 */
export async function releaseHeld(q: Queryable, resellerId: string, templateId: string, initialOffsetSeconds: number, limit = RELEASE_BATCH): Promise<number> {
  const { rows } = await q.query<{ n: number }>(
    `WITH batch AS MATERIALIZED (
       SELECT id FROM leads
       WHERE status IN ('BACKLOG', 'RETRY') AND next_attempt_at > now()
         AND reseller_id = $1 AND template_id = $2 AND status = 'BACKLOG' AND attempt_count = 0
         -- Those already at their time are done: a batch never takes a lead twice.
         AND next_attempt_at <> greatest(now(), created_at + make_interval(secs => $3))
       ORDER BY next_attempt_at, id
       LIMIT $4
       FOR NO KEY UPDATE SKIP LOCKED),
     released AS (
       -- By key (an array, so each lead is found through the primary key, never a scan of the table).
       UPDATE leads SET next_attempt_at = greatest(now(), created_at + make_interval(secs => $3)), updated_at = now()
       WHERE id = ANY (ARRAY(SELECT id FROM batch))
       RETURNING 1)
     SELECT count(*)::int AS n, CASE WHEN count(*) > 0 THEN pg_notify('${LEADS_CHANNEL}', '') END AS notified FROM released`,
    [resellerId, templateId, initialOffsetSeconds, limit],
  );
  return rows[0]!.n;
}

/**
 * Releases the rest of a template's held leads, a batch per statement, each committed on its own:
 * the first batch is released in the transaction that enables calling, and a queue of a million
 * held leads does not hold that transaction (or the embedded database) for the time it takes to
 * release them all. A lead this misses (the process stops meanwhile) is released by its recheck,
 * HELD_SECONDS after it was held. Returns how many it rescheduled.
 */
export async function releaseAllHeld(q: Queryable, resellerId: string, templateId: string, initialOffsetSeconds: number): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await releaseHeld(q, resellerId, templateId, initialOffsetSeconds);
    total += n;
    if (n < RELEASE_BATCH) return total;
  }
}

/** Holds waiting leads back until the given times (a closed window, a rate limit, a kill switch). */
export async function holdUntil(q: Queryable, holds: readonly { id: string; until: string; meta?: Record<string, unknown> }[]): Promise<void> {
  if (holds.length === 0) return;
  await q.query(
    // `meta`: why it waits, merged into its metaData (a hold by the calling hours of law).
    `UPDATE leads l SET next_attempt_at = x.until, meta_data = CASE WHEN x.meta IS NULL THEN l.meta_data ELSE l.meta_data || x.meta END, updated_at = now()
     FROM jsonb_to_recordset($1::jsonb) AS x (id text, until timestamptz, meta jsonb) WHERE l.id = x.id`,
    [JSON.stringify(holds)],
  );
}

/**
 * Where a worker's rotation through each provider's outbound numbers stands: provider to the id of
 * the last number it took. Its claims take the free numbers after that one in id order, wrapping
 * around to the first: every number is used in turn, as least-recently-used would, and a claim
 * reads about as many numbers as it takes, however large the pool (see docs/dispatch.md). Each
 * worker keeps its own, and starts each provider's at a random point of the pool (numbers get
 * UUIDs): workers do not all begin with the same numbers, and a restart does not favour the first
 * ones. Workers taking at the same moment skip the numbers the other holds.
 */
export type NumberRotation = Map<string, string>;

export interface Claimed {
  lead: ClaimedLead;
  configuration: ConfigurationRow;
  /** The outbound number the call goes out from (what the dial needs of it). */
  number: Pick<OutboundNumberRow, 'id' | 'phone_number'> & { provider: string };
  attempt: number;
  /** A paced campaign's lead: its start slot, when the worker dials it. */
  slot?: PaceSlot;
}

/** A start slot of a paced campaign: when its lead is dialled, and its campaign's step (1/rate). */
export interface PaceSlot {
  at: Date;
  campaignId: string;
  stepMs: number;
}

/**
 * The claim: gives each lead of `group` a free number of `provider`, makes it PROCESSING with one
 * more attempt and a lease, and opens its attempt history row; one set-based statement. Numbers
 * are taken in `rotation` (which it moves on), with SKIP LOCKED, so two workers never take the
 * same one; leads left without a number (the pool ran dry) stay due and are tried on the next round.
 */
export async function claimWithNumbers(q: Queryable, provider: string, group: readonly ClaimGroupLead[], lease: ClaimLease): Promise<Claimed[]> {
  // Leads whose configuration asks for local presence take their number one by one, nearest
  // first; the others (every lead, unless a configuration asks) all in one statement, as before.
  const local = group.filter((g) => g.config.local_presence === true);
  if (local.length === 0) return claimInRotation(q, provider, group, lease, []);
  const final = lease.final === true;
  const claimed: Claimed[] = [];
  const rest = group.filter((g) => g.config.local_presence !== true);
  if (rest.length > 0) claimed.push(...(await claimInRotation(q, provider, rest, { ...lease, final: false }, [])));
  for (const [i, g] of local.entries()) {
    const prefixes = localPrefixes(String(g.lead.payload.customer_mobile_number ?? ''));
    claimed.push(...(await claimInRotation(q, provider, [g], { ...lease, final: final && i === local.length - 1 }, prefixes)));
  }
  return claimed;
}

type ClaimLease = { workerId: string; leaseSeconds: number; final?: boolean; rotation?: NumberRotation };
/** `trunkId`: the SIP trunk the call takes a channel of (the trunks' admission chose it). */
type ClaimGroupLead = { lead: ClaimedLead; config: ConfigurationRow; slot?: PaceSlot | undefined; trunkId?: string | null };
/**
 * The claim's statement. With `prefixes` (one lead, local presence) the free numbers starting with
 * each prefix come first, nearest first, each set in rotation from where it stands (a range scan
 * of the prefix index: only the numbers of that area or country are read); then any free number.
 */
async function claimInRotation(
  q: Queryable,
  provider: string,
  group: readonly ClaimGroupLead[],
  lease: ClaimLease,
  prefixes: readonly string[],
): Promise<Claimed[]> {
  // A prefix is `+` and digits: its range ends before the same prefix followed by ':' (after '9').
  const near = prefixes.map((_p, i) => `SELECT id, ${i - prefixes.length} AS part FROM (
           SELECT id FROM outbound_numbers WHERE provider = $1 AND ${FREE_NUMBER_SQL} AND phone_number ~>=~ $${9 + 2 * i} AND phone_number ~<~ $${10 + 2 * i}
           ORDER BY id <= $6, id LIMIT $2 FOR NO KEY UPDATE SKIP LOCKED) AS near_${i}
         UNION ALL
         `);
  const { rows } = await q.query<{ id: string; attempt_count: number; number_id: string; phone_number: string; rotation: string | null }>(
    // The free numbers after the last one taken, then (only when those run short) from the first
    // on: each part an index scan of about as many rows as it takes, read lazily under the LIMIT.
    `WITH free AS (
       SELECT id, row_number() OVER (ORDER BY part, id) AS rn FROM (
         ${near.join('')}SELECT id, 0 AS part FROM (
           SELECT id FROM outbound_numbers WHERE provider = $1 AND ${FREE_NUMBER_SQL} AND id > $6
           ORDER BY provider, id LIMIT $2 FOR NO KEY UPDATE SKIP LOCKED) AS after_last
         UNION ALL
         SELECT id, 1 AS part FROM (
           SELECT id FROM outbound_numbers WHERE provider = $1 AND ${FREE_NUMBER_SQL} AND id <= $6
           ORDER BY provider, id LIMIT $2 FOR NO KEY UPDATE SKIP LOCKED) AS from_first
         LIMIT $2) AS f),
     want AS (SELECT lead_id, start_at, trunk_id, rn FROM unnest($3::text[], $7::timestamptz[], $8::text[]) WITH ORDINALITY AS w (lead_id, start_at, trunk_id, rn)),
     taken AS (
       UPDATE outbound_numbers n SET status = 'IN_USE', lead_id = want.lead_id, updated_at = now()
       FROM free JOIN want USING (rn)
       WHERE n.id = free.id
       RETURNING n.id, n.phone_number, n.lead_id, want.start_at, want.trunk_id),
     claimed AS (
       -- A paced campaign's lead starts at its slot (a fraction of a second ahead at most), the rest now.
       UPDATE leads l SET status = 'PROCESSING', attempt_count = l.attempt_count + 1, call_initiated_time = coalesce(taken.start_at, now()), call_end_time = NULL,
              call_id = NULL, locked_by = $4, locked_until = now() + make_interval(secs => $5), outbound_number_id = taken.id,
              provider = $1, trunk_id = taken.trunk_id, next_attempt_at = NULL, updated_at = now()
       FROM taken
       WHERE l.id = taken.lead_id
       RETURNING l.id, l.attempt_count, l.outbound_number_id, l.payload->>'customer_mobile_number' AS phone, taken.phone_number, l.call_initiated_time),
     history AS (
       INSERT INTO call_attempts (id, lead_id, attempt, provider, outbound_number_id, status, worker_id, phone_number, started_at)
       SELECT gen_random_uuid()::text, claimed.id, claimed.attempt_count, $1, claimed.outbound_number_id, 'DIALLING', $4, claimed.phone, claimed.call_initiated_time
       FROM claimed)
     -- What the caller does not know yet: the new attempt count and the outbound number taken (it
     -- read and locked the rest of each lead itself), and where the rotation now stands.
     SELECT id, attempt_count, outbound_number_id AS number_id, phone_number, (SELECT id FROM free ORDER BY rn DESC LIMIT 1) AS rotation
     FROM claimed`,
    [provider, group.length, group.map((g) => g.lead.id), lease.workerId, lease.leaseSeconds, lease.rotation?.get(provider) ?? randomUUID(),
      group.map((g) => g.slot?.at.toISOString() ?? null), group.map((g) => g.trunkId ?? null), ...prefixes.flatMap((p) => [p, `${p}:`])],
    { prepare: true, final: lease.final === true },
  );
  if (rows[0]?.rotation) lease.rotation?.set(provider, rows[0].rotation);
  const taken = new Map(group.map((g) => [g.lead.id, g]));
  return rows.map(({ id, attempt_count, number_id, phone_number }) => {
    const { lead, config, slot } = taken.get(id)!;
    // The lead as this claim read it, brought up to date (a claimed lead belongs to its claim).
    lead.attempt_count = attempt_count;
    return { lead, configuration: config, number: { id: number_id, phone_number, provider }, attempt: attempt_count, ...(slot ? { slot } : {}) };
  });
}

/**
 * The claim by a browser's offer: a waiting lead of one of `modes` becomes PROCESSING with one
 * more attempt, the room as call_id, and a lease; its attempt row is written. Undefined when the
 * lead is not waiting (already in a session, or finished): a second offer loses here.
 */
export async function claimForSession(
  q: Queryable,
  args: { leadId: string; room: string; workerId: string; leaseSeconds: number; provider: string; modes: readonly string[] },
): Promise<LeadRow | undefined> {
  const { rows } = await q.query<LeadRow>(
    `UPDATE leads SET status = 'PROCESSING', attempt_count = attempt_count + 1, call_initiated_time = now(), call_end_time = NULL,
            call_id = $2, locked_by = $3, locked_until = now() + make_interval(secs => $4), provider = $5, outbound_number_id = NULL,
            next_attempt_at = NULL, updated_at = now()
     WHERE id = $1 AND status IN ('BACKLOG', 'RETRY') AND execution_mode = ANY($6::text[])
     RETURNING *`,
    [args.leadId, args.room, args.workerId, args.leaseSeconds, args.provider, [...args.modes]],
  );
  const lead = rows[0];
  if (!lead) return undefined;
  await q.query(
    `INSERT INTO call_attempts (id, lead_id, attempt, call_id, provider, status, worker_id)
     VALUES (gen_random_uuid()::text, $1, $2, $3, $4, 'IN_PROGRESS', $5)`,
    [lead.id, lead.attempt_count, args.room, args.provider, args.workerId],
  );
  return lead;
}

/**
 * Creates an inbound call's lead, already PROCESSING (the call is answered as it is created). A
 * call that came in through a SIP trunk holds one of its channels: under the trunk's row lock, the
 * lead is created only while the trunk has one free (false: it is full, nothing written).
 */
export async function openInbound(q: Queryable, lead: InboundLead, attemptId: string): Promise<boolean> {
  if (lead.trunkId) {
    const { rows } = await q.query<{ full: boolean }>(
      `SELECT t.max_channels IS NOT NULL AND ${trunkLiveSql('t')} >= t.max_channels AS full FROM sip_trunks t WHERE t.id = $1 FOR UPDATE`,
      [lead.trunkId],
    );
    if (rows[0]?.full) return false;
  }
  await q.query(
    `INSERT INTO leads (id, reseller_id, merchant_id, template_id, template_name, request_id, status, attempt_count, call_id,
                        call_initiated_time, provider, call_direction, outbound_number_id, payload, trunk_id)
     VALUES ($1, $2, $3, $4, $5, $6, 'PROCESSING', 1, $7, now(), $8, 'INBOUND', $9, $10, $11)`,
    [lead.id, lead.resellerId, lead.merchantId, lead.templateId, lead.templateName, `inbound-${lead.callSid}`, lead.callSid, lead.provider, lead.numberId, JSON.stringify(lead.payload), lead.trunkId ?? null],
  );
  const attempt = [attemptId, lead.id, lead.callSid, lead.provider, lead.numberId];
  await q.query(`INSERT INTO call_attempts (id, lead_id, attempt, call_id, provider, outbound_number_id) VALUES ($1, $2, 1, $3, $4, $5)`, attempt);
  return true;
}

/**
 * Renews the leases `workerId` holds on `leadIds` (a worker's live calls), all in one statement.
 * Returns those it still held; a lead missing from the answer was recovered by another worker.
 */
export async function renewLeases(q: Queryable, leadIds: readonly string[], workerId: string, leaseSeconds: number): Promise<Set<string>> {
  const { rows } = await q.query<{ id: string }>(
    `UPDATE leads SET locked_until = now() + make_interval(secs => $3)
     WHERE id = ANY($1::text[]) AND status = 'PROCESSING' AND locked_by = $2
     RETURNING id`,
    [leadIds, workerId, leaseSeconds],
    { prepare: true },
  );
  return new Set(rows.map((r) => r.id));
}

/**
 * A live call moves to another SIP trunk (its trunk refused it and the failover trunk takes it):
 * the lead holds that trunk's channel from now on. Only while the lead is still in `attempt`.
 */
export async function moveToTrunk(q: Queryable, leadId: string, attempt: number, trunkId: string): Promise<boolean> {
  const { rows } = await q.query(`UPDATE leads SET trunk_id = $3 WHERE id = $1 AND status = 'PROCESSING' AND attempt_count = $2 RETURNING id`, [leadId, attempt, trunkId]);
  return rows.length > 0;
}

/** Notes the provider's call SID on the lead and its attempt as soon as it is known. */
export async function recordCallId(q: Queryable, leadId: string, workerId: string, attempt: number, callId: string): Promise<void> {
  await q.query(
    `WITH l AS (UPDATE leads SET call_id = $3, updated_at = now() WHERE id = $1 AND status = 'PROCESSING' AND locked_by = $2 RETURNING id)
     UPDATE call_attempts SET call_id = $3 WHERE lead_id = (SELECT id FROM l) AND attempt = $4`,
    [leadId, workerId, callId, attempt],
    { prepare: true },
  );
}

/** Keeps what the pre-dial checks answered on the lead (they let its dial go ahead). */
export async function notePreChecks(q: Queryable, leadId: string, results: unknown[]): Promise<void> {
  await q.query(`UPDATE leads SET meta_data = meta_data || $2::jsonb WHERE id = $1`, [leadId, JSON.stringify({ pre_check_results: results })]);
}

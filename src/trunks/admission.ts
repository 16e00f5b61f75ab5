/**
 * A SIP trunk's admission of call starts, decided inside a claim's transaction with the capped
 * trunks' rows locked, so claims of every worker take turns per trunk and each counts the calls
 * the one before committed (under READ COMMITTED each statement after the lock reads what was
 * committed), as a campaign's cap and pace are (src/campaigns/admission.ts):
 * - channels: the calls holding the trunk (its PROCESSING leads, src/lifecycle/trunk-gate.ts) plus
 *   the starts admitted now never exceed `max_channels`;
 * - pace: at most one start per claim, and only once the database's clock has reached the trunk's
 *   `next_start_at`, which then moves to this start + 1/`max_calls_per_second`: two calls through
 *   the trunk never start closer together than that, whichever workers start them;
 * - failover: a lead whose trunk is closed (full or paced) goes to the trunk's `failover_trunk_id`
 *   when that one is open; with neither open it stays due, held (`trunkHold` says why).
 * Trunks without caps are neither locked nor counted.
 */
import type { Queryable } from '../db/index.js';
import { moveToTrunk, trunkLiveSql, trunkOpenSql } from '../lifecycle/index.js';

interface Reading {
  id: string;
  failover_trunk_id: string | null;
  capped: boolean;
  paced: boolean;
  pace_ready: boolean;
  next_start_at: Date | null;
  room: number | null;
}

export class TrunkAdmission {
  /** The paced trunks this claim started a call on (their pace moves on). */
  private readonly started = new Set<string>();

  constructor(private readonly trunks: Map<string, Reading>) {}

  private take(id: string): boolean {
    const t = this.trunks.get(id);
    // A trunk that is gone: the driver says so when it dials.
    if (!t) return true;
    if (t.paced && (!t.pace_ready || this.started.has(id))) return false;
    if (t.room !== null && t.room <= 0) return false;
    if (t.room !== null) t.room--;
    if (t.paced) this.started.add(id);
    return true;
  }

  /** The trunk a lead of trunk `id` starts its call on now (the trunk, or its failover), or undefined: held. */
  route(id: string): string | undefined {
    if (this.take(id)) return id;
    const failover = this.trunks.get(id)?.failover_trunk_id;
    return failover && this.take(failover) ? failover : undefined;
  }

  /**
   * Moves the pace of the trunks this claim started calls on, and answers when the earliest paced
   * trunk may start its next call (the worker claims again then). Call it before the claim's last
   * statement.
   */
  async commit(q: Queryable): Promise<Date | undefined> {
    let wakeAt: Date | undefined;
    const earliest = (at: Date | null) => {
      if (at && (!wakeAt || at < wakeAt)) wakeAt = at;
    };
    for (const t of this.trunks.values()) if (t.paced && !t.pace_ready) earliest(t.next_start_at);
    if (this.started.size > 0) {
      const { rows } = await q.query<{ next_start_at: Date }>(
        `UPDATE sip_trunks SET next_start_at = now() + make_interval(secs => 1.0 / max_calls_per_second)
         WHERE id = ANY($1::text[]) RETURNING next_start_at`,
        [[...this.started]],
      );
      for (const r of rows) earliest(new Date(r.next_start_at));
    }
    return wakeAt;
  }
}

/**
 * Reads the trunks `ids` and their failover trunks, locks those with a cap (in id order, after the
 * campaigns and configurations: claims never wait on each other in a circle), and counts their
 * channels in use. Call it in the claim's transaction, before its leads are taken.
 */
export async function admitTrunkStarts(q: Queryable, ids: readonly string[]): Promise<TrunkAdmission> {
  const { rows: trunks } = await q.query<{ id: string; capped: boolean }>(
    `SELECT id, (max_channels IS NOT NULL OR max_calls_per_second IS NOT NULL) AS capped FROM sip_trunks
     WHERE id = ANY($1::text[]) OR id IN (SELECT failover_trunk_id FROM sip_trunks WHERE id = ANY($1::text[]))`,
    [ids],
    { prepare: true },
  );
  const capped = trunks.filter((t) => t.capped).map((t) => t.id).sort();
  if (capped.length > 0) await q.query('SELECT id FROM sip_trunks WHERE id = ANY($1::text[]) ORDER BY id FOR NO KEY UPDATE', [capped], { prepare: true });
  const { rows } = await q.query<Reading>(
    `SELECT t.id, t.failover_trunk_id, (t.max_channels IS NOT NULL OR t.max_calls_per_second IS NOT NULL) AS capped,
            t.max_calls_per_second IS NOT NULL AS paced, (t.next_start_at IS NULL OR t.next_start_at <= now()) AS pace_ready, t.next_start_at,
            CASE WHEN t.max_channels IS NULL THEN NULL ELSE greatest(0, t.max_channels - ${trunkLiveSql('t')}) END AS room
     FROM sip_trunks t WHERE t.id = ANY($1::text[])`,
    [trunks.map((t) => t.id)],
    { prepare: true },
  );
  return new TrunkAdmission(new Map(rows.map((r) => [r.id, r])));
}

/**
 * Why a due waiting lead of (reseller, template) is held by its SIP trunk: `trunk_cap` (its
 * channels are all in use) or `trunk_pace` (its next start waits for max_calls_per_second), with
 * its failover trunk closed too; or null.
 */
export async function trunkHold(q: Queryable, resellerId: string, templateId: string): Promise<'trunk_cap' | 'trunk_pace' | null> {
  const { rows } = await q.query<{ paced: boolean }>(
    `SELECT (t.next_start_at IS NOT NULL AND t.next_start_at > now()) AS paced
     FROM configurations c JOIN sip_trunks t ON t.id = c.trunk_id LEFT JOIN sip_trunks f ON f.id = t.failover_trunk_id
     WHERE c.reseller_id = $1 AND c.template_id = $2 AND c.calling_provider = 'SIP'
       AND NOT ${trunkOpenSql('t')} AND (f.id IS NULL OR NOT ${trunkOpenSql('f')})`,
    [resellerId, templateId],
  );
  if (!rows[0]) return null;
  return rows[0].paced ? 'trunk_pace' : 'trunk_cap';
}

/**
 * A live call that trunk `fromTrunkId` failed (the carrier's fault) takes a channel of that trunk's
 * failover trunk, if it is open (its lock taken when it has caps, its pace moved on): the lead holds
 * it from now on. Answers the failover trunk's id, or undefined (none, full, or paced). Call it in
 * a transaction of its own.
 */
export async function takeFailover(q: Queryable, lead: { id: string; attempt: number }, fromTrunkId: string): Promise<string | undefined> {
  const { rows: next } = await q.query<{ id: string; capped: boolean }>(
    `SELECT f.id, (f.max_channels IS NOT NULL OR f.max_calls_per_second IS NOT NULL) AS capped
     FROM sip_trunks t JOIN sip_trunks f ON f.id = t.failover_trunk_id WHERE t.id = $1`,
    [fromTrunkId],
  );
  const failover = next[0];
  if (!failover) return undefined;
  if (failover.capped) {
    // Locked first, counted after: the count reads what the claims before the lock committed.
    await q.query('SELECT id FROM sip_trunks WHERE id = $1 FOR NO KEY UPDATE', [failover.id]);
    const { rows } = await q.query<{ open: boolean; paced: boolean }>(
      `SELECT ${trunkOpenSql('f')} AS open, f.max_calls_per_second IS NOT NULL AS paced FROM sip_trunks f WHERE f.id = $1`,
      [failover.id],
    );
    if (!rows[0]?.open) return undefined;
    if (rows[0].paced) await q.query('UPDATE sip_trunks SET next_start_at = now() + make_interval(secs => 1.0 / max_calls_per_second) WHERE id = $1', [failover.id]);
  }
  return (await moveToTrunk(q, lead.id, lead.attempt, failover.id)) ? failover.id : undefined;
}

import type { Queryable } from '../db/index.js';

export interface OutboundNumberRow {
  id: string;
  phone_number: string;
  provider: 'PROVIDER_A' | 'PROVIDER_B' | 'PROVIDER_C';
  status: 'AVAILABLE' | 'IN_USE' | 'DISABLED';
  channel: string;
  /** The lead whose call holds the number while IN_USE. */
  lead_id: string | null;
  created_at: Date;
  updated_at: Date;
}

/**
 * Takes a free number of `provider` for `leadId`'s call, atomically: the row is chosen and marked
 * IN_USE by one statement that skips rows other workers hold, so two calls never share a number.
 * The first free number in the pool's order (the scheduler's claims go on from the last number
 * they took: see claimWithNumbers). Undefined when none is free (the lead waits).
 */
export async function acquireNumber(db: Queryable, provider: string, leadId: string): Promise<OutboundNumberRow | undefined> {
  const { rows } = await db.query<OutboundNumberRow>(
    `UPDATE outbound_numbers SET status = 'IN_USE', lead_id = $2, updated_at = now()
     WHERE id = (SELECT id FROM outbound_numbers WHERE provider = $1 AND status = 'AVAILABLE'
                 ORDER BY provider, id LIMIT 1 FOR UPDATE SKIP LOCKED)
     RETURNING *`,
    [provider, leadId],
  );
  return rows[0];
}

/** Gives a number back when `leadId`'s call ends; a no-op when the lead no longer holds it. */
export async function releaseNumber(db: Queryable, numberId: string, leadId: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE outbound_numbers SET status = 'AVAILABLE', lead_id = NULL, updated_at = now()
     WHERE id = $1 AND lead_id = $2 AND status = 'IN_USE'`,
    [numberId, leadId],
  );
  return rowCount > 0;
}

import type { Queryable } from '../db/index.js';

/** What a watcher of a lead sees change. */
export interface LeadState {
  id: string;
  reseller_id: string;
  merchant_id: string | null;
  status: string;
  outcome: string | null;
  attempt_count: number;
  call_id: string | null;
  updated_at: Date;
}

export class LeadWatchRepository {
  constructor(private readonly db: Queryable) {}

  /** The current state of these leads (primary-key lookups, one statement). */
  async states(ids: readonly string[]): Promise<LeadState[]> {
    const { rows } = await this.db.query<LeadState>(
      `SELECT id, reseller_id, merchant_id, status, outcome, attempt_count, call_id, updated_at FROM leads WHERE id = ANY($1::text[])`,
      [ids],
      { prepare: true },
    );
    return rows;
  }

  /** Leads being called now in a scope (`scope` over alias `l`, its values in `params`). */
  async processing(scope: string, params: unknown[]): Promise<number> {
    const { rows } = await this.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM leads l WHERE l.status = 'PROCESSING' AND ${scope}`, params);
    return rows[0]!.n;
  }
}

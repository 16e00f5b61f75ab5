import type { Queryable } from '../db/index.js';
import { LEADS_CHANNEL, type LeadRow } from '../lifecycle/index.js';

export type { LeadRow } from '../lifecycle/index.js';

/** A lead ready to insert; `due_in_seconds` null means it is never due (no number to dial). */
export interface NewLead {
  id: string;
  reseller_id: string;
  merchant_id: string | null;
  template_id: string;
  template_name: string;
  request_id: string;
  execution_mode: string;
  is_playground: boolean;
  configurations_override: Record<string, unknown> | null;
  payload: Record<string, unknown>;
  due_in_seconds: number | null;
  /** The campaign it joins, if any. */
  campaign_id?: string | null;
}

export class LeadsRepository {
  constructor(private readonly db: Queryable) {}

  /**
   * Inserts every lead in one statement (one round trip, all or nothing), due `due_in_seconds`
   * after its creation.
   */
  async insertMany(leads: NewLead[]): Promise<void> {
    if (leads.length === 0) return;
    // One statement: the rows, and a NOTIFY for idle schedulers when some lead is due at once
    // (delivered on commit, so never before the rows are visible).
    await this.db.query(
      `WITH inserted AS (
         INSERT INTO leads (id, reseller_id, merchant_id, template_id, template_name, request_id, execution_mode,
                            is_playground, configurations_override, payload, next_attempt_at, campaign_id)
         SELECT x.id, x.reseller_id, x.merchant_id, x.template_id, x.template_name, x.request_id, x.execution_mode,
                x.is_playground, x.configurations_override, x.payload,
                CASE WHEN x.due_in_seconds IS NULL THEN NULL ELSE now() + x.due_in_seconds * interval '1 second' END, x.campaign_id
         FROM jsonb_to_recordset($1::jsonb) AS x (
           id text, reseller_id text, merchant_id text, template_id text, template_name text, request_id text,
           execution_mode text, is_playground boolean, configurations_override jsonb, payload jsonb, due_in_seconds integer, campaign_id text)
         RETURNING 1)
       SELECT (SELECT count(*) FROM inserted) AS n, CASE WHEN $2 THEN pg_notify('${LEADS_CHANNEL}', '') END AS notified`,
      [JSON.stringify(leads), leads.some((l) => l.due_in_seconds === 0)],
      { prepare: true },
    );
  }

  /** `where` is built by the service from scope and filters, over alias `l`. Newest first. */
  async list(where: string, params: unknown[], limit: number, offset: number): Promise<{ rows: LeadRow[]; total: number }> {
    const total = await this.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM leads l WHERE ${where}`, params);
    const { rows } = await this.db.query<LeadRow>(
      `SELECT l.* FROM leads l WHERE ${where} ORDER BY l.created_at DESC, l.id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, limit, offset],
    );
    return { rows, total: total.rows[0]!.n };
  }
}

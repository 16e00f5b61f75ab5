import type { Queryable } from '../db/index.js';

export interface LeadRow {
  id: string;
  reseller_id: string;
  merchant_id: string | null;
  template_id: string;
  template_name: string;
  request_id: string;
  status: 'BACKLOG' | 'PROCESSING' | 'RETRY' | 'FINISHED';
  outcome: string | null;
  attempt_count: number;
  call_id: string | null;
  call_initiated_time: Date | null;
  call_end_time: Date | null;
  duration_seconds: number | null;
  recording_url: string | null;
  /** numeric: text from the driver. */
  cost: string | number | null;
  sentiment: number | null;
  provider: string | null;
  execution_mode: string;
  call_direction: string;
  outbound_number_id: string | null;
  trace_scores: Record<string, number>;
  payload: Record<string, unknown>;
  meta_data: Record<string, unknown>;
  is_playground: boolean;
  configurations_override: Record<string, unknown> | null;
  cancellation_reason: string | null;
  next_attempt_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

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
}

export type AbortOutcome = { id: string; aborted: true } | { id: string; aborted: false; status: LeadRow['status'] | null; outcome: string | null };

/** NOTIFY channel that tells idle schedulers new leads were queued. */
export const LEADS_CHANNEL = 'dialer_leads';

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
                            is_playground, configurations_override, payload, next_attempt_at)
         SELECT x.id, x.reseller_id, x.merchant_id, x.template_id, x.template_name, x.request_id, x.execution_mode,
                x.is_playground, x.configurations_override, x.payload,
                CASE WHEN x.due_in_seconds IS NULL THEN NULL ELSE now() + x.due_in_seconds * interval '1 second' END
         FROM jsonb_to_recordset($1::jsonb) AS x (
           id text, reseller_id text, merchant_id text, template_id text, template_name text, request_id text,
           execution_mode text, is_playground boolean, configurations_override jsonb, payload jsonb, due_in_seconds integer)
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

  /**
   * Aborts the leads of `requests` that are BACKLOG or RETRY, in one UPDATE: a lead a scheduler is
   * claiming at the same moment is row-locked, so the UPDATE waits for the claim and then finds it
   * PROCESSING; a lead aborted first is FINISHED before any claim can see it. Never both.
   * `scope` is a condition over alias `l` with its params after $1.
   */
  async abort(
    requests: { lead_id: string; cancellation_reason: string }[],
    scope: string,
    scopeParams: unknown[],
    onAborted: (leadId: string) => Promise<unknown> = async () => {},
  ): Promise<AbortOutcome[]> {
    const params = [JSON.stringify(requests), ...scopeParams];
    const done = await this.db.query<{ id: string }>(
      `UPDATE leads AS l SET status = 'FINISHED', outcome = 'aborted', cancellation_reason = r.cancellation_reason,
              next_attempt_at = NULL, locked_by = NULL, locked_until = NULL, updated_at = now()
       FROM jsonb_to_recordset($1::jsonb) AS r (lead_id text, cancellation_reason text)
       WHERE l.id = r.lead_id AND l.status IN ('BACKLOG', 'RETRY') AND ${scope}
       RETURNING l.id`,
      params,
    );
    const aborted = new Set(done.rows.map((r) => r.id));
    for (const id of aborted) await onAborted(id);
    const rest = requests.map((r) => r.lead_id).filter((id) => !aborted.has(id));
    const found = new Map<string, { status: LeadRow['status']; outcome: string | null }>();
    if (rest.length > 0) {
      const { rows } = await this.db.query<{ id: string; status: LeadRow['status']; outcome: string | null }>(
        `SELECT l.id, l.status, l.outcome FROM leads l WHERE l.id = ANY($1::text[]) AND ${scope}`,
        [rest, ...scopeParams],
      );
      for (const row of rows) found.set(row.id, row);
    }
    return requests.map(({ lead_id: id }) =>
      aborted.has(id) ? { id, aborted: true as const } : { id, aborted: false as const, status: found.get(id)?.status ?? null, outcome: found.get(id)?.outcome ?? null },
    );
  }
}

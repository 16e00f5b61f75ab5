/**
 * What is happening now, in a caller's scope: calls in progress, the cost of the day, recent
 * failures. Each read is small and served by an index (migration 020), however many leads there are.
 */
import type { Queryable } from '../db/index.js';

export interface LiveCallRow {
  lead_id: string;
  request_id: string;
  template: string;
  execution_mode: string;
  merchant_id: string | null;
  call_id: string | null;
  provider: string | null;
  to_number: string | null;
  from_number: string | null;
  attempt: number;
  started_at: Date | null;
}

export interface FailedDeliveryRow {
  id: string;
  lead_id: string;
  request_id: string;
  kind: string;
  url: string;
  attempts: number;
  updated_at: Date;
  status_code: number | null;
  error: string | null;
}

export interface FailedLeadRow {
  id: string;
  request_id: string;
  template: string;
  outcome: string;
  updated_at: Date;
  error: string | null;
}

/** Leads of test modes and playground runs are left out of the day's figures, as analytics leaves them out. */
const COUNTED = `l.execution_mode NOT IN ('TELEPHONY_TEST', 'WEBRTC_TEST') AND NOT l.is_playground`;

export class OverviewRepository {
  constructor(private readonly db: Queryable) {}

  /** `scope` is a condition over alias `l` whose values are `params`. */
  async liveCalls(scope: string, params: unknown[], limit: number): Promise<{ rows: LiveCallRow[]; total: number }> {
    const { rows } = await this.db.query<LiveCallRow & { total: number }>(
      `SELECT l.id AS lead_id, l.request_id, l.template_name AS template, l.execution_mode, l.merchant_id, l.call_id,
              coalesce(a.provider, l.provider) AS provider, l.payload->>'customer_mobile_number' AS to_number, n.phone_number AS from_number,
              l.attempt_count AS attempt, coalesce(a.started_at, l.call_initiated_time) AS started_at, count(*) OVER ()::int AS total
       FROM leads l
       LEFT JOIN call_attempts a ON a.lead_id = l.id AND a.attempt = l.attempt_count
       LEFT JOIN outbound_numbers n ON n.id = l.outbound_number_id
       WHERE l.status = 'PROCESSING' AND ${scope}
       ORDER BY started_at DESC NULLS LAST, l.id
       LIMIT $${params.length + 1}`,
      [...params, limit],
    );
    return { rows: rows.map(({ total: _t, ...r }) => r), total: rows[0]?.total ?? 0 };
  }

  async costSince(scope: string, params: unknown[], since: Date): Promise<number> {
    const { rows } = await this.db.query<{ cost: string | number | null }>(
      `SELECT sum(l.cost) AS cost FROM leads l WHERE l.cost IS NOT NULL AND l.call_end_time >= $${params.length + 1} AND ${COUNTED} AND ${scope}`,
      [...params, since],
    );
    return Number(rows[0]?.cost ?? 0);
  }

  async failedDeliveries(scope: string, params: unknown[], limit: number): Promise<FailedDeliveryRow[]> {
    const { rows } = await this.db.query<FailedDeliveryRow>(
      `SELECT d.id, d.lead_id, l.request_id, d.kind, d.url, d.attempts, d.updated_at, last.status_code, last.error
       FROM webhook_deliveries d
       JOIN leads l ON l.id = d.lead_id
       LEFT JOIN LATERAL (SELECT a.status_code, a.error FROM webhook_attempts a WHERE a.delivery_id = d.id ORDER BY a.attempt DESC LIMIT 1) last ON true
       WHERE d.status = 'failed' AND ${scope}
       ORDER BY d.updated_at DESC
       LIMIT $${params.length + 1}`,
      [...params, limit],
    );
    return rows;
  }

  async failedLeads(scope: string, params: unknown[], limit: number): Promise<FailedLeadRow[]> {
    const { rows } = await this.db.query<FailedLeadRow>(
      `SELECT l.id, l.request_id, l.template_name AS template, l.outcome, l.updated_at,
              coalesce(l.meta_data->'last_error'->>'message', l.meta_data->'errors'->>0,
                       (SELECT concat('pre-check ', r->>'name', ': ', r->>'result', coalesce(' (' || (r->>'error') || ')', ''))
                        FROM jsonb_array_elements(CASE WHEN jsonb_typeof(l.meta_data->'pre_check_results') = 'array'
                                                       THEN l.meta_data->'pre_check_results' ELSE '[]' END) r
                        WHERE r->>'action' = 'skip' LIMIT 1)) AS error
       FROM leads l
       WHERE l.outcome IN ('error', 'PRECHECK_FAILED') AND ${scope}
       ORDER BY l.updated_at DESC
       LIMIT $${params.length + 1}`,
      [...params, limit],
    );
    return rows;
  }
}

/** The campaigns' SQL: the campaign rows, and what they read of their leads (progress, results). */
import type { Queryable } from '../db/index.js';
import { campaignOpenSql, NOT_REACHED_OUTCOMES } from '../lifecycle/index.js';
import type { CampaignStatus } from './schema.js';

export interface CampaignRow {
  id: string;
  reseller_id: string;
  merchant_id: string | null;
  template_id: string;
  template_name: string;
  name: string;
  state: 'active' | 'paused' | 'stopped';
  paused_reason: string | null;
  max_concurrent_calls: number | null;
  max_calls_per_second: number | null;
  start_at: Date | null;
  end_at: Date | null;
  breaker_failure_ratio: number | null;
  breaker_window_seconds: number | null;
  breaker_min_calls: number | null;
  stopped_at: Date | null;
  created_at: Date;
  updated_at: Date;
  /** Read with the row: see STATUS_SQL. */
  status: CampaignStatus;
}

export type NewCampaign = Omit<CampaignRow, 'state' | 'paused_reason' | 'stopped_at' | 'created_at' | 'updated_at' | 'status'>;

export interface ProgressRow {
  total: number;
  queued: number;
  in_progress: number;
  finished: number;
  by_outcome: Record<string, number> | null;
  dialled_finished: number;
  reached: number;
  avg_duration: number | null;
  cost: string | number | null;
  finished_recently: number;
  now: Date;
}

/** A lead as a campaign's results show it. */
export interface ResultLeadRow {
  id: string;
  request_id: string;
  number: string | null;
  status: string;
  outcome: string | null;
  attempt_count: number;
  duration_seconds: number | null;
  cost: string | number | null;
  analysis: Record<string, unknown> | null;
  call_id: string | null;
  recording_url: string | null;
}

/**
 * A campaign's status, read from what a person decided (`state`), its dates and its leads: stopped
 * and paused as set; completed past its end, or when it has leads and none is queued or in progress;
 * scheduled before its start; running otherwise (a campaign without leads yet is running).
 */
const STATUS_SQL = `CASE
  WHEN c.state = 'stopped' THEN 'stopped'
  WHEN c.state = 'paused' THEN 'paused'
  WHEN c.end_at IS NOT NULL AND c.end_at <= now() THEN 'completed'
  WHEN EXISTS (SELECT 1 FROM leads l WHERE l.campaign_id = c.id)
       AND NOT EXISTS (SELECT 1 FROM leads l WHERE l.campaign_id = c.id AND l.status IN ('BACKLOG', 'RETRY', 'PROCESSING')) THEN 'completed'
  WHEN c.start_at IS NOT NULL AND c.start_at > now() THEN 'scheduled'
  ELSE 'running' END`;

const COLUMNS = `c.id, c.reseller_id, c.merchant_id, c.template_id, c.template_name, c.name, c.state, c.paused_reason, c.max_concurrent_calls,
  c.max_calls_per_second, c.start_at, c.end_at, c.breaker_failure_ratio, c.breaker_window_seconds, c.breaker_min_calls, c.stopped_at,
  c.created_at, c.updated_at, ${STATUS_SQL} AS status`;

export class CampaignsRepository {
  constructor(private readonly db: Queryable) {}

  async insert(c: NewCampaign): Promise<void> {
    await this.db.query(
      `INSERT INTO campaigns (id, reseller_id, merchant_id, template_id, template_name, name, max_concurrent_calls, max_calls_per_second,
                              start_at, end_at, breaker_failure_ratio, breaker_window_seconds, breaker_min_calls)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
      [c.id, c.reseller_id, c.merchant_id, c.template_id, c.template_name, c.name, c.max_concurrent_calls, c.max_calls_per_second,
        c.start_at, c.end_at, c.breaker_failure_ratio, c.breaker_window_seconds, c.breaker_min_calls],
    );
  }

  /** The campaign, locked for a change of its state when `forUpdate`. */
  async byId(id: string, forUpdate = false): Promise<CampaignRow | undefined> {
    const { rows } = await this.db.query<CampaignRow>(`SELECT ${COLUMNS} FROM campaigns c WHERE c.id = $1${forUpdate ? ' FOR NO KEY UPDATE OF c' : ''}`, [id]);
    return rows[0];
  }

  /** `where` is over alias `c`. Newest first. */
  async list(where: string, params: unknown[], limit: number, offset: number): Promise<{ rows: CampaignRow[]; total: number }> {
    const total = await this.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM campaigns c WHERE ${where}`, params);
    const { rows } = await this.db.query<CampaignRow>(
      `SELECT ${COLUMNS} FROM campaigns c WHERE ${where} ORDER BY c.created_at DESC, c.id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, limit, offset],
    );
    return { rows, total: total.rows[0]!.n };
  }

  async setState(id: string, state: CampaignRow['state'], pausedReason: string | null): Promise<void> {
    await this.db.query(
      `UPDATE campaigns SET state = $2, paused_reason = $3, stopped_at = CASE WHEN $2 = 'stopped' THEN now() ELSE stopped_at END,
              breaker_since = CASE WHEN $2 = 'active' THEN now() ELSE breaker_since END, updated_at = now() WHERE id = $1`,
      [id, state, pausedReason],
    );
  }

  /** Up to `limit` of the campaign's waiting leads (BACKLOG or RETRY), first due first. */
  async waitingLeads(id: string, limit: number): Promise<string[]> {
    const { rows } = await this.db.query<{ id: string }>(
      // In leads_due_campaign_idx's order: read as far as the limit, never sorted whole.
      `SELECT id FROM leads WHERE campaign_id = $1 AND status IN ('BACKLOG', 'RETRY') ORDER BY campaign_id, next_attempt_at, id LIMIT $2`,
      [id, limit],
    );
    return rows.map((r) => r.id);
  }

  /**
   * The campaign's progress, all of it from one reading of its leads (one statement: one snapshot),
   * so the counts add up to the total whatever changes meanwhile.
   */
  async progress(id: string): Promise<ProgressRow> {
    const { rows } = await this.db.query<ProgressRow>(
      `WITH l AS MATERIALIZED (
         SELECT status, outcome, attempt_count, duration_seconds, cost, updated_at FROM leads WHERE campaign_id = $1)
       SELECT count(*)::int AS total,
              count(*) FILTER (WHERE status IN ('BACKLOG', 'RETRY'))::int AS queued,
              count(*) FILTER (WHERE status = 'PROCESSING')::int AS in_progress,
              count(*) FILTER (WHERE status = 'FINISHED')::int AS finished,
              (SELECT jsonb_object_agg(o, n) FROM (SELECT coalesce(outcome, 'completed') AS o, count(*)::int AS n FROM l WHERE status = 'FINISHED' GROUP BY 1) AS b) AS by_outcome,
              count(*) FILTER (WHERE status = 'FINISHED' AND attempt_count > 0)::int AS dialled_finished,
              count(*) FILTER (WHERE status = 'FINISHED' AND attempt_count > 0 AND NOT (coalesce(outcome, 'completed') = ANY($2::text[])))::int AS reached,
              avg(duration_seconds) FILTER (WHERE status = 'FINISHED' AND duration_seconds IS NOT NULL)::float8 AS avg_duration,
              coalesce(sum(cost), 0) AS cost,
              count(*) FILTER (WHERE status = 'FINISHED' AND updated_at > now() - interval '10 minutes')::int AS finished_recently,
              now() AS now
       FROM l`,
      [id, NOT_REACHED_OUTCOMES],
    );
    return rows[0]!;
  }

  /** A page of the campaign's leads in push order, as its results show them. */
  async results(id: string, limit: number, offset: number): Promise<{ rows: ResultLeadRow[]; total: number }> {
    const total = await this.db.query<{ n: number }>('SELECT count(*)::int AS n FROM leads WHERE campaign_id = $1', [id]);
    const { rows } = await this.db.query<ResultLeadRow>(
      `SELECT id, request_id, payload->>'customer_mobile_number' AS number, status, outcome, attempt_count, duration_seconds, cost,
              meta_data->'analysis' AS analysis, call_id, recording_url
       FROM leads WHERE campaign_id = $1 ORDER BY created_at, id LIMIT $2 OFFSET $3`,
      [id, limit, offset],
    );
    return { rows, total: total.rows[0]!.n };
  }
}

/** What a lead's push needs to know of the campaign it names. */
export interface CampaignRef {
  id: string;
  reseller_id: string;
  merchant_id: string | null;
  template_id: string;
  state: CampaignRow['state'];
  /** Whether its end has passed. */
  ended: boolean;
}

/** The campaigns named by `ids` (those that exist), for pushes. */
export async function campaignRefs(q: Queryable, ids: readonly string[]): Promise<CampaignRef[]> {
  const { rows } = await q.query<CampaignRef>(
    `SELECT id, reseller_id, merchant_id, template_id, state, (end_at IS NOT NULL AND end_at <= now()) AS ended FROM campaigns WHERE id = ANY($1::text[])`,
    [ids],
  );
  return rows;
}

/**
 * Why a waiting lead of campaign `id` is not being called now, or null when the campaign is not
 * holding it: paused, stopped, scheduled (before start_at), ended (past end_at), at its cap of live
 * calls, or waiting for its pace.
 */
export async function campaignHold(q: Queryable, id: string): Promise<string | null> {
  const { rows } = await q.query<{ hold: string | null }>(
    `SELECT CASE
       WHEN c.state = 'paused' THEN 'campaign_paused'
       WHEN c.state = 'stopped' THEN 'campaign_stopped'
       WHEN c.start_at IS NOT NULL AND c.start_at > now() THEN 'campaign_scheduled'
       WHEN c.end_at IS NOT NULL AND c.end_at <= now() THEN 'campaign_ended'
       WHEN NOT ${campaignOpenSql('c')} THEN 'campaign_closed'
       WHEN c.max_concurrent_calls IS NOT NULL
            AND (SELECT count(*) FROM leads p WHERE p.campaign_id = c.id AND p.status = 'PROCESSING') >= c.max_concurrent_calls THEN 'campaign_cap'
       WHEN c.next_start_at IS NOT NULL AND c.next_start_at > now() THEN 'campaign_pace'
       END AS hold
     FROM campaigns c WHERE c.id = $1`,
    [id],
  );
  return rows[0]?.hold ?? null;
}

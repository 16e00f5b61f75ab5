/**
 * The webhooks feature's SQL: the delivery queue (queued in the transaction that finishes a lead,
 * taken with SKIP LOCKED and a lease, attempts recorded), the finished leads a notification is made
 * of, and a lead's deliveries for the read API.
 */
import { scopeCondition, type Principal } from '../auth/index.js';
import type { Queryable } from '../db/index.js';
import type { LeadRow } from '../lifecycle/index.js';

export interface Delivery {
  id: string;
  lead_id: string;
  kind: 'success' | 'failure' | 'service_callback';
  url: string;
  payload: Record<string, unknown>;
  attempts: number;
}

export interface NewDelivery {
  id: string;
  lead_id: string;
  url: string;
  kind: Delivery['kind'];
  payload: unknown;
}

/** What the reporting webhook's body is made of. */
export type FinishedLead = Pick<
  LeadRow,
  'id' | 'request_id' | 'status' | 'outcome' | 'attempt_count' | 'call_id' | 'recording_url' | 'call_end_time' | 'cancellation_reason' | 'payload' | 'meta_data'
>;

/** What the service callback's body is made of, with the configuration's endpoint. */
export type ConversationLead = Pick<
  LeadRow,
  | 'id' | 'request_id' | 'reseller_id' | 'merchant_id' | 'template_id' | 'template_name' | 'execution_mode' | 'provider' | 'status' | 'outcome'
  | 'attempt_count' | 'call_id' | 'call_initiated_time' | 'call_end_time' | 'duration_seconds' | 'recording_url' | 'cost' | 'sentiment'
  | 'trace_scores' | 'meta_data'
> & { callback_url: string | null };

/** A finished lead with what its notifications are made of, and which of them it gets. */
export type NotifiableLead = FinishedLead & ConversationLead & { reporting: boolean; conversation: boolean };

/** A delivery with its attempts, as GET /leads/{id}/webhooks shows it. */
export interface DeliveryRecord {
  id: string;
  url: string;
  kind: Delivery['kind'];
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  created_at: Date;
  delivered_at: Date | null;
  payload: Record<string, unknown>;
  attempt_log: { attempt: number; started_at: string; status_code: number | null; latency_ms: number; error: string | null }[];
  /** The delivery this one sends again (POST .../redeliver), if it is such a copy. */
  redelivery_of: string | null;
}

/** Whether the lead `l` asked for a reporting webhook (a string `reporting_webhook_url` in its payload). */
export const asksForReport = (l: string): string => `jsonb_typeof(${l}.payload->'reporting_webhook_url') = 'string'`;

/** Whether an attempt of the lead `l` was a conversation (the agent left `call_ended_by` in its metadata). */
export const conversed = (l: string): string => `${l}.meta_data ? 'call_ended_by'`;

export class WebhooksRepository {
  constructor(private readonly db: Queryable) {}

  /** Queues deliveries, in one statement however many. */
  async insert(deliveries: readonly NewDelivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    await this.db.query(
      `INSERT INTO webhook_deliveries (id, lead_id, url, kind, payload)
       SELECT id, lead_id, url, kind, payload FROM jsonb_to_recordset($1::jsonb) AS d (id text, lead_id text, url text, kind text, payload jsonb)`,
      [JSON.stringify(deliveries)],
    );
  }

  /**
   * Of these leads, in the order given, those a notification is made of, in one read: `reporting`
   * when the lead asked for a reporting webhook (a string `reporting_webhook_url`); `conversation`
   * when its last attempt was a conversation (the agent left `call_ended_by`) and the service
   * callback has an endpoint (the configuration's `service_callback_url`, or the deployment's when
   * `anyEndpoint`).
   */
  async notifiable(leadIds: readonly string[], anyEndpoint: boolean): Promise<NotifiableLead[]> {
    const { rows } = await this.db.query<NotifiableLead>(
      `SELECT * FROM (
         SELECT l.id, l.request_id, l.reseller_id, l.merchant_id, l.template_id, l.template_name, l.execution_mode, l.provider, l.status,
                l.outcome, l.attempt_count, l.call_id, l.call_initiated_time, l.call_end_time, l.duration_seconds, l.recording_url,
                l.cancellation_reason, l.cost, l.sentiment, l.trace_scores, l.payload, l.meta_data, c.service_callback_url AS callback_url,
                ${asksForReport('l')} AS reporting,
                ${conversed('l')} AND (c.service_callback_url IS NOT NULL OR $2::boolean) AS conversation
         FROM leads l LEFT JOIN configurations c ON c.reseller_id = l.reseller_id AND c.template_id = l.template_id
         WHERE l.id = ANY($1::text[])) AS n
       WHERE reporting OR conversation
       ORDER BY array_position($1::text[], id)`,
      [leadIds, anyEndpoint],
      { prepare: true },
    );
    return rows;
  }

  /** Takes up to `limit` due deliveries (oldest first) with a lease; a lapsed lease (its dispatcher died) makes one due again. */
  async takeDue(workerId: string, leaseSeconds: number, limit: number): Promise<Delivery[]> {
    const { rows } = await this.db.query<Delivery>(
      `UPDATE webhook_deliveries SET locked_by = $1, locked_until = now() + make_interval(secs => $2), updated_at = now()
       WHERE id IN (SELECT id FROM webhook_deliveries
                    WHERE status = 'pending' AND (locked_until IS NULL OR locked_until < now())
                    ORDER BY created_at LIMIT $3 FOR UPDATE SKIP LOCKED)
       RETURNING id, lead_id, kind, url, payload, attempts`,
      [workerId, leaseSeconds, limit],
      // Every dispatcher polls with it: parsed and planned once per connection.
      { prepare: true },
    );
    return rows;
  }

  /**
   * Records attempt number `attempt` and its result. Guarded by the attempt count: only the holder
   * of the previous count may record it (a dispatcher that stalled past its lease records nothing).
   * Returns whether it was recorded. Call it in a transaction.
   */
  async recordAttempt(
    deliveryId: string,
    attempt: { number: number; startedAt: Date; statusCode: number | null; latencyMs: number; error: string | null; delivered: boolean; final: boolean },
  ): Promise<boolean> {
    const updated = await this.db.query(
      `UPDATE webhook_deliveries SET attempts = $2, updated_at = now(),
              status = CASE WHEN $3 THEN 'delivered' WHEN $4 THEN 'failed' ELSE status END,
              delivered_at = CASE WHEN $3 THEN now() END,
              locked_by = CASE WHEN $4 THEN NULL ELSE locked_by END,
              locked_until = CASE WHEN $4 THEN NULL ELSE locked_until END
       WHERE id = $1 AND status = 'pending' AND attempts = $2 - 1
       RETURNING id`,
      [deliveryId, attempt.number, attempt.delivered, attempt.final],
    );
    if (updated.rows.length === 0) return false;
    await this.db.query(
      `INSERT INTO webhook_attempts (delivery_id, attempt, started_at, status_code, latency_ms, error) VALUES ($1, $2, $3, $4, $5, $6)`,
      [deliveryId, attempt.number, attempt.startedAt, attempt.statusCode, attempt.latencyMs, attempt.error],
    );
    return true;
  }

  /** Whether the lead exists inside the caller's scope. */
  async leadInScope(caller: Principal, leadId: string): Promise<boolean> {
    const params: unknown[] = [leadId];
    const scope = scopeCondition(caller, { reseller: 'l.reseller_id', merchant: 'l.merchant_id' }, params);
    const { rows } = await this.db.query(`SELECT 1 FROM leads l WHERE l.id = $1 AND ${scope}`, params);
    return rows.length > 0;
  }

  /** A lead's deliveries, oldest first, each with its attempts. */
  async deliveriesOfLead(leadId: string): Promise<DeliveryRecord[]> {
    const { rows } = await this.db.query<DeliveryRecord>(
      `SELECT d.id, d.url, d.kind, d.status, d.attempts, d.created_at, d.delivered_at, d.payload, d.redelivery_of,
              coalesce((SELECT jsonb_agg(jsonb_build_object('attempt', a.attempt, 'started_at', a.started_at, 'status_code', a.status_code,
                                                    'latency_ms', a.latency_ms, 'error', a.error) ORDER BY a.attempt)
                        FROM webhook_attempts a WHERE a.delivery_id = d.id), '[]'::jsonb) AS attempt_log
       FROM webhook_deliveries d WHERE d.lead_id = $1 ORDER BY d.created_at`,
      [leadId],
    );
    return rows;
  }

  /**
   * Queues a copy of a finished delivery of `leadId` (same URL, kind and body) to be sent again
   * with fresh attempts. Undefined when there is no such delivery; `pending` when it is still
   * being delivered (nothing is queued then).
   */
  async redeliver(id: string, leadId: string, deliveryId: string): Promise<'missing' | 'pending' | DeliveryRecord> {
    const { rows } = await this.db.query<{ id: string }>(
      `INSERT INTO webhook_deliveries (id, lead_id, url, kind, payload, redelivery_of)
       SELECT $1, d.lead_id, d.url, d.kind, d.payload, d.id FROM webhook_deliveries d
       WHERE d.id = $3 AND d.lead_id = $2 AND d.status <> 'pending'
       RETURNING id`,
      [id, leadId, deliveryId],
    );
    if (rows.length === 0) {
      const { rows: existing } = await this.db.query<{ status: string }>('SELECT status FROM webhook_deliveries WHERE id = $1 AND lead_id = $2', [deliveryId, leadId]);
      return existing[0] ? 'pending' : 'missing';
    }
    return (await this.deliveriesOfLead(leadId)).find((d) => d.id === id)!;
  }
}

/**
 * The webhooks feature's SQL: the delivery queue (queued in the transaction that finishes a lead,
 * taken with SKIP LOCKED and a lease, attempts recorded), the finished leads a notification is made
 * of, and a lead's deliveries for the read API.
 */
import { scopeCondition, type Principal } from '../auth/index.js';
import type { Queryable } from '../db/index.js';
import type { LeadRow } from '../lifecycle/index.js';

/** A delivery as a dispatcher takes it: with the number of the attempt it claimed. */
export interface Delivery {
  id: string;
  /** `X-Dialer-Delivery-Id`: the delivery's own id, or the first one's for a copy sent again by hand. */
  notification_id: string;
  lead_id: string;
  kind: 'success' | 'failure' | 'service_callback';
  url: string;
  payload: Record<string, unknown>;
  attempt: number;
  /** The URL's host and port: the dispatcher bounds the deliveries in flight to each. */
  receiver: string;
  created_at: Date;
}

/** What a takeover logs for the attempt of a worker that stopped (crashed) before recording an answer. */
export const LOST_ATTEMPT = 'no answer recorded: the worker stopped during this attempt';

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
  /** While pending: when its next attempt is due. */
  next_attempt_at: Date | null;
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

  /**
   * Claims the next attempt of up to `limit` due deliveries (the longest waiting first): counts the
   * attempt and leases it to `workerId` for `leaseSeconds` (one attempt's timeout and a margin). At
   * most `perReceiver` per receiver are taken, less the deliveries to it the worker has in hand
   * (`busy`). A lapsed lease makes a delivery due again: its unanswered attempt is logged as lost,
   * and the next one gets the next number.
   */
  async takeDue(workerId: string, leaseSeconds: number, limit: number, perReceiver: number, busy: ReadonlyMap<string, number>): Promise<Delivery[]> {
    const { rows } = await this.db.query<Delivery>(
      `WITH busy AS (
         SELECT * FROM jsonb_to_recordset($5::jsonb) AS b (receiver text, n integer)
       ), due AS (
         SELECT d.id, d.next_attempt_at, d.created_at,
                row_number() OVER (PARTITION BY coalesce(d.receiver, '') ORDER BY d.next_attempt_at, d.created_at) + coalesce(b.n, 0) AS place
         FROM webhook_deliveries d LEFT JOIN busy b ON b.receiver = coalesce(d.receiver, '')
         WHERE d.status = 'pending' AND d.next_attempt_at <= now() AND (d.locked_until IS NULL OR d.locked_until < now())
       ), locked AS (
         SELECT d.id, d.locked_by AS lost_by, d.attempts AS lost_attempt, d.updated_at AS lost_started_at FROM webhook_deliveries d
         WHERE d.id IN (SELECT id FROM due WHERE place <= $4 ORDER BY next_attempt_at, created_at LIMIT $3)
           AND d.status = 'pending' AND (d.locked_until IS NULL OR d.locked_until < now())
         FOR UPDATE SKIP LOCKED
       ), taken AS (
         UPDATE webhook_deliveries d SET attempts = d.attempts + 1, locked_by = $1, locked_until = now() + make_interval(secs => $2), updated_at = now()
         FROM locked l WHERE d.id = l.id
         RETURNING d.id, coalesce(d.notification_id, d.id) AS notification_id, d.lead_id, d.kind, d.url, d.payload, d.attempts AS attempt,
                   coalesce(d.receiver, '') AS receiver, d.created_at, l.lost_by, l.lost_attempt, l.lost_started_at
       ), lost AS (
         INSERT INTO webhook_attempts (delivery_id, attempt, started_at, status_code, latency_ms, error)
         SELECT id, lost_attempt, lost_started_at, NULL, 0, '${LOST_ATTEMPT}' FROM taken WHERE lost_by IS NOT NULL AND lost_attempt > 0
         ON CONFLICT DO NOTHING
       )
       SELECT id, notification_id, lead_id, kind, url, payload, attempt, receiver, created_at FROM taken ORDER BY created_at`,
      [workerId, leaseSeconds, limit, perReceiver, JSON.stringify([...busy].map(([receiver, n]) => ({ receiver, n })))],
      // Every dispatcher polls with it: parsed and planned once per connection.
      { prepare: true },
    );
    return rows;
  }

  /**
   * Records attempt number `attempt` and what follows it. The attempt itself is always logged (a
   * late answer replaces the "lost" note of a takeover). The delivery changes only while the
   * attempt is its latest and `workerId` holds it, except that a success always counts: a
   * dispatcher that stalled past its lease changes nothing else. `continueLeaseSeconds` (a retry due
   * at once): the same worker claims the next attempt in the same step. Returns whether the
   * delivery changed, and the number of the attempt claimed. Call it in a transaction.
   */
  async recordAttempt(
    deliveryId: string,
    workerId: string,
    attempt: { number: number; startedAt: Date; statusCode: number | null; latencyMs: number; error: string | null },
    next: { kind: 'delivered' } | { kind: 'failed' } | { kind: 'retry'; delayMs: number; continueLeaseSeconds?: number },
  ): Promise<{ recorded: boolean; nextAttempt?: number }> {
    await this.db.query(
      `INSERT INTO webhook_attempts (delivery_id, attempt, started_at, status_code, latency_ms, error) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (delivery_id, attempt) DO UPDATE SET started_at = excluded.started_at, status_code = excluded.status_code,
                                                        latency_ms = excluded.latency_ms, error = excluded.error`,
      [deliveryId, attempt.number, attempt.startedAt, attempt.statusCode, attempt.latencyMs, attempt.error],
    );
    const continueLease = next.kind === 'retry' ? (next.continueLeaseSeconds ?? null) : null;
    const { rows } = await this.db.query<{ attempts: number }>(
      `UPDATE webhook_deliveries SET updated_at = now(),
              status = CASE $3::text WHEN 'delivered' THEN 'delivered' WHEN 'failed' THEN 'failed' ELSE 'pending' END,
              delivered_at = CASE WHEN $3::text = 'delivered' THEN now() END,
              next_attempt_at = now() + make_interval(secs => $4::double precision / 1000),
              attempts = attempts + CASE WHEN $5::double precision IS NULL THEN 0 ELSE 1 END,
              locked_by = CASE WHEN $5::double precision IS NULL THEN NULL ELSE locked_by END,
              locked_until = CASE WHEN $5::double precision IS NULL THEN NULL ELSE now() + make_interval(secs => $5::double precision) END
       WHERE id = $1 AND (status = 'pending' AND attempts = $2 AND locked_by = $6
                          OR $3::text = 'delivered' AND status IN ('pending', 'failed'))
       RETURNING attempts`,
      [deliveryId, attempt.number, next.kind, next.kind === 'retry' ? next.delayMs : 0, continueLease, workerId],
    );
    if (rows.length === 0) return { recorded: false };
    return continueLease === null ? { recorded: true } : { recorded: true, nextAttempt: rows[0]!.attempts };
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
              CASE WHEN d.status = 'pending' THEN d.next_attempt_at END AS next_attempt_at,
              coalesce((SELECT jsonb_agg(jsonb_build_object('attempt', a.attempt, 'started_at', a.started_at, 'status_code', a.status_code,
                                                    'latency_ms', a.latency_ms, 'error', a.error) ORDER BY a.attempt)
                        FROM webhook_attempts a WHERE a.delivery_id = d.id), '[]'::jsonb) AS attempt_log
       FROM webhook_deliveries d WHERE d.lead_id = $1 ORDER BY d.created_at`,
      [leadId],
    );
    return rows;
  }

  /**
   * Queues a copy of a finished delivery of `leadId` (same URL, kind, body and `X-Dialer-Delivery-Id`,
   * so a receiver can tell it has seen it) to be sent again with fresh attempts. `missing` when there
   * is no such delivery; `pending` when it is still being delivered (nothing is queued then).
   */
  async redeliver(id: string, leadId: string, deliveryId: string): Promise<'missing' | 'pending' | DeliveryRecord> {
    const { rows } = await this.db.query<{ id: string }>(
      `INSERT INTO webhook_deliveries (id, lead_id, url, kind, payload, redelivery_of, notification_id)
       SELECT $1, d.lead_id, d.url, d.kind, d.payload, d.id, coalesce(d.notification_id, d.id) FROM webhook_deliveries d
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

import { Type } from 'typebox';
import { scopeCondition } from '../auth/index.js';
import type { Db } from '../db/index.js';
import type { App } from '../http/index.js';
import { IdParams, NullableTimestamp, problems, Timestamp } from '../http/index.js';
import { notFound } from '../lib/errors.js';
import { iso, isoRequired } from '../lib/time.js';

const Delivery = Type.Object({
  id: Type.String(),
  url: Type.String(),
  kind: Type.Union([Type.Literal('success'), Type.Literal('failure'), Type.Literal('service_callback')], {
    description: 'success / failure: the reporting webhook (spec 6.1); service_callback: the final conversation state (spec 6.2)',
  }),
  status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
  attempts: Type.Integer(),
  created_at: Timestamp,
  delivered_at: NullableTimestamp,
  payload: Type.Object({}, { additionalProperties: true }),
  attempt_log: Type.Array(
    Type.Object({
      attempt: Type.Integer(),
      started_at: Timestamp,
      status_code: Type.Union([Type.Integer(), Type.Null()]),
      latency_ms: Type.Integer(),
      error: Type.Union([Type.String(), Type.Null()]),
    }),
  ),
});

interface Row {
  id: string;
  url: string;
  kind: 'success' | 'failure' | 'service_callback';
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  created_at: Date;
  delivered_at: Date | null;
  payload: Record<string, unknown>;
  attempt_log: { attempt: number; started_at: string; status_code: number | null; latency_ms: number; error: string | null }[];
}

/** GET /leads/{id}/webhooks: the reporting webhook deliveries of a lead, with every attempt. */
export function registerWebhookRoutes(app: App, db: Db): void {
  app.get('/leads/:id/webhooks', {
    config: { permission: ['leads', 'read'] },
    schema: {
      tags: ['leads'],
      summary: "The lead's reporting webhook and service callback deliveries and their attempts (status code, latency, error)",
      params: IdParams,
      response: { 200: Type.Object({ data: Type.Array(Delivery) }), ...problems(401, 403, 404) },
    },
    handler: async (request) => {
      const params: unknown[] = [request.params.id];
      const scope = scopeCondition(request.principal, { reseller: 'l.reseller_id', merchant: 'l.merchant_id' }, params);
      const lead = await db.query(`SELECT 1 FROM leads l WHERE l.id = $1 AND ${scope}`, params);
      if (lead.rows.length === 0) throw notFound(`Lead ${request.params.id}`);
      const { rows } = await db.query<Row>(
        `SELECT d.id, d.url, d.kind, d.status, d.attempts, d.created_at, d.delivered_at, d.payload,
                coalesce((SELECT jsonb_agg(jsonb_build_object('attempt', a.attempt, 'started_at', a.started_at, 'status_code', a.status_code,
                                                      'latency_ms', a.latency_ms, 'error', a.error) ORDER BY a.attempt)
                          FROM webhook_attempts a WHERE a.delivery_id = d.id), '[]'::jsonb) AS attempt_log
         FROM webhook_deliveries d WHERE d.lead_id = $1 ORDER BY d.created_at`,
        [request.params.id],
      );
      return {
        data: rows.map((r) => ({
          ...r,
          created_at: isoRequired(r.created_at),
          delivered_at: iso(r.delivered_at),
          attempt_log: r.attempt_log.map((a) => ({ ...a, started_at: isoRequired(a.started_at) })),
        })),
      };
    },
  });
}

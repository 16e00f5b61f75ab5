import { Type } from 'typebox';
import type { Db } from '../db/index.js';
import type { App } from '../http/index.js';
import { IdParams, NullableTimestamp, problems, Timestamp } from '../http/index.js';
import { iso, isoRequired } from '../lib/time.js';
import { WebhooksService } from './service.js';

const Delivery = Type.Object({
  id: Type.String(),
  url: Type.String(),
  kind: Type.Union([Type.Literal('success'), Type.Literal('failure'), Type.Literal('service_callback')], {
    description: 'success / failure: the reporting webhook; service_callback: the final conversation state',
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

/** GET /leads/{id}/webhooks: the reporting webhook deliveries of a lead, with every attempt. */
export function registerWebhookRoutes(app: App, db: Db): void {
  const service = new WebhooksService(db);
  app.get('/leads/:id/webhooks', {
    config: { permission: ['leads', 'read'] },
    schema: {
      tags: ['leads'],
      summary: "The lead's reporting webhook and service callback deliveries and their attempts (status code, latency, error)",
      params: IdParams,
      response: { 200: Type.Object({ data: Type.Array(Delivery) }), ...problems(401, 403, 404) },
    },
    handler: async (request) => {
      const rows = await service.deliveriesOfLead(request.principal, request.params.id);
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

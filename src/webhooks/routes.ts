import { Type } from 'typebox';
import type { Db } from '../db/index.js';
import type { App } from '../http/index.js';
import { Id, IdParams, NullableTimestamp, problems, Timestamp } from '../http/index.js';
import type { DeliveryRecord } from './repository.js';
import { iso, isoRequired } from '../lib/time.js';
import { WebhooksService } from './service.js';

export const Delivery = Type.Object({
  id: Type.String(),
  url: Type.String(),
  kind: Type.Union([Type.Literal('success'), Type.Literal('failure'), Type.Literal('service_callback')], {
    description: 'success / failure: the reporting webhook; service_callback: the final conversation state',
  }),
  status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
  attempts: Type.Integer(),
  created_at: Timestamp,
  delivered_at: NullableTimestamp,
  next_attempt_at: Type.Union([Timestamp, Type.Null()], {
    description: 'While pending: when its next attempt is due (after failed attempts, the backoff); null once delivered or failed',
  }),
  payload: Type.Object({}, { additionalProperties: true }),
  redelivery_of: Type.Union([Type.String(), Type.Null()], { description: 'The delivery this one sends again, when it was sent again by hand' }),
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

/** GET /leads/{id}/webhooks: the reporting webhook deliveries of a lead, with every attempt; POST .../redeliver sends one again. */
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
      return { data: rows.map(deliveryView) };
    },
  });

  app.post('/leads/:id/webhooks/:delivery_id/redeliver', {
    config: { permission: ['leads', 'write'] },
    schema: {
      tags: ['leads'],
      summary:
        'Send a reporting webhook or service callback again: a new delivery with the same URL, body and X-Dialer-Delivery-Id (receivers can tell it from a new notification), and fresh attempts',
      description: '404: no such lead in scope, or no such delivery of it. 409: the delivery is still pending (being delivered).',
      params: Type.Object({ id: Id, delivery_id: Id }),
      response: { 200: Delivery, ...problems(401, 403, 404, 409) },
    },
    handler: async (request) => deliveryView(await service.redeliver(request.principal, request.params.id, request.params.delivery_id)),
  });
}

function deliveryView(r: DeliveryRecord) {
  return {
    ...r,
    created_at: isoRequired(r.created_at),
    delivered_at: iso(r.delivered_at),
    next_attempt_at: iso(r.next_attempt_at),
    attempt_log: r.attempt_log.map((a) => ({ ...a, started_at: isoRequired(a.started_at) })),
  };
}

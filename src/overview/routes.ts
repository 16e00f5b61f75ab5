import { Type, type Static } from 'typebox';
import { scopeCondition } from '../auth/index.js';
import type { Db } from '../db/index.js';
import type { App } from '../http/index.js';
import { NullableTimestamp, problems, Timestamp } from '../http/index.js';
import { badRequest } from '../lib/errors.js';
import { iso, isoRequired, isTimeZone } from '../lib/time.js';
import { OverviewRepository } from './repository.js';
import { startOfDay } from './today.js';

const SCOPE = { reseller: 'l.reseller_id', merchant: 'l.merchant_id' };

export const LiveCall = Type.Object({
  lead_id: Type.String(),
  request_id: Type.String(),
  template: Type.String(),
  execution_mode: Type.String(),
  merchant_id: Type.Union([Type.String(), Type.Null()]),
  call_id: Type.Union([Type.String(), Type.Null()], { description: 'Known once the provider accepted the call' }),
  provider: Type.Union([Type.String(), Type.Null()]),
  to_number: Type.Union([Type.String(), Type.Null()]),
  from_number: Type.Union([Type.String(), Type.Null()]),
  attempt: Type.Integer(),
  started_at: NullableTimestamp,
});
export type LiveCall = Static<typeof LiveCall>;

export const LiveCalls = Type.Object({ data: Type.Array(LiveCall), total: Type.Integer({ description: 'Calls in progress in scope (data holds at most 200)' }) });

export const Overview = Type.Object({
  live_calls: Type.Integer({ description: 'Leads being called now (PROCESSING), in every process' }),
  since: Timestamp,
  cost_since: Type.Number({ description: 'Cost of the calls that ended since `since` (midnight in `timezone`); test and playground leads left out' }),
  failures: Type.Object({
    webhooks: Type.Array(
      Type.Object({
        id: Type.String(),
        lead_id: Type.String(),
        request_id: Type.String(),
        kind: Type.String(),
        url: Type.String(),
        attempts: Type.Integer(),
        failed_at: Timestamp,
        status_code: Type.Union([Type.Integer(), Type.Null()]),
        error: Type.Union([Type.String(), Type.Null()]),
      }),
      { description: 'The latest deliveries that used up their attempts' },
    ),
    leads: Type.Array(
      Type.Object({
        id: Type.String(),
        request_id: Type.String(),
        template: Type.String(),
        outcome: Type.String(),
        at: Timestamp,
        error: Type.Union([Type.String(), Type.Null()]),
      }),
      { description: 'The latest leads that ended in error or PRECHECK_FAILED' },
    ),
  }),
});
export type Overview = Static<typeof Overview>;

const TimezoneQuery = Type.Object({
  timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone whose midnight starts "today" (default UTC)' })),
});

/** GET /overview and GET /calls/live: what is happening now. */
export function registerOverviewRoutes(app: App, db: Db): void {
  const repo = new OverviewRepository(db);

  app.get('/calls/live', {
    config: { permission: ['leads', 'read'] },
    schema: {
      tags: ['leads'],
      summary: 'Calls in progress in scope (phone calls and browser sessions, in every process), newest first',
      response: { 200: LiveCalls, ...problems(401, 403) },
    },
    handler: async (request) => {
      const params: unknown[] = [];
      const { rows, total } = await repo.liveCalls(scopeCondition(request.principal, SCOPE, params), params, 200);
      return { data: rows.map((r) => ({ ...r, started_at: iso(r.started_at) })), total };
    },
  });

  app.get('/overview', {
    config: { permission: ['leads', 'read'] },
    schema: {
      tags: ['analytics'],
      summary: "The dashboard's overview: calls in progress, the cost of the day, recent failures (the day's counts come from POST /analytics)",
      querystring: TimezoneQuery,
      response: { 200: Overview, ...problems(400, 401, 403) },
    },
    handler: async (request): Promise<Overview> => {
      const timezone = request.query.timezone ?? 'UTC';
      if (!isTimeZone(timezone)) throw badRequest(`timezone ${timezone} is not an IANA time zone`, [{ path: '/timezone', message: 'is not an IANA time zone' }]);
      const since = startOfDay(new Date(), timezone);
      const params: unknown[] = [];
      const scope = scopeCondition(request.principal, SCOPE, params);
      const [live, cost, webhooks, leads] = await Promise.all([
        repo.liveCalls(scope, params, 1),
        repo.costSince(scope, params, since),
        repo.failedDeliveries(scope, params, 10),
        repo.failedLeads(scope, params, 10),
      ]);
      return {
        live_calls: live.total,
        since: since.toISOString(),
        cost_since: Math.round(cost * 10_000) / 10_000,
        failures: {
          webhooks: webhooks.map((w) => ({
            id: w.id,
            lead_id: w.lead_id,
            request_id: w.request_id,
            kind: w.kind,
            url: w.url,
            attempts: w.attempts,
            failed_at: isoRequired(w.updated_at),
            status_code: w.status_code,
            error: w.error,
          })),
          leads: leads.map((l) => ({ id: l.id, request_id: l.request_id, template: l.template, outcome: l.outcome, at: isoRequired(l.updated_at), error: l.error })),
        },
      };
    },
  });
}

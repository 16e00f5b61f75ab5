/** The dashboard's reads of leads: a lead's attempt history, and the list as CSV. */
import { Readable } from 'node:stream';
import { Type } from 'typebox';
import type { App } from '../http/index.js';
import { IdParams, NullableTimestamp, problems, Timestamp } from '../http/index.js';
import { iso, isoRequired } from '../lib/time.js';
import { csvLine } from '../lib/csv.js';
import { LeadExportQuery } from './list-query.js';
import type { LeadRow } from '../lifecycle/index.js';
import type { LeadsService } from './service.js';

export const Attempt = Type.Object({
  attempt: Type.Integer({ description: '1 for the first call, then one more per retry' }),
  status: Type.String({ description: 'DIALLING while the call is on; ENDED; LOST when its worker stopped' }),
  outcome: Type.Union([Type.String(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  call_id: Type.Union([Type.String(), Type.Null()]),
  provider: Type.Union([Type.String(), Type.Null()]),
  outbound_number_id: Type.Union([Type.String(), Type.Null()]),
  from_number: Type.Union([Type.String(), Type.Null()], { description: 'The caller ID it called from' }),
  started_at: Timestamp,
  ended_at: NullableTimestamp,
  duration_seconds: Type.Union([Type.Integer(), Type.Null()]),
  sip_status: Type.Optional(Type.Union([Type.Integer(), Type.Null()], { description: 'A call through a SIP trunk: the final SIP status of its INVITE (200 answered, 486 busy, 503 …); null otherwise' })),
  sip_trunk_id: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'A call through a SIP trunk: the trunk that last carried or refused it' })),
});

/** The columns of an export, in order; `payload` and `metaData` are JSON. */
const CSV_COLUMNS: Array<[string, (l: LeadRow) => unknown]> = [
  ['id', (l) => l.id],
  ['request_id', (l) => l.request_id],
  ['reseller_id', (l) => l.reseller_id],
  ['merchant_id', (l) => l.merchant_id],
  ['template', (l) => l.template_name],
  ['status', (l) => l.status],
  ['outcome', (l) => l.outcome],
  ['attempt_count', (l) => l.attempt_count],
  ['customer_mobile_number', (l) => l.payload.customer_mobile_number],
  ['execution_mode', (l) => l.execution_mode],
  ['provider', (l) => l.provider],
  ['call_id', (l) => l.call_id],
  ['call_initiated_time', (l) => iso(l.call_initiated_time)],
  ['call_end_time', (l) => iso(l.call_end_time)],
  ['duration_seconds', (l) => l.duration_seconds],
  ['cost', (l) => (l.cost === null ? null : Number(l.cost))],
  ['sentiment', (l) => l.sentiment],
  ['cancellation_reason', (l) => l.cancellation_reason],
  ['created_at', (l) => isoRequired(l.created_at)],
  ['updated_at', (l) => isoRequired(l.updated_at)],
  ['payload', (l) => JSON.stringify(l.payload)],
];

export function registerLeadReadRoutes(app: App, leads: LeadsService): void {
  app.get('/leads/:id/attempts', {
    config: { permission: ['leads', 'read'] },
    schema: {
      tags: ['leads'],
      summary: "A lead's attempts (the call_attempts history): provider, number, times, outcome, error; first attempt first",
      params: IdParams,
      response: { 200: Type.Object({ data: Type.Array(Attempt) }), ...problems(401, 403, 404) },
    },
    handler: async (request) => {
      const rows = await leads.attempts(request.principal, request.params.id);
      return { data: rows.map((a) => ({ ...a, started_at: isoRequired(a.started_at), ended_at: iso(a.ended_at) })) };
    },
  });

  app.get('/leads/export', {
    config: { permission: ['leads', 'read'] },
    schema: {
      tags: ['leads'],
      summary: 'Every lead in scope that matches the filters of GET /leads, as CSV (text/csv), in push order; streamed, any size',
      querystring: LeadExportQuery,
      produces: ['text/csv'],
      response: { ...problems(400, 401, 403) },
    },
    handler: async (request, reply) => {
      const header = CSV_COLUMNS.map(([name]) => name).join(',') + '\r\n';
      let stopped = false;
      let wanted: (() => void) | undefined;
      const body = new Readable({
        read() {
          wanted?.();
          wanted = undefined;
        },
      });
      body.on('close', () => (stopped = true));
      body.push(header);
      // Written as it is read, a batch at a time; a client that goes away stops the reading.
      void leads
        .exportAll(request.principal, request.query, async (rows) => {
          if (stopped) return false;
          const ok = body.push(rows.map((l) => csvLine(CSV_COLUMNS.map(([, get]) => get(l)))).join('\r\n') + '\r\n');
          if (!ok) await new Promise<void>((resolve) => ((wanted = resolve), body.once('close', resolve)));
          return !stopped;
        })
        .then(
          () => body.push(null),
          (err: unknown) => {
            request.log.error({ err }, 'the lead export failed');
            body.destroy(err as Error);
          },
        );
      const stamp = new Date().toISOString().slice(0, 19).replace(/[-:T]/g, '');
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="leads-${stamp}.csv"`)
        .header('cache-control', 'no-store')
        .send(body);
    },
  });
}

import { Type } from 'typebox';
import type { App } from '../http/index.js';
import { IdParams, listOf, PageQuery, paged, problems, sendProblem, toPage } from '../http/index.js';
import { iso, isoRequired } from '../lib/time.js';
import type { LeadRow } from './repository.js';
import { AbortBody, AbortResult, BatchBody, BatchResult, EXECUTION_MODES, Lead, PushBody, PushResult, pushValidationStatus } from './schema.js';
import type { LeadsService } from './service.js';
import { AppError } from '../lib/errors.js';
import { parseRangeHeader, resolveRange, type ByteRange, type RecordingStore } from '../recordings/index.js';

const ListQuery = Type.Intersect([
  PageQuery,
  Type.Object({
    status: Type.Optional(Type.Union([Type.Literal('BACKLOG'), Type.Literal('PROCESSING'), Type.Literal('RETRY'), Type.Literal('FINISHED')])),
    template: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Template name' })),
    request_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    reseller_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    merchant_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    execution_mode: Type.Optional(Type.Union(EXECUTION_MODES.map((m) => Type.Literal(m)))),
  }),
]);

/** A lead as the API shows it: every field present, null until known. */
export function leadView(l: LeadRow) {
  return {
    id: l.id,
    reseller_id: l.reseller_id,
    merchant_id: l.merchant_id,
    template: l.template_name,
    template_id: l.template_id,
    request_id: l.request_id,
    status: l.status,
    outcome: l.outcome,
    attempt_count: l.attempt_count,
    call_id: l.call_id,
    call_initiated_time: iso(l.call_initiated_time),
    call_end_time: iso(l.call_end_time),
    duration_seconds: l.duration_seconds,
    recording_url: l.recording_url,
    cost: l.cost === null ? null : Number(l.cost),
    sentiment: l.sentiment,
    provider: l.provider,
    execution_mode: l.execution_mode,
    call_direction: l.call_direction,
    outbound_number_id: l.outbound_number_id,
    trace_scores: l.trace_scores,
    payload: l.payload,
    metaData: l.meta_data,
    is_playground: l.is_playground,
    configurations_override: l.configurations_override,
    cancellation_reason: l.cancellation_reason,
    next_attempt_at: iso(l.next_attempt_at),
    created_at: isoRequired(l.created_at),
    updated_at: isoRequired(l.updated_at),
  };
}

const BATCH_BODY_LIMIT_BYTES = 16 * 1024 * 1024;

/** Drops a body that will not be sent (an open file stream would otherwise leak its descriptor). */
function destroy(body: NodeJS.ReadableStream | Buffer): void {
  const stream = body as unknown as { destroy?: () => void };
  if (!Buffer.isBuffer(body) && typeof stream.destroy === 'function') stream.destroy();
}

/** Leads and the bulk push beyond it; recordings are read from `recordings` when given. */
export function registerLeadRoutes(app: App, leads: LeadsService, recordings?: RecordingStore): void {
  app.post('/leads', {
    config: { permission: ['leads', 'write'], validationStatus: pushValidationStatus, whenDatabaseDown: 'lead_not_queued' },
    schema: {
      tags: ['leads'],
      summary: 'Push a lead for a template; it is queued (BACKLOG) for the scheduler',
      description:
        '400: a required field is missing or execution_mode is unknown. 403: the number is blacklisted (or the reseller/merchant is outside the token). ' +
        '404: no such template under the reseller/merchant. 422: a type mismatch, an unknown field, a malformed number, or a payload variable the template uses is missing. ' +
        '500: the write failed and nothing was queued; retry. Without payload.customer_mobile_number the lead is queued (201) but stays in BACKLOG; message says so.',
      body: PushBody,
      response: { 201: PushResult, ...problems(400, 401, 403, 404, 422, 500) },
    },
    handler: async (request, reply) => {
      const result = await leads.push(request.principal, request.body);
      return reply.code(201).send(result);
    },
  });

  app.post('/leads/batch', {
    config: { permission: ['leads', 'write'], whenDatabaseDown: 'lead_not_queued' },
    // 1,000 leads with generous payloads: larger than the default body limit.
    bodyLimit: BATCH_BODY_LIMIT_BYTES,
    schema: {
      tags: ['leads'],
      summary: 'Push up to 1,000 leads at once (beyond the spec); each is checked like POST /leads and answered on its own',
      description: 'The valid leads are inserted by one statement. 200 with one result per item (status 201 and the push result, or the status and problem POST /leads would have answered). 500: nothing was queued; retry the whole request.',
      body: BatchBody,
      response: { 200: BatchResult, ...problems(400, 401, 403, 500) },
    },
    handler: async (request) => leads.pushBatch(request.principal, request.body.leads),
  });

  app.get('/leads', {
    config: { permission: ['leads', 'read'] },
    schema: {
      tags: ['leads'],
      summary: 'List leads in scope, newest first; the filters narrow it',
      querystring: ListQuery,
      response: { 200: listOf(Lead), ...problems(400, 401, 403) },
    },
    handler: async (request) => {
      const page = toPage(request.query);
      const { page: _p, page_size: _s, ...filter } = request.query;
      const { rows, total } = await leads.list(request.principal, filter, page.limit, page.offset);
      return paged(rows.map(leadView), total, page);
    },
  });

  app.get('/leads/recording/:call_sid', {
    config: { permission: ['leads', 'read'] },
    schema: {
      tags: ['leads'],
      summary: "Download a call's recording (audio/wav) by the lead's call_id (call SID or WebRTC room name); Range requests answer 206",
      params: Type.Object({ call_sid: Type.String({ minLength: 1, maxLength: 200 }) }),
      response: { ...problems(401, 403, 404, 416) },
    },
    handler: async (request, reply) => {
      const callSid = request.params.call_sid;
      const lead = await leads.byCallId(request.principal, callSid);
      const notAvailable = () =>
        new AppError(
          404,
          'recording_not_available',
          lead.status === 'FINISHED'
            ? `No recording is stored for call ${callSid}`
            : `The recording of call ${callSid} is not available yet: the lead is ${lead.status}`,
        );
      if (!recordings || !lead.recording_url) throw notAvailable();
      const wanted = parseRangeHeader(request.headers.range);
      const open = async (range?: ByteRange) => {
        try {
          return await recordings.open(callSid, range);
        } catch (err) {
          request.log.error({ err, callSid }, 'the recording store failed');
          throw new AppError(503, 'recording_store_unavailable', 'The recording store cannot be reached; try again later', undefined, { cause: err });
        }
      };
      // A suffix range (bytes=-n) needs the size first: a range past any end gives it without reading.
      const probe = wanted && 'suffix' in wanted ? await open({ start: Number.MAX_SAFE_INTEGER }) : undefined;
      const first = wanted ? ('suffix' in wanted ? probe : await open({ start: wanted.start, ...(wanted.end !== undefined ? { end: wanted.end } : {}) })) : await open();
      if (!first) throw notAvailable();
      reply.header('accept-ranges', 'bytes');
      if (!wanted) {
        return reply.code(200).type(first.contentType).header('content-length', first.size).send(first.body);
      }
      const span = resolveRange(wanted, first.size);
      if (!span) {
        destroy(first.body);
        reply.header('content-range', `bytes */${first.size}`);
        return sendProblem(reply, new AppError(416, 'range_not_satisfiable', `The recording has ${first.size} bytes; the requested range ${String(request.headers.range)} selects none of them`));
      }
      const rec = 'suffix' in wanted ? await open(span) : first;
      if (!rec) throw notAvailable();
      return reply
        .code(206)
        .type(rec.contentType)
        .header('content-range', `bytes ${span.start}-${span.end}/${rec.size}`)
        .header('content-length', span.end - span.start + 1)
        .send(rec.body);
    },
  });

  app.get('/leads/:id', {
    config: { permission: ['leads', 'read'] },
    schema: { tags: ['leads'], summary: 'Read a lead; id is the lead_call_tracker_id', params: IdParams, response: { 200: Lead, ...problems(401, 403, 404) } },
    handler: async (request) => leadView(await leads.get(request.principal, request.params.id)),
  });

  app.post('/lead/abort', {
    config: { permission: ['leads', 'write'], audit: 'abort' },
    schema: {
      tags: ['leads'],
      summary: 'Abort leads not yet being dialled; one answer per lead (success, already_aborted, processing, error)',
      body: AbortBody,
      response: { 200: AbortResult, ...problems(400, 401, 403) },
    },
    handler: async (request) => ({ leads: await leads.abort(request.principal, request.body.leads) }),
  });
}

import { Type, type Static } from 'typebox';
import type { App } from '../http/index.js';
import { IdParams, paged, problems, toPage } from '../http/index.js';
import { LeadListQuery } from './list-query.js';
import { iso, isoRequired } from '../lib/time.js';
import type { LeadRow } from '../lifecycle/index.js';
import { AbortBody, AbortResult, BatchBody, BatchResult, Lead, PushBody, PushResult, pushValidationStatus } from './schema.js';
import type { LeadsService } from './service.js';
import { IdempotencyHeaders, type IdempotencyKeys } from './idempotency.js';
import { ImportPreview, PreviewBody } from './import-preview.js';

type LeadView = Static<typeof Lead>;
/** The API's fields of a lead: the schema's, in its order. */
const LEAD_FIELDS = Object.keys(Lead.properties) as (keyof LeadView)[];

/**
 * A lead as the API shows it: every field of the schema present, null until known. The fields are
 * the row's columns but for what differs: two names (template, metaData), the cost as a number,
 * the times as ISO 8601.
 */
export function leadView(l: LeadRow): LeadView {
  const { template_name, meta_data, ...columns } = l;
  const named: Record<string, unknown> = {
    ...columns,
    template: template_name,
    metaData: meta_data,
    cost: l.cost === null ? null : Number(l.cost),
    call_initiated_time: iso(l.call_initiated_time),
    call_end_time: iso(l.call_end_time),
    next_attempt_at: iso(l.next_attempt_at),
    campaign_id: l.campaign_id ?? null,
    created_at: isoRequired(l.created_at),
    updated_at: isoRequired(l.updated_at),
  };
  return Object.fromEntries(LEAD_FIELDS.map((field) => [field, named[field]])) as LeadView;
}

export const LeadList = Type.Object({
  data: Type.Array(Lead),
  total: Type.Integer(),
  page: Type.Integer(),
  page_size: Type.Integer(),
  total_capped: Type.Optional(Type.Boolean({ description: 'With count=capped: more leads match than total says (it stopped counting)' })),
});

const BATCH_BODY_LIMIT_BYTES = 16 * 1024 * 1024;

/** Leads and the bulk push beyond it. */
export function registerLeadRoutes(app: App, leads: LeadsService, keys: IdempotencyKeys): void {
  app.post('/leads', {
    config: { permission: ['leads', 'write'], validationStatus: pushValidationStatus, whenDatabaseDown: 'lead_not_queued' },
    ...keys.hooks,
    schema: {
      tags: ['leads'],
      summary: 'Push a lead for a template; it is queued (BACKLOG) for the scheduler',
      description:
        '400: a required field is missing or execution_mode is unknown. 403: the number is blacklisted (or the reseller/merchant is outside the token). ' +
        '404: no such template under the reseller/merchant, or no such campaign_id there. 409: the campaign_id names a stopped or ended campaign, or one of another template; ' +
        'or the Idempotency-Key was used with another body, or its first request is under way. 422: a type mismatch, an unknown field, a malformed number, or a payload variable the template uses is missing. ' +
        '500: the write failed and nothing was queued; retry. Without payload.customer_mobile_number the lead is queued (201) but stays in BACKLOG; message says so.',
      headers: IdempotencyHeaders,
      body: PushBody,
      response: { 201: PushResult, ...problems(400, 401, 403, 404, 409, 422, 500) },
    },
    handler: async (request, reply) => {
      const result = await leads.push(request.principal, request.body, keys.recorder(request, 201));
      return reply.code(201).send(result);
    },
  });

  app.post('/leads/batch', {
    config: { permission: ['leads', 'write'], whenDatabaseDown: 'lead_not_queued' },
    // 1,000 leads with generous payloads: larger than the default body limit.
    bodyLimit: BATCH_BODY_LIMIT_BYTES,
    ...keys.hooks,
    schema: {
      tags: ['leads'],
      summary: 'Push up to 1,000 leads at once; each is checked like POST /leads and answered on its own',
      description: 'The valid leads are inserted by one statement. 200 with one result per item, in the order sent (status 201 and the push result, or the status and problem POST /leads would have answered). 409: the Idempotency-Key was used with another body, or its first request is under way. 500: nothing was queued; retry the whole request.',
      headers: IdempotencyHeaders,
      body: BatchBody,
      response: { 200: BatchResult, ...problems(400, 401, 403, 409, 500) },
    },
    handler: async (request) => {
      const { skip_duplicates, dedupe_days } = request.body;
      const check = skip_duplicates !== undefined || dedupe_days !== undefined ? { skip: skip_duplicates ?? false, dedupeDays: dedupe_days } : undefined;
      return leads.pushBatch(request.principal, request.body.leads, keys.recorder(request, 200), check);
    },
  });

  app.post('/leads/import/preview', {
    config: { permission: ['leads', 'write'] },
    bodyLimit: BATCH_BODY_LIMIT_BYTES,
    schema: {
      tags: ['leads'],
      summary: 'An extension: what importing a CSV would push, and its duplicates, without queuing anything',
      description:
        'The columns and where each goes, the first rows as POST /leads bodies, and every duplicate: a number repeated earlier in the file (in_file), still waiting or live in campaign_id (in_campaign), or dialled by the reseller within dedupe_days (recent_call). ' +
        'Push the rows through POST /leads/batch with skip_duplicates to leave the duplicates out. 422: the CSV cannot be read or its header is refused. 404: no such campaign in scope.',
      body: PreviewBody,
      response: { 200: ImportPreview, ...problems(400, 401, 403, 404, 422) },
    },
    handler: async (request) => leads.previewImport(request.principal, request.body),
  });

  app.get('/leads', {
    config: { permission: ['leads', 'read'] },
    schema: {
      tags: ['leads'],
      summary: 'List leads in scope, newest first by default; filters, search (q) and sort narrow and order it',
      querystring: LeadListQuery,
      response: { 200: LeadList, ...problems(400, 401, 403) },
    },
    handler: async (request) => {
      const page = toPage(request.query);
      const { rows, total, capped } = await leads.list(request.principal, request.query, page.limit, page.offset);
      return { ...paged(rows.map(leadView), total, page), ...(capped ? { total_capped: true } : {}) };
    },
  });

  app.get('/leads/:id', {
    config: { permission: ['leads', 'read'] },
    schema: { tags: ['leads'], summary: 'Read a lead; id is the lead_call_tracker_id', params: IdParams, response: { 200: Lead, ...problems(401, 403, 404) } },
    handler: async (request) => {
      const lead = await leads.get(request.principal, request.params.id);
      const held = await leads.heldReason(lead);
      return { ...leadView(lead), ...(held ? { held_reason: held } : {}) };
    },
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

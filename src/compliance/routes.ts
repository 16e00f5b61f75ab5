import { Type } from 'typebox';
import type { App } from '../http/index.js';
import { listRoute, Id, IdParams, PageQuery, problems } from '../http/index.js';
import { iso, isoRequired } from '../lib/time.js';
import type { DncListRow } from './repository.js';
import { CreateDncListBody, DncList, ImportQuery, ImportResult, Lookup, type DncListView } from './schema.js';
import type { DncService } from './service.js';

const view = (r: DncListRow): DncListView => ({
  id: r.id,
  reseller_id: r.reseller_id,
  name: r.name,
  source: r.source,
  version: r.version,
  number_count: Number(r.number_count),
  imported_at: iso(r.imported_at),
  created_at: isoRequired(r.created_at),
  updated_at: isoRequired(r.updated_at),
});

/**
 * The do-not-call lists: their JSON routes, and the import, whose CSV body is streamed.
 */
export async function registerDncRoutes(app: App, dnc: DncService): Promise<void> {
  app.post('/dnc-lists', {
    config: { permission: ['dnc_lists', 'write'] },
    schema: {
      tags: ['compliance'],
      summary: 'Create a do-not-call list (a reseller\'s, or platform-wide for an admin); its numbers come by import',
      body: CreateDncListBody,
      response: { 201: DncList, ...problems(400, 401, 403, 409) },
    },
    handler: async (request, reply) => reply.code(201).send(view(await dnc.create(request.principal, request.body))),
  });

  listRoute(app, '/dnc-lists', {
    config: { permission: ['dnc_lists', 'read'] },
    tags: ['compliance'],
    summary: "The do-not-call lists in scope: the caller's reseller's and the platform-wide ones",
    querystring: PageQuery,
    item: DncList,
    list: (request, _query, page) => dnc.list(request.principal, page.limit, page.offset),
    view,
  });

  app.get('/dnc-lists/:id', {
    config: { permission: ['dnc_lists', 'read'] },
    schema: { tags: ['compliance'], summary: 'A do-not-call list', params: IdParams, response: { 200: DncList, ...problems(401, 403, 404) } },
    handler: async (request) => view(await dnc.get(request.principal, request.params.id)),
  });

  app.delete('/dnc-lists/:id', {
    config: { permission: ['dnc_lists', 'write'] },
    schema: {
      tags: ['compliance'],
      summary: 'Delete a do-not-call list and its numbers (configurations that name it stop honouring it)',
      params: IdParams,
      response: { 200: DncList, ...problems(401, 403, 404) },
    },
    handler: async (request) => view(await dnc.delete(request.principal, request.params.id)),
  });


  app.get('/dnc-lists/:id/numbers/:phone', {
    config: { permission: ['dnc_lists', 'read'] },
    schema: {
      tags: ['compliance'],
      summary: 'Whether a number is on a do-not-call list',
      params: Type.Object({ id: Id, phone: Type.String({ minLength: 1, maxLength: 32, description: 'E.164 (the + may be sent as %2B)' }) }),
      response: { 200: Lookup, ...problems(400, 401, 403, 404) },
    },
    handler: async (request) => ({
      list_id: request.params.id,
      phone_number: request.params.phone,
      listed: await dnc.lookup(request.principal, request.params.id, request.params.phone),
    }),
  });

  // The import's CSV body is handed to its route as the request stream (read as it arrives, not
  // buffered whole): a context of its own, so that every other route takes JSON only.
  await app.register(async (csv: App) => {
    csv.addContentTypeParser(['text/csv', 'text/plain', 'application/octet-stream'], (_request, payload, done) => done(null, payload));
    csv.post('/dnc-lists/:id/import', {
      config: { permission: ['dnc_lists', 'write'] },
      schema: {
        tags: ['compliance'],
        summary: 'Import numbers from a CSV body (text/csv, streamed): one E.164 number a line in the first column, an optional header line',
        description:
          'Valid numbers are added (numbers already listed are counted, not duplicated); malformed lines are skipped and reported with their line numbers. ' +
          'All in one transaction: a file without a valid number changes nothing (422).',
        params: IdParams,
        querystring: ImportQuery,
        consumes: ['text/csv'],
        response: { 200: ImportResult, ...problems(400, 401, 403, 404, 415, 422) },
      },
      handler: async (request) => {
        const body = request.body as AsyncIterable<Buffer> | undefined;
        if (!body || typeof (body as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] !== 'function') {
          throw Object.assign(new Error('unsupported'), { statusCode: 415 });
        }
        return dnc.import(request.principal, request.params.id, body, request.query);
      },
    });
  });
}

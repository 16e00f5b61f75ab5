import { Type } from 'typebox';
import type { App } from '../http/index.js';
import { listRoute, IdParams, PageQuery, problems } from '../http/index.js';
import { isoRequired } from '../lib/time.js';
import type { DocumentRow } from './repository.js';
import { Chunk, DocumentBody, KnowledgeDocument, KnowledgeDocumentSummary, MAX_FILE_BASE64, SearchQuery } from './schema.js';
import type { KnowledgeService } from './service.js';

const ListQuery = Type.Intersect([PageQuery, Type.Object({ template_id: Type.Optional(Type.String({ maxLength: 64 })) })]);

const summary = (r: DocumentRow) => ({
  id: r.id,
  reseller_id: r.reseller_id,
  template_id: r.template_id,
  title: r.title,
  format: r.format as 'text' | 'markdown',
  source_url: r.source_url,
  chunk_count: r.chunk_count,
  created_at: isoRequired(r.created_at),
});

/** The knowledge base's documents and its search. */
export function registerKnowledgeRoutes(app: App, knowledge: KnowledgeService): void {
  app.post('/knowledge/documents', {
    config: { permission: ['knowledge', 'write'] },
    // A PDF sent in base64 is larger than the default request limit.
    bodyLimit: MAX_FILE_BASE64 + 64 * 1024,
    schema: {
      tags: ['knowledge'],
      summary: "Add a document (text, Markdown, a PDF or a web page) to a reseller's knowledge base, optionally for one template; it is chunked and indexed at once",
      body: DocumentBody,
      response: { 201: KnowledgeDocument, ...problems(400, 401, 403, 415, 422) },
    },
    handler: async (request, reply) => {
      const row = await knowledge.create(request.principal, request.body);
      return reply.code(201).send({ ...summary(row), text: row.content });
    },
  });

  listRoute(app, '/knowledge/documents', {
    config: { permission: ['knowledge', 'read'] },
    tags: ['knowledge'],
    summary: 'The knowledge documents in scope, newest first (without their text)',
    querystring: ListQuery,
    item: KnowledgeDocumentSummary,
    list: (request, query, page) => knowledge.list(request.principal, query, page.limit, page.offset),
    view: summary,
  });

  app.get('/knowledge/documents/:id', {
    config: { permission: ['knowledge', 'read'] },
    schema: { tags: ['knowledge'], summary: 'A knowledge document with its text', params: IdParams, response: { 200: KnowledgeDocument, ...problems(401, 403, 404) } },
    handler: async (request) => {
      const row = await knowledge.get(request.principal, request.params.id);
      return { ...summary(row), text: row.content };
    },
  });

  app.delete('/knowledge/documents/:id', {
    config: { permission: ['knowledge', 'write'] },
    schema: {
      tags: ['knowledge'],
      summary: 'Delete a knowledge document and its chunks (calls stop finding it at once)',
      params: IdParams,
      response: { 200: Type.Object({ id: Type.String(), deleted: Type.Literal(true) }), ...problems(401, 403, 404) },
    },
    handler: async (request) => {
      const row = await knowledge.delete(request.principal, request.params.id);
      return { id: row.id, deleted: true as const };
    },
  });

  app.get('/knowledge/search', {
    config: { permission: ['knowledge', 'read'] },
    schema: {
      tags: ['knowledge'],
      summary: 'The chunks that best answer a question, best first, as the agent\'s search_knowledge finds them',
      querystring: SearchQuery,
      response: { 200: Type.Object({ data: Type.Array(Chunk) }), ...problems(400, 401, 403) },
    },
    handler: async (request) => {
      const hits = await knowledge.search(request.principal, request.query);
      return { data: hits };
    },
  });
}

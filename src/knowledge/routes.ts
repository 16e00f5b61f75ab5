import { Type } from 'typebox';
import type { App } from '../http/index.js';
import { listRoute, Id, IdParams, PageQuery, problems, Timestamp } from '../http/index.js';
import { isoRequired } from '../lib/time.js';
import type { DocumentRow } from './repository.js';
import { DEFAULT_SEARCH_RESULTS, MAX_SEARCH_RESULTS, type KnowledgeService } from './service.js';

/** The largest document taken, in characters (about 30,000 words). */
export const MAX_DOCUMENT_CHARACTERS = 200_000;

const Format = Type.Union([Type.Literal('text'), Type.Literal('markdown')], { description: 'Plain text or Markdown (headings start a new chunk); default text' });

export const DocumentBody = Type.Object(
  {
    reseller_id: Type.Optional(Id),
    template_id: Type.Optional(Type.Union([Id, Type.Null()], { description: "Only that template's calls search it; absent or null: every template of the reseller" })),
    title: Type.String({ minLength: 1, maxLength: 200 }),
    format: Type.Optional(Format),
    text: Type.String({ minLength: 1, maxLength: MAX_DOCUMENT_CHARACTERS, description: `The document's text, at most ${MAX_DOCUMENT_CHARACTERS} characters` }),
  },
  { additionalProperties: false, examples: [{ title: 'Returns policy', format: 'markdown', text: '# Returns\n\nItems can be returned within 30 days.' }] },
);

const DocumentSummary = {
  id: Type.String(),
  reseller_id: Type.String(),
  template_id: Type.Union([Type.String(), Type.Null()]),
  title: Type.String(),
  format: Format,
  chunk_count: Type.Integer({ description: 'How many chunks it was cut into for search' }),
  created_at: Timestamp,
};
export const KnowledgeDocumentSummary = Type.Object(DocumentSummary);
export const KnowledgeDocument = Type.Object({ ...DocumentSummary, text: Type.String() });

const Chunk = Type.Object({
  document_id: Type.String(),
  title: Type.String({ description: "The document's title" }),
  template_id: Type.Union([Type.String(), Type.Null()]),
  position: Type.Integer({ description: 'The chunk\'s place in its document, from 0' }),
  text: Type.String(),
  rank: Type.Number({ description: 'Full-text rank (higher is better); comparable within one answer only' }),
});

const SearchQuery = Type.Object({
  q: Type.String({ minLength: 1, maxLength: 1000, description: 'The question or words to look for (any of them matches; more of them, closer together, ranks higher)' }),
  template_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "Search as that template's calls do: its documents and the reseller-wide ones" })),
  reseller_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'For an admin: one reseller (others search their own)' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_SEARCH_RESULTS, default: DEFAULT_SEARCH_RESULTS })),
});

const ListQuery = Type.Intersect([PageQuery, Type.Object({ template_id: Type.Optional(Type.String({ maxLength: 64 })) })]);

const summary = (r: DocumentRow) => ({
  id: r.id,
  reseller_id: r.reseller_id,
  template_id: r.template_id,
  title: r.title,
  format: r.format as 'text' | 'markdown',
  chunk_count: r.chunk_count,
  created_at: isoRequired(r.created_at),
});

/** The knowledge base's documents and its search. */
export function registerKnowledgeRoutes(app: App, knowledge: KnowledgeService): void {
  app.post('/knowledge/documents', {
    config: { permission: ['knowledge', 'write'] },
    schema: {
      tags: ['knowledge'],
      summary: "Add a document (text or Markdown) to a reseller's knowledge base, optionally for one template; it is chunked and indexed at once",
      body: DocumentBody,
      response: { 201: KnowledgeDocument, ...problems(400, 401, 403) },
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

/**
 * The knowledge base: a reseller's documents (for all its templates, or for one), chunked and
 * indexed for full-text search. Admins keep any reseller's; a reseller its own; merchants read and
 * search their reseller's. A document outside the caller's scope is not found (404).
 */
import type { Principal } from '../auth/index.js';
import { assertOwnerInScope, inScope, scopeCondition } from '../auth/index.js';
import type { Db } from '../db/index.js';
import { badRequest, isForeignKeyViolation, notFound } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import type { OutboundFetch } from '../lib/outbound/index.js';
import { chunkText } from './chunk.js';
import { readPage, type Page } from './page.js';
import { DEFAULT_SEARCH_RESULTS, MAX_SEARCH_RESULTS } from './schema.js';
import { planSearch } from './plan.js';
import { deleteDocument, insertDocument, selectChunks, selectDocument, selectDocuments, selectTermCounts, templateOwner, type ChunkHit, type DocumentRow } from './repository.js';

export interface DocumentInput {
  reseller_id?: string;
  template_id?: string | null;
  title?: string;
  format?: 'text' | 'markdown';
  /** The text, or `url`: a web page to read it from. */
  text?: string;
  url?: string;
}


export class KnowledgeService {
  /** `candidateBudget`: how many chunks a search may fetch and rank by each of its two ways (plan.ts). */
  constructor(
    private readonly db: Db,
    private readonly options: { candidateBudget?: number; fetch?: OutboundFetch } = {},
  ) {}

  /** The template a document is for: one the caller may see (else 400, like an unknown one). */
  private async template(caller: Principal, templateId: string) {
    const owner = await templateOwner(this.db, templateId);
    if (!owner || !inScope(caller, owner.reseller_id, owner.merchant_id, { resellerWide: true })) {
      throw badRequest(`template_id ${templateId} is not a known template`, [{ path: '/template_id', message: 'is not a known template' }]);
    }
    return owner;
  }

  async create(caller: Principal, input: DocumentInput): Promise<DocumentRow> {
    if ((input.text === undefined) === (input.url === undefined)) {
      throw badRequest('A document has its text or a url to read it from, not both', [{ path: input.text === undefined ? '/text' : '/url', message: 'give text or url' }], 'invalid_document');
    }
    let page: Page | undefined;
    if (input.url !== undefined) {
      if (!this.options.fetch) throw badRequest('This service reads no web pages', [{ path: '/url', message: 'not available' }]);
      if (!/^https?:\/\//i.test(input.url)) throw badRequest('url must be an http(s) URL', [{ path: '/url', message: 'must start with http:// or https://' }], 'url_refused');
    }
    const title = (input.title ?? '').trim();
    if (!title && input.url === undefined) throw badRequest('The document has no title', [{ path: '/title', message: 'must not be blank' }]);
    const template = input.template_id ? await this.template(caller, input.template_id) : undefined;
    const resellerId = template?.reseller_id ?? input.reseller_id ?? (caller.role === 'admin' ? undefined : caller.resellerId);
    if (!resellerId) throw badRequest('reseller_id (or template_id) is required for an admin', [{ path: '/reseller_id', message: 'is required' }]);
    if (template && input.reseller_id && input.reseller_id !== template.reseller_id) {
      throw badRequest(`template ${input.template_id} belongs to another reseller`, [{ path: '/template_id', message: `is not a template of reseller ${input.reseller_id}` }]);
    }
    assertOwnerInScope(caller, resellerId, undefined);
    // The page is read once the caller may add it (no fetch on a tenant's behalf before that).
    if (input.url !== undefined) page = await readPage(this.options.fetch!, input.url);
    const text = (page?.text ?? input.text ?? '').trim();
    if (!text) throw badRequest('The document has no text', [{ path: '/text', message: 'must hold some text' }], 'empty_document');
    const chunks = chunkText(text);
    try {
      return await this.db.tx((q) =>
        insertDocument(
          q,
          {
            id: newId(),
            reseller_id: resellerId,
            template_id: input.template_id ?? null,
            title: (title || page?.title || input.url!).slice(0, 200),
            format: input.format ?? page?.format ?? 'text',
            content: text,
            source_url: input.url ?? null,
          },
          chunks,
        ),
      );
    } catch (err) {
      if (isForeignKeyViolation(err)) throw badRequest(`reseller_id ${resellerId} does not exist`, [{ path: '/reseller_id', message: 'must be an existing reseller' }]);
      throw err;
    }
  }

  async get(caller: Principal, id: string): Promise<DocumentRow> {
    const row = await selectDocument(this.db, id);
    if (!row || !inScope(caller, row.reseller_id, null, { resellerWide: true })) throw notFound(`Knowledge document ${id}`);
    return row;
  }

  list(caller: Principal, filter: { template_id?: string }, limit: number, offset: number) {
    const params: unknown[] = [];
    let where = scopeCondition(caller, { reseller: 'reseller_id' }, params);
    if (filter.template_id) {
      params.push(filter.template_id);
      where += ` AND template_id = $${params.length}`;
    }
    return selectDocuments(this.db, where, params, limit, offset);
  }

  async delete(caller: Principal, id: string): Promise<DocumentRow> {
    const row = await this.get(caller, id);
    assertOwnerInScope(caller, row.reseller_id, undefined);
    await deleteDocument(this.db, id);
    return row;
  }

  /** The best chunks in the caller's scope (an admin: every reseller's, or `reseller_id`'s). */
  async search(caller: Principal, query: { q: string; template_id?: string; reseller_id?: string; limit?: number }): Promise<ChunkHit[]> {
    if (!query.q.trim()) throw badRequest('q must hold some words', [{ path: '/q', message: 'must not be blank' }]);
    let resellerId = caller.role === 'admin' ? query.reseller_id : (caller.resellerId ?? '');
    if (query.template_id) resellerId = (await this.template(caller, query.template_id)).reseller_id;
    return this.findChunks(resellerId, query.template_id, query.q, Math.min(query.limit ?? DEFAULT_SEARCH_RESULTS, MAX_SEARCH_RESULTS));
  }

  /** What a call's agent finds: its template's documents and its reseller's shared ones. */
  async searchForTemplate(templateId: string, text: string, limit = DEFAULT_SEARCH_RESULTS): Promise<ChunkHit[]> {
    const owner = await templateOwner(this.db, templateId);
    if (!owner || !text.trim()) return [];
    return this.findChunks(owner.reseller_id, templateId, text, Math.min(limit, MAX_SEARCH_RESULTS));
  }

  /**
   * The best chunks for `text` among the reseller's (undefined: every reseller's), for a template
   * its own and the reseller-wide ones: the chunks holding the question's rarer words, ranked by
   * the words they hold, the rarer weighing more (plan.ts). A chunk holding only words that most
   * chunks hold is found only when no chunk holds a rarer one, or when it holds them all.
   */
  async findChunks(resellerId: string | undefined, templateId: string | undefined, text: string, limit: number): Promise<ChunkHit[]> {
    const { terms, totalChunks } = await selectTermCounts(this.db, resellerId, text);
    const plan = planSearch(terms, totalChunks, this.options.candidateBudget);
    return plan ? selectChunks(this.db, { resellerId, templateId }, plan, limit) : [];
  }
}

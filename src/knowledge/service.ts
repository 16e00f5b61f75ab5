/**
 * The knowledge base: a reseller's documents (for all its templates, or for one), chunked and
 * indexed for full-text search, and embedded for search by meaning when an embeddings endpoint is
 * configured and the database has pgvector. Admins keep any reseller's; a reseller its own; merchants read and
 * search their reseller's. A document outside the caller's scope is not found (404).
 */
import type { Principal } from '../auth/index.js';
import { assertOwnerInScope, inScope, scopeCondition } from '../auth/index.js';
import type { Db } from '../db/index.js';
import { badRequest, isForeignKeyViolation, notFound } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import type { OutboundFetch } from '../lib/outbound/index.js';
import { chunkText } from './chunk.js';
import { readFileText } from './file.js';
import { readPage, type Page } from './page.js';
import { DEFAULT_SEARCH_RESULTS, MAX_SEARCH_RESULTS } from './schema.js';
import { planSearch } from './plan.js';
import { deleteDocument, hasVectors, insertDocument, selectChunks, selectDocument, selectDocuments, selectNearestChunks, selectTermCounts, templateOwner, type ChunkEmbeddings, type ChunkHit, type DocumentRow } from './repository.js';
import type { Embedder } from './embeddings.js';
import type { Logger } from '../lib/logger.js';

export interface DocumentInput {
  reseller_id?: string;
  template_id?: string | null;
  title?: string;
  format?: 'text' | 'markdown';
  /** The text, or `url`: a web page to read it from, or `file`: a PDF or text file, base64-encoded. */
  text?: string;
  url?: string;
  file?: string;
  file_name?: string;
}

/** The bytes of a base64-encoded upload (line breaks allowed), or a 400 at /file. */
function decodeFile(base64: string): Buffer {
  const compact = base64.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 === 1) {
    throw badRequest('file must be the file\'s bytes in base64', [{ path: '/file', message: 'is not base64' }], 'invalid_document');
  }
  return Buffer.from(compact, 'base64');
}


/** Reciprocal rank fusion's constant: a chunk's share from one list is 1 / (RRF_K + its place there). */
export const RRF_K = 60;
/** How many chunks each of the two searches offers to the fusion, at least. */
const FUSION_DEPTH = 10;

export interface KnowledgeOptions {
  /** How many chunks a search may fetch and rank by each of its two ways (plan.ts). */
  candidateBudget?: number;
  /** Reads web pages (the outbound policy's fetch). */
  fetch?: OutboundFetch;
  /** Embeds chunks and questions; with pgvector, search is hybrid. */
  embedder?: Embedder;
  /** Where a failed embedding is told (the document is kept, the search answered, by full text). */
  log?: Pick<Logger, 'warn'>;
}

/**
 * Fuses ranked lists by reciprocal rank fusion: each chunk scores the sum over the lists of
 * 1 / (RRF_K + its place, from 1), best first; `rank` becomes that score.
 */
export function fuseRanks(lists: readonly (readonly ChunkHit[])[], limit: number): ChunkHit[] {
  const fused = new Map<string, ChunkHit>();
  for (const list of lists) {
    list.forEach((hit, i) => {
      const key = `${hit.document_id}\u0000${hit.position}`;
      const score = 1 / (RRF_K + i + 1);
      const seen = fused.get(key);
      if (seen) seen.rank += score;
      else fused.set(key, { ...hit, rank: score });
    });
  }
  return [...fused.values()].sort((a, b) => b.rank - a.rank || (a.document_id < b.document_id ? -1 : a.document_id > b.document_id ? 1 : a.position - b.position)).slice(0, limit);
}

export class KnowledgeService {
  private vectors: Promise<boolean> | undefined;

  constructor(
    private readonly db: Db,
    private readonly options: KnowledgeOptions = {},
  ) {}

  /** Whether chunks are embedded and searched by vector: an embedder, and pgvector in the database (asked once). */
  private async embedding(): Promise<Embedder | undefined> {
    const embedder = this.options.embedder;
    if (!embedder) return undefined;
    this.vectors ??= hasVectors(this.db).catch((err: unknown) => {
      this.options.log?.warn({ err }, 'pgvector is not usable: knowledge search is full-text alone');
      return false;
    });
    return (await this.vectors) ? embedder : undefined;
  }

  /** The chunks' embeddings, or undefined (none configured, or the endpoint failed: logged, and the document is kept for full-text search). */
  private async embedChunks(chunks: readonly string[], documentTitle: string): Promise<ChunkEmbeddings | undefined> {
    const embedder = await this.embedding();
    if (!embedder) return undefined;
    try {
      return { model: embedder.model, vectors: await embedder.embed(chunks.map((c) => `${documentTitle}\n\n${c}`)) };
    } catch (err) {
      this.options.log?.warn({ err, model: embedder.model }, 'embedding a knowledge document failed: it is found by full-text search only');
      return undefined;
    }
  }

  /** The template a document is for: one the caller may see (else 400, like an unknown one). */
  private async template(caller: Principal, templateId: string) {
    const owner = await templateOwner(this.db, templateId);
    if (!owner || !inScope(caller, owner.reseller_id, owner.merchant_id, { resellerWide: true })) {
      throw badRequest(`template_id ${templateId} is not a known template`, [{ path: '/template_id', message: 'is not a known template' }]);
    }
    return owner;
  }

  async create(caller: Principal, input: DocumentInput): Promise<DocumentRow> {
    const sources = (['text', 'url', 'file'] as const).filter((k) => input[k] !== undefined);
    if (sources.length !== 1) {
      throw badRequest('A document has its text, a url or a file to read it from: one of them', [{ path: `/${sources[1] ?? 'text'}`, message: 'give one of text, url or file' }], 'invalid_document');
    }
    let page: Page | undefined;
    const bytes = input.file === undefined ? undefined : decodeFile(input.file);
    if (input.url !== undefined) {
      if (!this.options.fetch) throw badRequest('This service reads no web pages', [{ path: '/url', message: 'not available' }]);
      if (!/^https?:\/\//i.test(input.url)) throw badRequest('url must be an http(s) URL', [{ path: '/url', message: 'must start with http:// or https://' }], 'url_refused');
    }
    const title = (input.title ?? '').trim();
    if (!title && input.text !== undefined) throw badRequest('The document has no title', [{ path: '/title', message: 'must not be blank' }]);
    const template = input.template_id ? await this.template(caller, input.template_id) : undefined;
    const resellerId = template?.reseller_id ?? input.reseller_id ?? (caller.role === 'admin' ? undefined : caller.resellerId);
    if (!resellerId) throw badRequest('reseller_id (or template_id) is required for an admin', [{ path: '/reseller_id', message: 'is required' }]);
    if (template && input.reseller_id && input.reseller_id !== template.reseller_id) {
      throw badRequest(`template ${input.template_id} belongs to another reseller`, [{ path: '/template_id', message: `is not a template of reseller ${input.reseller_id}` }]);
    }
    assertOwnerInScope(caller, resellerId, undefined);
    // The page is read once the caller may add it (no fetch on a tenant's behalf before that).
    if (input.url !== undefined) page = await readPage(this.options.fetch!, input.url);
    if (bytes) {
      const file = await readFileText(bytes, { path: '/file', name: input.file_name });
      const named = input.file_name?.replace(/\.[^.]*$/, '').trim();
      page = { text: file.text, format: file.format, ...(file.title || named ? { title: file.title || named } : {}) };
    }
    const text = (page?.text ?? input.text ?? '').trim();
    if (!text) throw badRequest('The document has no text', [{ path: '/text', message: 'must hold some text' }], 'empty_document');
    const chunks = chunkText(text);
    const documentTitle = (title || page?.title || input.url || input.file_name || 'Untitled').slice(0, 200);
    const embeddings = await this.embedChunks(chunks, documentTitle);
    try {
      return await this.db.tx((q) =>
        insertDocument(
          q,
          {
            id: newId(),
            reseller_id: resellerId,
            template_id: input.template_id ?? null,
            title: documentTitle,
            format: input.format ?? page?.format ?? 'text',
            content: text,
            source_url: input.url ?? null,
          },
          chunks,
          embeddings,
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
   * chunks hold is found only when no chunk holds a rarer one, or when it holds them all. With
   * embeddings, that list is fused with the chunks nearest the question in meaning.
   */
  async findChunks(resellerId: string | undefined, templateId: string | undefined, text: string, limit: number): Promise<ChunkHit[]> {
    const embedder = await this.embedding();
    if (!embedder) return this.findByWords(resellerId, templateId, text, limit);
    // Hybrid: the chunks nearest in meaning and those holding the words, fused by their places.
    const depth = Math.max(limit, FUSION_DEPTH);
    const [byWords, byMeaning] = await Promise.all([this.findByWords(resellerId, templateId, text, depth), this.findByMeaning(embedder, resellerId, templateId, text, depth)]);
    return byMeaning.length ? fuseRanks([byWords, byMeaning], limit) : byWords.slice(0, limit);
  }

  /** Full-text search: the chunks holding the question's rarer words, ranked by the words they hold, the rarer weighing more (plan.ts). */
  private async findByWords(resellerId: string | undefined, templateId: string | undefined, text: string, limit: number): Promise<ChunkHit[]> {
    const { terms, totalChunks } = await selectTermCounts(this.db, resellerId, text);
    const plan = planSearch(terms, totalChunks, this.options.candidateBudget);
    return plan ? selectChunks(this.db, { resellerId, templateId }, plan, limit) : [];
  }

  /** The chunks nearest the question's embedding; none when the endpoint fails (logged: the words still answer). */
  private async findByMeaning(embedder: Embedder, resellerId: string | undefined, templateId: string | undefined, text: string, limit: number): Promise<ChunkHit[]> {
    let vector: number[];
    try {
      [vector] = (await embedder.embed([text])) as [number[]];
    } catch (err) {
      this.options.log?.warn({ err, model: embedder.model }, 'embedding a knowledge question failed: answered by full-text search alone');
      return [];
    }
    return selectNearestChunks(this.db, { resellerId, templateId }, embedder.model, vector, limit);
  }
}

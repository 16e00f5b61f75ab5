import type { Queryable } from '../db/index.js';
import { lexemeQuery, termsQuery, type SearchPlan, type TermCount } from './plan.js';

export interface DocumentRow {
  id: string;
  reseller_id: string;
  template_id: string | null;
  title: string;
  format: string;
  content: string;
  /** The web page the text was read from. */
  source_url: string | null;
  chunk_count: number;
  created_at: Date;
}

export interface ChunkHit {
  document_id: string;
  title: string;
  template_id: string | null;
  position: number;
  text: string;
  rank: number;
}

const SUMMARY = 'id, reseller_id, template_id, title, format, source_url, chunk_count, created_at';

/** Every statement that reads or writes the knowledge base. */
/** Chunks' embeddings, one per chunk in order, and the model that made them. */
export interface ChunkEmbeddings {
  model: string;
  vectors: readonly (readonly number[])[];
}

/** A vector as a PostgreSQL array literal (a real[] value, cast to pgvector's `vector` where compared). */
const arrayLiteral = (v: readonly number[]) => `{${v.join(',')}}`;

export async function insertDocument(q: Queryable, row: Omit<DocumentRow, 'created_at' | 'chunk_count'>, chunks: readonly string[], embeddings?: ChunkEmbeddings): Promise<DocumentRow> {
  const { rows } = await q.query<DocumentRow>(
    `INSERT INTO knowledge_documents (id, reseller_id, template_id, title, format, content, source_url, chunk_count) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
    [row.id, row.reseller_id, row.template_id, row.title, row.format, row.content, row.source_url, chunks.length],
  );
  // One statement for all chunks; the title's words weigh more than the body's.
  await q.query(
    `INSERT INTO knowledge_chunks (document_id, position, reseller_id, template_id, content, search, embedding, embedding_model)
     SELECT $1, c.ord - 1, $2, $3, c.content, setweight(to_tsvector('english', $4), 'B') || to_tsvector('english', c.content),
            c.embedding::real[], CASE WHEN c.embedding IS NOT NULL THEN $7 END
     FROM unnest($5::text[], $6::text[]) WITH ORDINALITY AS c (content, embedding, ord)`,
    [row.id, row.reseller_id, row.template_id, row.title, chunks, embeddings ? embeddings.vectors.map(arrayLiteral) : null, embeddings?.model ?? null],
  );
  return rows[0]!;
}

export async function selectDocument(q: Queryable, id: string): Promise<DocumentRow | undefined> {
  const { rows } = await q.query<DocumentRow>('SELECT * FROM knowledge_documents WHERE id = $1', [id]);
  return rows[0];
}

/** `where` is built by the service from scope, over the table's own columns. Rows without their content. */
export async function selectDocuments(q: Queryable, where: string, params: unknown[], limit: number, offset: number): Promise<{ rows: DocumentRow[]; total: number }> {
  const total = await q.query<{ n: number }>(`SELECT count(*)::int AS n FROM knowledge_documents WHERE ${where}`, params);
  const { rows } = await q.query<DocumentRow>(
    `SELECT ${SUMMARY}, NULL AS content FROM knowledge_documents WHERE ${where} ORDER BY created_at DESC, id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, limit, offset],
  );
  return { rows, total: total.rows[0]!.n };
}

export async function deleteDocument(q: Queryable, id: string): Promise<void> {
  await q.query('DELETE FROM knowledge_documents WHERE id = $1', [id]);
}

/** Which chunks a search covers: the reseller's (undefined: every reseller's), and for a template its own and the reseller-wide ones. */
export interface SearchScope {
  resellerId: string | undefined;
  templateId: string | undefined;
}

/**
 * The question's terms (English lexemes: stemmed, stop words dropped) with how many of the scope's
 * chunks hold each (0: none), and the scope's chunk count. Counted per reseller, so a template's
 * search sees its reseller's counts.
 */
export async function selectTermCounts(q: Queryable, resellerId: string | undefined, text: string): Promise<{ terms: TermCount[]; totalChunks: number }> {
  const params: unknown[] = [text];
  let reseller = '';
  if (resellerId !== undefined) {
    params.push(resellerId);
    reseller = ' AND t.reseller_id = $2';
  }
  const { rows } = await q.query<{ lexeme: string; chunks: number }>(
    `SELECT w.lexeme, coalesce((SELECT sum(t.chunks) FROM knowledge_terms t WHERE t.lexeme = w.lexeme${reseller}), 0)::int AS chunks
     FROM unnest(ARRAY[''] || tsvector_to_array(to_tsvector('english', $1))) AS w (lexeme)`,
    params,
    { prepare: true },
  );
  const total = rows.find((r) => r.lexeme === '');
  return { terms: rows.filter((r) => r.lexeme !== ''), totalChunks: total?.chunks ?? 0 };
}

/**
 * The best chunks by `plan` (plan.ts): the candidates fetched through the text index, at most the
 * plan's fetch limit (and, when they are fewer than `limit`, as many more holding the plan's fill
 * terms), then ranked: the weights of the terms a chunk holds, plus its cover density over those
 * that weigh something (under 1: among equals, the chunk holding them more often, closer together
 * or in its title first).
 */
export async function selectChunks(q: Queryable, scope: SearchScope, plan: SearchPlan, limit: number): Promise<ChunkHit[]> {
  const fetch = termsQuery(plan.fetch.terms, plan.fetch.all);
  const params: unknown[] = [
    fetch,
    plan.fill.length ? `(${termsQuery(plan.fill)}) & !(${fetch})` : null,
    plan.weights.map((w) => lexemeQuery(w.lexeme)),
    plan.weights.map((w) => w.weight),
    termsQuery(plan.weights.length ? plan.weights.map((w) => w.lexeme) : plan.held),
    plan.fetchLimit,
    limit,
  ];
  let where = '';
  if (scope.resellerId !== undefined) {
    params.push(scope.resellerId);
    where += ` AND c.reseller_id = $${params.length}`;
  }
  if (scope.templateId !== undefined) {
    params.push(scope.templateId);
    where += ` AND (c.template_id IS NULL OR c.template_id = $${params.length})`;
  }
  const { rows } = await q.query<ChunkHit>(
    `WITH fetched AS (
       SELECT c.document_id, c.position, c.template_id, c.content, c.search FROM knowledge_chunks c
       WHERE c.search @@ $1::tsquery${where} LIMIT $6
     ), filled AS (
       SELECT c.document_id, c.position, c.template_id, c.content, c.search FROM knowledge_chunks c
       WHERE c.search @@ $2::tsquery${where} AND (SELECT count(*) FROM fetched) < $7 LIMIT $7
     )
     SELECT c.document_id, d.title, c.template_id, c.position, c.content AS text,
            (SELECT coalesce(sum(w.weight), 0) FROM unnest($3::tsquery[], $4::float8[]) AS w (query, weight) WHERE c.search @@ w.query)
              + ts_rank_cd(c.search, $5::tsquery, 32) AS rank
     FROM (SELECT * FROM fetched UNION ALL SELECT * FROM filled) AS c
     JOIN knowledge_documents d ON d.id = c.document_id
     ORDER BY rank DESC, c.document_id, c.position
     LIMIT $7`,
    params,
    // Prepared: whatever the words, the plan is the same (bitmap scans of the text index, capped).
    { prepare: true },
  );
  return rows.map((r) => ({ ...r, rank: Number(r.rank) }));
}

/**
 * Whether this database compares vectors (pgvector's extension is there). Where the server has
 * pgvector but the extension was not created yet (installed after the migrations ran), it is created
 * now if this role may; otherwise search is full-text alone.
 */
export async function hasVectors(q: Queryable): Promise<boolean> {
  const installed = async () => (await q.query("SELECT 1 FROM pg_extension WHERE extname = 'vector'")).rows.length > 0;
  if (await installed()) return true;
  const { rows } = await q.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'");
  if (rows.length === 0) return false;
  await q.query('CREATE EXTENSION IF NOT EXISTS vector');
  return installed();
}

/**
 * The chunks nearest to `vector` by cosine distance among the scope's chunks embedded by `model`,
 * nearest first (`rank`: cosine similarity). An exact scan of the scope's embedded chunks.
 */
export async function selectNearestChunks(q: Queryable, scope: SearchScope, model: string, vector: readonly number[], limit: number): Promise<ChunkHit[]> {
  const params: unknown[] = [`[${vector.join(',')}]`, model, vector.length, limit];
  let where = '';
  if (scope.resellerId !== undefined) {
    params.push(scope.resellerId);
    where += ` AND c.reseller_id = $${params.length}`;
  }
  if (scope.templateId !== undefined) {
    params.push(scope.templateId);
    where += ` AND (c.template_id IS NULL OR c.template_id = $${params.length})`;
  }
  const { rows } = await q.query<ChunkHit>(
    `SELECT c.document_id, d.title, c.template_id, c.position, c.content AS text, 1 - (c.embedding::vector <=> $1::vector) AS rank
     FROM knowledge_chunks c JOIN knowledge_documents d ON d.id = c.document_id
     WHERE c.embedding_model = $2 AND cardinality(c.embedding) = $3${where}
     ORDER BY c.embedding::vector <=> $1::vector, c.document_id, c.position
     LIMIT $4`,
    params,
  );
  return rows.map((r) => ({ ...r, rank: Number(r.rank) }));
}

export async function templateOwner(q: Queryable, templateId: string): Promise<{ reseller_id: string; merchant_id: string | null } | undefined> {
  const { rows } = await q.query<{ reseller_id: string; merchant_id: string | null }>('SELECT reseller_id, merchant_id FROM templates WHERE id = $1', [templateId]);
  return rows[0];
}

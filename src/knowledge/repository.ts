import type { Queryable } from '../db/index.js';

export interface DocumentRow {
  id: string;
  reseller_id: string;
  template_id: string | null;
  title: string;
  format: string;
  content: string;
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

const SUMMARY = 'id, reseller_id, template_id, title, format, chunk_count, created_at';

/** Every statement that reads or writes the knowledge base. */
export async function insertDocument(q: Queryable, row: Omit<DocumentRow, 'created_at' | 'chunk_count'>, chunks: readonly string[]): Promise<DocumentRow> {
  const { rows } = await q.query<DocumentRow>(
    `INSERT INTO knowledge_documents (id, reseller_id, template_id, title, format, content, chunk_count) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
    [row.id, row.reseller_id, row.template_id, row.title, row.format, row.content, chunks.length],
  );
  // One statement for all chunks; the title's words weigh more than the body's.
  await q.query(
    `INSERT INTO knowledge_chunks (document_id, position, reseller_id, template_id, content, search)
     SELECT $1, c.ord - 1, $2, $3, c.content, setweight(to_tsvector('english', $4), 'B') || to_tsvector('english', c.content)
     FROM unnest($5::text[]) WITH ORDINALITY AS c (content, ord)`,
    [row.id, row.reseller_id, row.template_id, row.title, chunks],
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

/**
 * The best chunks for a question: any of its words (English lexemes, stop words dropped) matches,
 * ranked by cover density so chunks holding more of the words, closer together, come first.
 * `template`: undefined searches all of the reseller's documents; a template id, that template's
 * and the reseller-wide ones (template_id NULL).
 */
export async function searchChunks(q: Queryable, resellerId: string | undefined, templateId: string | undefined, text: string, limit: number): Promise<ChunkHit[]> {
  const params: unknown[] = [text, limit];
  let where = 'c.search @@ q.query';
  if (resellerId !== undefined) {
    params.push(resellerId);
    where += ` AND c.reseller_id = $${params.length}`;
  }
  if (templateId !== undefined) {
    params.push(templateId);
    where += ` AND (c.template_id IS NULL OR c.template_id = $${params.length})`;
  }
  const { rows } = await q.query<ChunkHit>(
    `SELECT c.document_id, d.title, c.template_id, c.position, c.content AS text, ts_rank_cd(c.search, q.query)::float8 AS rank
     FROM (SELECT replace(plainto_tsquery('english', $1)::text, '&', '|')::tsquery AS query) AS q,
          knowledge_chunks c JOIN knowledge_documents d ON d.id = c.document_id
     WHERE ${where}
     ORDER BY rank DESC, c.document_id, c.position
     LIMIT $2`,
    params,
  );
  return rows.map((r) => ({ ...r, rank: Number(r.rank) }));
}

export async function templateOwner(q: Queryable, templateId: string): Promise<{ reseller_id: string; merchant_id: string | null } | undefined> {
  const { rows } = await q.query<{ reseller_id: string; merchant_id: string | null }>('SELECT reseller_id, merchant_id FROM templates WHERE id = $1', [templateId]);
  return rows[0];
}

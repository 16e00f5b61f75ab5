import type { Queryable } from '../db/index.js';

export interface DncListRow {
  id: string;
  reseller_id: string | null;
  name: string;
  source: string | null;
  version: string | null;
  number_count: string | number;
  imported_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** The do-not-call lists and their numbers: every statement that reads or writes them. */
export class DncRepository {
  constructor(private readonly db: Queryable) {}

  async insert(row: { id: string; reseller_id: string | null; name: string; source: string | null; version: string | null }): Promise<DncListRow> {
    const { rows } = await this.db.query<DncListRow>(
      'INSERT INTO dnc_lists (id, reseller_id, name, source, version) VALUES ($1, $2, $3, $4, $5) RETURNING *',
      [row.id, row.reseller_id, row.name, row.source, row.version],
    );
    return rows[0]!;
  }

  async byId(id: string): Promise<DncListRow | undefined> {
    const { rows } = await this.db.query<DncListRow>('SELECT * FROM dnc_lists WHERE id = $1', [id]);
    return rows[0];
  }

  /** Locks the list for an import: two imports into one list run one after the other. */
  async lock(id: string): Promise<DncListRow | undefined> {
    const { rows } = await this.db.query<DncListRow>('SELECT * FROM dnc_lists WHERE id = $1 FOR UPDATE', [id]);
    return rows[0];
  }

  /** `where` is built by the service from scope, over the table's own columns. */
  async list(where: string, params: unknown[], limit: number, offset: number): Promise<{ rows: DncListRow[]; total: number }> {
    const total = await this.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM dnc_lists WHERE ${where}`, params);
    const { rows } = await this.db.query<DncListRow>(
      `SELECT * FROM dnc_lists WHERE ${where} ORDER BY created_at, id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, limit, offset],
    );
    return { rows, total: total.rows[0]!.n };
  }

  async delete(id: string): Promise<boolean> {
    const { rowCount } = await this.db.query('DELETE FROM dnc_lists WHERE id = $1', [id]);
    return rowCount > 0;
  }

  async clear(id: string): Promise<void> {
    await this.db.query('DELETE FROM dnc_numbers WHERE list_id = $1', [id]);
  }

  /**
   * Adds numbers (one multi-row statement for the batch, in the primary key's order, so the index
   * is written page by page rather than all over); answers how many were new.
   */
  async addNumbers(listId: string, numbers: readonly string[]): Promise<number> {
    const { rowCount } = await this.db.query(
      'INSERT INTO dnc_numbers (list_id, phone_number) SELECT $1, n FROM unnest($2::text[]) AS n ON CONFLICT DO NOTHING',
      [listId, [...numbers].sort()],
      { prepare: true },
    );
    return rowCount;
  }

  async finishImport(id: string, version: string | undefined): Promise<DncListRow> {
    const { rows } = await this.db.query<DncListRow>(
      `UPDATE dnc_lists SET number_count = (SELECT count(*) FROM dnc_numbers WHERE list_id = $1), version = coalesce($2, version),
              imported_at = now(), updated_at = now()
       WHERE id = $1 RETURNING *`,
      [id, version ?? null],
    );
    return rows[0]!;
  }

  async isListed(listId: string, phone: string): Promise<boolean> {
    const { rows } = await this.db.query('SELECT 1 FROM dnc_numbers WHERE list_id = $1 AND phone_number = $2', [listId, phone]);
    return rows.length > 0;
  }
}

/** A number found on a do-not-call list. */
export interface DncHit {
  list_id: string;
  name: string;
}

/**
 * For each (phone, lists) asked, the first of those lists (in the order named) that holds the
 * number, in one statement: push and dial time ask exactly this question.
 */
export async function findDncHits(q: Queryable, asks: readonly { phone: string; lists: readonly string[] }[]): Promise<(DncHit | undefined)[]> {
  if (asks.length === 0) return [];
  const { rows } = await q.query<{ i: number; list_id: string; name: string }>(
    // Each ask probes the primary key (list, number) on its own (a LATERAL subquery): joined
    // as a whole, the planner hashed the asks against every listed number, a scan of a million
    // numbers for each claim.
    `SELECT a.i, hit.list_id, l.name
     FROM jsonb_to_recordset($1::jsonb) AS a (i integer, phone text, lists jsonb)
     CROSS JOIN LATERAL (
       SELECT k.list_id
       FROM jsonb_array_elements_text(a.lists) WITH ORDINALITY AS k (list_id, pos)
       WHERE EXISTS (SELECT 1 FROM dnc_numbers d WHERE d.list_id = k.list_id AND d.phone_number = a.phone)
       ORDER BY k.pos
       LIMIT 1
     ) AS hit
     JOIN dnc_lists l ON l.id = hit.list_id`,
    [JSON.stringify(asks.map((a, i) => ({ i, phone: a.phone, lists: a.lists })))],
    { prepare: true },
  );
  const hits: (DncHit | undefined)[] = asks.map(() => undefined);
  for (const r of rows) hits[r.i] = { list_id: r.list_id, name: r.name };
  return hits;
}

/** Of `ids`, those that are neither lists of `resellerId` nor platform-wide ones. */
export async function foreignLists(q: Queryable, resellerId: string, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const { rows } = await q.query<{ id: string }>(
    `SELECT k.id FROM unnest($1::text[]) AS k (id)
     WHERE NOT EXISTS (SELECT 1 FROM dnc_lists l WHERE l.id = k.id AND (l.reseller_id = $2 OR l.reseller_id IS NULL))`,
    [ids, resellerId],
  );
  return rows.map((r) => r.id);
}

/**
 * Reading leads by filter, search and sort (GET /leads, GET /leads/export). The first page of a
 * reseller's newest leads is an index range scan (leads_reseller_created_idx) however many leads
 * it has; `capped` counting stops early instead of counting them all.
 */
import type { Queryable } from '../db/index.js';
import { COUNT_CAP, type LeadFilter, type SortKey } from './list-query.js';
import type { LeadRow } from '../lifecycle/index.js';

const E164 = /^\+[1-9]\d{1,14}$/;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** `created_to` given as a date covers that whole day. */
function dayAfter(date: string): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString();
}

const likePrefix = (text: string) => `${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export class LeadSearchRepository {
  constructor(private readonly db: Queryable) {}

  /** The WHERE condition (over alias `l`) for `scope` (its values already in `params`) and the filter; appends the filter's values. */
  condition(scope: string, params: unknown[], f: LeadFilter): string {
    const conds = [scope];
    const add = (sql: (p: string) => string, value: unknown) => {
      params.push(value);
      conds.push(sql(`$${params.length}`));
    };
    if (f.status !== undefined) add((p) => `l.status = ${p}`, f.status);
    if (f.outcome !== undefined) add((p) => `l.outcome = ${p}`, f.outcome);
    if (f.template !== undefined) add((p) => `l.template_name = ${p}`, f.template);
    if (f.template_id !== undefined) add((p) => `l.template_id = ${p}`, f.template_id);
    if (f.request_id !== undefined) add((p) => `l.request_id = ${p}`, f.request_id);
    if (f.reseller_id !== undefined) add((p) => `l.reseller_id = ${p}`, f.reseller_id);
    if (f.merchant_id !== undefined) add((p) => `l.merchant_id = ${p}`, f.merchant_id);
    if (f.execution_mode !== undefined) add((p) => `l.execution_mode = ${p}`, f.execution_mode);
    if (f.created_from !== undefined) add((p) => `l.created_at >= ${p}::timestamptz`, DATE_ONLY.test(f.created_from) ? `${f.created_from}T00:00:00Z` : f.created_from);
    if (f.created_to !== undefined) add((p) => `l.created_at < ${p}::timestamptz`, DATE_ONLY.test(f.created_to) ? dayAfter(f.created_to) : f.created_to);
    if (f.q !== undefined) {
      const q = f.q.trim();
      if (E164.test(q)) add((p) => `l.payload->>'customer_mobile_number' = ${p}`, q);
      else {
        params.push(q, likePrefix(q));
        conds.push(`(l.id = $${params.length - 1} OR l.request_id LIKE $${params.length})`);
      }
    }
    return conds.join(' AND ');
  }

  async page(
    where: string,
    params: unknown[],
    options: { sort: SortKey; order: 'asc' | 'desc'; limit: number; offset: number; count: 'exact' | 'capped' },
  ): Promise<{ rows: LeadRow[]; total: number; capped: boolean }> {
    const { rows } = await this.db.query<LeadRow>(
      `SELECT l.* FROM leads l WHERE ${where} ORDER BY ${orderBy(options.sort, options.order)}
       LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, options.limit, options.offset],
    );
    // A short first page is its own count.
    if (options.offset === 0 && rows.length < options.limit) return { rows, total: rows.length, capped: false };
    if (options.count === 'capped') {
      const { rows: n } = await this.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM (SELECT 1 FROM leads l WHERE ${where} LIMIT ${COUNT_CAP + 1}) x`, params);
      const total = n[0]!.n;
      return total > COUNT_CAP ? { rows, total: COUNT_CAP, capped: true } : { rows, total, capped: false };
    }
    const { rows: n } = await this.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM leads l WHERE ${where}`, params);
    return { rows, total: n[0]!.n, capped: false };
  }

  /**
   * Hands every matching lead to `each`, `batch` rows at a time, in push order (newest first, or
   * oldest with `asc`), each batch read after the last by keyset: an export of any size in constant
   * memory, without holding a transaction open. `each` returning false stops early.
   */
  async forEachBatch(where: string, params: unknown[], order: 'asc' | 'desc', batch: number, each: (rows: LeadRow[]) => Promise<boolean>): Promise<void> {
    const op = order === 'asc' ? '>' : '<';
    const dir = order === 'asc' ? 'ASC' : 'DESC';
    // The key travels as text: a JavaScript Date would drop the microseconds and skip or repeat rows.
    let after: { at: string; id: string } | undefined;
    for (;;) {
      const args = after ? [...params, after.at, after.id] : params;
      const keyset = after ? ` AND (l.created_at, l.id) ${op} ($${params.length + 1}::timestamptz, $${params.length + 2})` : '';
      const { rows } = await this.db.query<LeadRow & { key_at: string }>(
        `SELECT l.*, l.created_at::text AS key_at FROM leads l WHERE ${where}${keyset} ORDER BY l.created_at ${dir}, l.id ${dir} LIMIT ${Math.trunc(batch)}`,
        args,
      );
      if (rows.length === 0) return;
      const last = rows[rows.length - 1]!;
      if (!(await each(rows.map(({ key_at: _k, ...lead }) => lead))) || rows.length < batch) return;
      after = { at: last.key_at, id: last.id };
    }
  }
}

function orderBy(sort: SortKey, order: 'asc' | 'desc'): string {
  const dir = order === 'asc' ? 'ASC' : 'DESC';
  // Nullable columns put the leads without a value last either way.
  const nulls = sort === 'call_initiated_time' || sort === 'outcome' ? ' NULLS LAST' : '';
  return `l.${sort} ${dir}${nulls}, l.id ${dir}`;
}

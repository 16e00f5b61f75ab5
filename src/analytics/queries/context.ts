/**
 * What every analytics query function receives, and the one statement shape they all share: the
 * query's own SQL wrapped so that a single round trip returns the requested page and the total
 * number of rows (also when the page lies past the end).
 */
import type { Queryable } from '../../db/index.js';
import { DIALLED, type Params } from '../filters.js';
import type { Granularity } from '../schemas.js';

export interface QueryContext {
  /**
   * The rows to aggregate, one per lead, alias `l`, with the leads' column names for the facts:
   * `leads l`, or the payload terms of one filter key (../terms).
   */
  from: string;
  /** SQL of a row's activity time. */
  activityAt: string;
  /** WHERE clause over `from`: live leads in scope passing the filters; its values are in `params`. */
  where: string;
  params: Params;
  timeZone: string;
  granularity: Granularity;
  byWeekday: boolean;
  /**
   * Count calls, not leads (the request's `calls_only`): call_count, calls_over_time and the
   * heatmap count dialled leads, provider_breakdown too, and the outcome queries call outcomes.
   */
  callsOnly: boolean;
  /** The request's date range, which bounds a time series (`to` inclusive). */
  range: { from?: Date; to?: Date };
  limit: number;
  offset: number;
}

export interface RowsPage<T> {
  rows: T[];
  total: number;
}

/** A page, or undefined when the source could not answer exactly (the caller asks the leads). */
export type MaybeRowsPage<T> = RowsPage<T> | undefined;

export type AnalyticsQuery<T> = (q: Queryable, c: QueryContext) => Promise<RowsPage<T>>;

/** The condition `callsOnly` adds to the rows a counting query reads (alias `l`): ` AND dialled`, or nothing. */
export const callsCondition = (c: QueryContext): string => (c.callsOnly ? ` AND ${DIALLED}` : '');

/**
 * Runs `sql` (the rows of a query type) and returns the page and the total. `orderBy` names columns
 * of those rows; a column called `ord` only orders and is left out of the rows.
 */
export async function runPaged<T>(q: Queryable, c: QueryContext, sql: string, orderBy: string): Promise<RowsPage<T>> {
  return (await run<T>(q, c, sql, orderBy, false))!;
}

/**
 * runPaged for rows that carry a boolean column `exact` (left out of the rows): undefined when a
 * row says false, i.e. the answer would not be exact.
 */
export function runPagedChecked<T>(q: Queryable, c: QueryContext, sql: string, orderBy: string): Promise<MaybeRowsPage<T>> {
  return run<T>(q, c, sql, orderBy, true);
}

async function run<T>(q: Queryable, c: QueryContext, sql: string, orderBy: string, checked: boolean): Promise<MaybeRowsPage<T>> {
  const limit = c.params.add(c.limit);
  const offset = c.params.add(c.offset);
  const { rows } = await q.query<{ total: number; exact: boolean; data: T[] }>(
    `WITH result AS (${sql})
     SELECT (SELECT count(*) FROM result)::int AS total,
            ${checked ? 'coalesce((SELECT bool_and(exact) FROM result), true)' : 'true'} AS exact,
            coalesce((SELECT json_agg(to_jsonb(page) - 'ord' - 'exact' ORDER BY ${orderBy})
                      FROM (SELECT * FROM result ORDER BY ${orderBy} LIMIT ${limit} OFFSET ${offset}) AS page), '[]') AS data`,
    c.params.values,
  );
  const row = rows[0]!;
  return row.exact ? { rows: row.data, total: row.total } : undefined;
}

/**
 * Which requests the rollup answers, and its WHERE clause. The rollup holds whole UTC hours of
 * activity time per reseller, merchant, template and status (or outcome / attempts / provider):
 * it answers a request whose filters select whole rollup rows. Anything else (payload, duration or
 * sentiment filters; a date bound inside an hour, or an inclusive upper bound, which includes a
 * single instant of the next hour) is answered from the leads.
 */
import { scopeCondition, type Principal } from '../../auth/index.js';
import type { Params, ResolvedFilters } from '../filters.js';
import type { QueryType } from '../schemas.js';

const HOUR_MS = 3_600_000;

/** Query types whose answer depends on where local hours fall (buckets, heatmap). */
const ZONED: ReadonlySet<QueryType> = new Set(['calls_over_time', 'avg_duration_over_time', 'hourly_heatmap']);

const formatters = new Map<string, Intl.DateTimeFormat>();

/** Whether `timeZone` is a whole number of hours from UTC at `atMs` (a quick pre-check only). */
function wholeHourOffset(timeZone: string, atMs: number): boolean {
  if (timeZone.toUpperCase() === 'UTC') return true;
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone, minute: 'numeric', second: 'numeric' });
    formatters.set(timeZone, format);
  }
  const parts = format.formatToParts(new Date(Math.floor(atMs / HOUR_MS) * HOUR_MS));
  return parts.every((p) => (p.type === 'minute' || p.type === 'second' ? Number(p.value) === 0 : true));
}

/**
 * Whether the rollup can answer: the filters select whole rollup rows. For zoned query types the
 * zone must be a whole number of hours from UTC; checked here for today (so that India's +05:30
 * goes straight to the leads) and, exactly, by the queries themselves for every hour they read.
 */
export function rollupCanAnswer(queryType: QueryType, filters: ResolvedFilters, timeZone: string, callsOnly = false, now = Date.now()): boolean {
  // Its provider rows count leads, dialled or not (a claim undone before its dial keeps its provider).
  if (callsOnly && queryType === 'provider_breakdown') return false;
  if (filters.payload && Object.keys(filters.payload).length > 0) return false;
  if (filters.minDurationSeconds !== undefined || filters.maxDurationSeconds !== undefined) return false;
  if (filters.sentimentMin !== undefined || filters.sentimentMax !== undefined) return false;
  // The rollup stores reseller-level leads under merchant '', which no merchant filter may select.
  if (filters.merchantId === '') return false;
  if (filters.from && filters.from.getTime() % HOUR_MS !== 0) return false;
  if (filters.to && (filters.to.inclusive || filters.to.at.getTime() % HOUR_MS !== 0)) return false;
  if (ZONED.has(queryType) && !wholeHourOffset(timeZone, now)) return false;
  return true;
}

/** The rollup's WHERE clauses (alias `s`): `scope`, the caller's scope and tenant filters; `where`, those and the hours. */
export function rollupWhere(principal: Principal, filters: ResolvedFilters, params: Params): { scope: string; where: string } {
  const conds = [scopeCondition(principal, { reseller: 's.reseller_id', merchant: 's.merchant_id' }, params.values)];
  if (filters.resellerId !== undefined) conds.push(`s.reseller_id = ${params.add(filters.resellerId)}`);
  if (filters.merchantId !== undefined) conds.push(`s.merchant_id = ${params.add(filters.merchantId)}`);
  if (filters.templateId !== undefined) conds.push(`s.template_id = ${params.add(filters.templateId)}`);
  const scope = conds.join(' AND ');
  if (filters.from) conds.push(`s.hour >= ${params.add(filters.from.toISOString())}::timestamptz`);
  if (filters.to) conds.push(`s.hour < ${params.add(filters.to.at.toISOString())}::timestamptz`);
  return { scope, where: conds.join(' AND ') };
}

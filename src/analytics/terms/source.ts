/**
 * Payload filters answered from the payload terms (migrations 007 and 035): one row (key, value,
 * lead_no) per live lead and top-level scalar payload key, in an index ordered (key, value,
 * lead_no). A request with a payload filter reads the rows of its first key and value (an
 * index-only scan of exactly the matching leads), takes each lead's facts from the lead through
 * the covering index on its number (leads_facts_idx), and asks each further key for a row of the
 * same lead. The terms change only with a lead's payload or liveness, never when it is dialled.
 *
 * Terminology
 * - term: (key, value) of a lead's payload; stored when the key has at most 128 bytes and the value
 *   is a string of at most 256 bytes, a boolean, null or a number (see `storedTerm`).
 */
import type { Principal } from '../../auth/index.js';
import { ACTIVITY_AT, factConditions, LIVE_LEADS, type Params, type ResolvedFilters } from '../filters.js';

/** The rows the queries aggregate over this path: one per matching lead, the lead as `l`. */
export const TERMS_FROM = 'lead_payload_terms t JOIN leads l ON l.lead_no = t.lead_no';
export const TERMS_ACTIVITY_AT = ACTIVITY_AT;

const MAX_KEY_BYTES = 128;
const MAX_STRING_BYTES = 256;

/**
 * Whether the migration stores this filter term, i.e. whether every lead it matches has its row.
 * Every JSON number (a JavaScript double) fits the stored numbers' bound, so numbers always do.
 */
export function storedTerm(key: string, value: unknown): boolean {
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) return false;
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8') <= MAX_STRING_BYTES;
  return value === null || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
}

/** Whether the terms answer the request: it has a payload filter, and all its terms are stored. */
export function termsCanAnswer(filters: ResolvedFilters): boolean {
  const entries = Object.entries(filters.payload ?? {});
  return entries.length > 0 && entries.every(([key, value]) => storedTerm(key, value));
}

/** WHERE over TERMS_FROM: the first payload term, the other filters, and a row of each further term. */
export function termsWhere(principal: Principal, filters: ResolvedFilters, params: Params): string {
  const [first, ...others] = Object.entries(filters.payload ?? {});
  if (!first) throw new Error('termsWhere needs a payload filter');
  const conds = [`t.key = ${params.add(first[0])}`, `t.value = ${params.add(JSON.stringify(first[1]))}::jsonb`];
  // Written as the partial index's predicate, so the planner probes leads_facts_idx.
  conds.push(LIVE_LEADS, ...factConditions(principal, filters, params, TERMS_ACTIVITY_AT));
  for (const [k, v] of others) {
    conds.push(`EXISTS (SELECT 1 FROM lead_payload_terms x
                        WHERE x.key = ${params.add(k)} AND x.value = ${params.add(JSON.stringify(v))}::jsonb AND x.lead_no = t.lead_no)`);
  }
  return conds.join(' AND ');
}

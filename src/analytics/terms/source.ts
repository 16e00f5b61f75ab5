/**
 * Payload filters answered from the payload terms (migrations 007, 035 and 037): one row per live
 * lead and top-level scalar payload key, (key, value, lead_no) and the lead's facts, in an index
 * ordered (key, value, lead_no) that covers the facts. A request with a payload filter reads the
 * rows of its first key and value (an index-only scan of exactly the matching leads) and asks each
 * further key for a row of the same lead.
 *
 * A change of a lead's facts (a claim, a finish) does not rewrite its terms: it marks the lead
 * pending, and the folder rewrites them later (./fold.ts). So the rows are those of the leads not
 * pending, with the facts their terms hold, and those of the pending leads, with the facts read from
 * the lead: one snapshot, exact whether or not the folder has run.
 *
 * Terminology
 * - term: (key, value) of a lead's payload; stored when the key has at most 128 bytes and the value
 *   is a string of at most 256 bytes, a boolean, null or a number (see `storedTerm`).
 * - owner: the (reseller, merchant, template) of a lead, kept in the terms as a small number.
 * - pending lead: one whose facts changed since its terms were written.
 */
import type { Principal } from '../../auth/index.js';
import { factConditions, LIVE_LEADS, type Params, type ResolvedFilters } from '../filters.js';

/** The activity time in the rows of `termsFrom`. */
export const TERMS_ACTIVITY_AT = 'l.activity_at';

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

/**
 * The rows the queries aggregate over this path, one per lead matching the first payload term, as
 * `l` with the leads' column names for the facts (and `activity_at`).
 */
export function termsFrom(filters: ResolvedFilters, params: Params): string {
  const [first] = Object.entries(filters.payload ?? {});
  if (!first) throw new Error('termsFrom needs a payload filter');
  const key = params.add(first[0]);
  const value = `${params.add(JSON.stringify(first[1]))}::jsonb`;
  return `(SELECT t.lead_no, o.reseller_id, nullif(o.merchant_id, '') AS merchant_id, o.template_id, t.activity_at,
                  t.attempt_count, t.duration_seconds, t.sentiment, t.status, t.outcome, t.provider
           FROM lead_payload_terms t JOIN lead_owners o ON o.owner_no = t.owner_no
           WHERE t.key = ${key} AND t.value = ${value}
             AND NOT EXISTS (SELECT 1 FROM lead_terms_pending p WHERE p.lead_no = t.lead_no)
           UNION ALL
           SELECT l.lead_no, l.reseller_id, l.merchant_id, l.template_id, coalesce(l.call_initiated_time, l.created_at),
                  l.attempt_count, l.duration_seconds, l.sentiment, l.status, l.outcome, l.provider
           FROM leads l
           WHERE l.lead_no IN (SELECT p.lead_no FROM lead_terms_pending p) AND ${LIVE_LEADS}
             AND EXISTS (SELECT 1 FROM lead_payload_terms x WHERE x.key = ${key} AND x.value = ${value} AND x.lead_no = l.lead_no)
          ) AS l`;
}

/** WHERE over `termsFrom`: the other filters, and a row of each further payload term. */
export function termsWhere(principal: Principal, filters: ResolvedFilters, params: Params): string {
  const [, ...others] = Object.entries(filters.payload ?? {});
  const conds = factConditions(principal, filters, params, TERMS_ACTIVITY_AT);
  for (const [k, v] of others) {
    conds.push(`EXISTS (SELECT 1 FROM lead_payload_terms x
                        WHERE x.key = ${params.add(k)} AND x.value = ${params.add(JSON.stringify(v))}::jsonb AND x.lead_no = l.lead_no)`);
  }
  return conds.join(' AND ');
}

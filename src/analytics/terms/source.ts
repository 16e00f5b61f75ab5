/**
 * Payload filters answered from the payload terms (migrations 007, 035 and 037): one row per live
 * lead and top-level scalar payload key, (key, value, lead_no) and the lead's facts, in an index
 * ordered (key, value, lead_no) that covers the facts. A request with a payload filter reads the
 * rows of its first key and value (an index-only scan of exactly the matching leads, facts included)
 * and asks each further key for a row of the same lead.
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
import { ACTIVITY_AT, factConditions, LIVE_LEADS, tenantConditions, valueConditions, type Params, type ResolvedFilters } from '../filters.js';

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
 * The rows the queries aggregate over this path, one per lead in scope matching the payload filter
 * and every other filter, as `l` with the leads' column names for the facts (and `activity_at`).
 *
 * The filters are applied inside each branch. In the terms, the tenant filters become a list of
 * owner numbers, computed once (an InitPlan over the few rows of lead_owners) rather than joined:
 * a join's row estimate depends on the statistics of that small table, and an underestimate led
 * PostgreSQL to sort 67,000 rows on disk and to probe the pending leads row by row.
 */
export function termsFrom(principal: Principal, filters: ResolvedFilters, params: Params): string {
  const [first, ...others] = Object.entries(filters.payload ?? {});
  if (!first) throw new Error('termsFrom needs a payload filter');
  const key = params.add(first[0]);
  const value = `${params.add(JSON.stringify(first[1]))}::jsonb`;
  const owners = tenantConditions(principal, filters, params, { reseller: 'o.reseller_id', merchant: "nullif(o.merchant_id, '')", template: 'o.template_id' });
  const inTerms = [
    `l.key = ${key}`,
    `l.value = ${value}`,
    `l.owner_no = ANY (ARRAY(SELECT o.owner_no FROM lead_owners o WHERE ${owners.join(' AND ')}))`,
    ...valueConditions(filters, params, TERMS_ACTIVITY_AT),
    'NOT EXISTS (SELECT 1 FROM lead_terms_pending p WHERE p.lead_no = l.lead_no)',
  ];
  const inLeads = [
    'l.lead_no IN (SELECT p.lead_no FROM lead_terms_pending p)',
    LIVE_LEADS,
    ...factConditions(principal, filters, params, ACTIVITY_AT),
    `EXISTS (SELECT 1 FROM lead_payload_terms x WHERE x.key = ${key} AND x.value = ${value} AND x.lead_no = l.lead_no)`,
  ];
  // Each further key: a row of the same lead.
  for (const [k, v] of others) {
    const further = `EXISTS (SELECT 1 FROM lead_payload_terms x
                             WHERE x.key = ${params.add(k)} AND x.value = ${params.add(JSON.stringify(v))}::jsonb AND x.lead_no = l.lead_no)`;
    inTerms.push(further);
    inLeads.push(further);
  }
  return `(SELECT l.lead_no, l.activity_at, l.attempt_count, l.duration_seconds, l.sentiment, l.status, l.outcome, l.provider
           FROM lead_payload_terms l
           WHERE ${inTerms.join(' AND ')}
           UNION ALL
           SELECT l.lead_no, ${ACTIVITY_AT}, l.attempt_count, l.duration_seconds, l.sentiment, l.status, l.outcome, l.provider
           FROM leads l
           WHERE ${inLeads.join(' AND ')}
          ) AS l`;
}

/**
 * Rewriting the terms of pending leads (migration 037): a claim, a finish or any other change of a
 * lead's facts appends the lead's number to lead_terms_pending instead of rewriting its terms, and
 * the folder (../fold.ts) rewrites them here, in batches, off the lifecycle's statements. Until then
 * readers take a pending lead's facts from the lead itself (./source.ts), so answers never wait for
 * this.
 *
 * The batch is one statement, so the pending rows it removes and the facts it writes are read in one
 * snapshot: a lead changed after that snapshot has a newer pending row, which stays. Term rows that
 * another transaction holds (a payload edit replacing them) are skipped, never waited for, and their
 * lead is put back as pending: the folder cannot deadlock with a writer.
 */
import type { Queryable } from '../../db/index.js';
import { LIVE_LEADS } from '../filters.js';

/**
 * Pending rows taken per round. A round is one transaction, which holds the rows it rewrites until it
 * commits: 2,000 leads of five terms took 0.9 s with the terms in memory, and up to 14 s when every
 * term had to be read from disk (a million leads, 7 ms a lead). The folder runs rounds back to back
 * while they come back full (../fold.ts).
 */
export const TERMS_FOLD_BATCH = 2_000;

/** A pending lead's owner may be new (its reseller, merchant or template changed): record it first. */
const ADD_OWNERS = `
INSERT INTO lead_owners (reseller_id, merchant_id, template_id)
SELECT DISTINCT l.reseller_id, coalesce(l.merchant_id, ''), l.template_id
FROM leads l
WHERE l.lead_no IN (SELECT p.lead_no FROM lead_terms_pending p) AND ${LIVE_LEADS}
  AND NOT EXISTS (SELECT 1 FROM lead_owners o
                  WHERE o.reseller_id = l.reseller_id AND o.merchant_id = coalesce(l.merchant_id, '') AND o.template_id = l.template_id)
ON CONFLICT DO NOTHING`;

const REWRITE = `
WITH pend AS (
  DELETE FROM lead_terms_pending
  WHERE ctid = ANY (ARRAY(SELECT ctid FROM lead_terms_pending LIMIT $1))
  RETURNING lead_no),
want AS (
  SELECT r.* FROM leads l CROSS JOIN LATERAL lead_term_rows(l) AS r
  WHERE l.lead_no IN (SELECT lead_no FROM pend) AND ${LIVE_LEADS}),
locked AS (
  SELECT x.ctid AS tid, w.*
  FROM want w JOIN lead_payload_terms x ON x.key = w.key AND x.value = w.value AND x.lead_no = w.lead_no
  WHERE w.owner_no IS NOT NULL
  FOR UPDATE OF x SKIP LOCKED),
rewritten AS (
  UPDATE lead_payload_terms x
  SET owner_no = k.owner_no, activity_at = k.activity_at, attempt_count = k.attempt_count, duration_seconds = k.duration_seconds,
      sentiment = k.sentiment, status = k.status, outcome = k.outcome, provider = k.provider
  FROM locked k WHERE x.ctid = k.tid
  RETURNING x.lead_no),
again AS (
  INSERT INTO lead_terms_pending (lead_no)
  SELECT DISTINCT w.lead_no FROM want w
  WHERE NOT EXISTS (SELECT 1 FROM locked k WHERE k.key = w.key AND k.value = w.value AND k.lead_no = w.lead_no))
SELECT (SELECT count(*) FROM pend)::int AS taken, (SELECT count(*) FROM rewritten)::int AS rewritten`;

/** Rewrites the terms of up to `batch` pending rows' leads; returns the number of pending rows taken. */
export async function rewritePendingTerms(q: Queryable, batch = TERMS_FOLD_BATCH): Promise<number> {
  const pending = await q.query<{ any: boolean }>('SELECT EXISTS (SELECT 1 FROM lead_terms_pending) AS any', [], { prepare: true });
  if (!pending.rows[0]?.any) return 0;
  await q.query(ADD_OWNERS, [], { prepare: true });
  const { rows } = await q.query<{ taken: number }>(REWRITE, [batch], { prepare: true });
  return rows[0]?.taken ?? 0;
}

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
 * Pending rows a round starts from (it takes every row of their leads). A round is one transaction,
 * which holds the rows it rewrites until it commits: 2,000 leads of five terms took 0.34 s with the
 * terms in memory and 4 s when every term had to be read from disk (a million leads). The folder
 * runs rounds back to back while they come back full (../fold.ts).
 */
export const TERMS_FOLD_BATCH = 2_000;

/**
 * A pending lead's owner may be new (its reseller, merchant or template changed): recorded first, for
 * the leads the round is about to take (the same first rows of the table; should the two statements
 * see different rows, a lead whose owner is missing is only left pending for the next round).
 */
const ADD_OWNERS = `
INSERT INTO lead_owners (reseller_id, merchant_id, template_id)
SELECT DISTINCT l.reseller_id, coalesce(l.merchant_id, ''), l.template_id
FROM leads l
WHERE l.lead_no IN (SELECT p.lead_no FROM lead_terms_pending p LIMIT $1) AND ${LIVE_LEADS}
  AND NOT EXISTS (SELECT 1 FROM lead_owners o
                  WHERE o.reseller_id = l.reseller_id AND o.merchant_id = coalesce(l.merchant_id, '') AND o.template_id = l.template_id)
ON CONFLICT DO NOTHING`;

// Each lead and each of its terms is looked up by its key, one index probe at a time (LATERAL, with
// OFFSET 0 so the planner keeps it so): the row counts of a data-modifying CTE are guessed, and a
// guess of the whole pending table made PostgreSQL hash all 4.8 million terms of a million leads to
// find 9,500 of them (8 s instead of 0.1).
const REWRITE = `
WITH pend AS (
  DELETE FROM lead_terms_pending
  WHERE lead_no IN (SELECT lead_no FROM lead_terms_pending LIMIT $1)
  RETURNING lead_no),
want AS (
  SELECT r.*
  FROM (SELECT DISTINCT lead_no FROM pend) AS p
  CROSS JOIN LATERAL (SELECT * FROM leads l WHERE l.lead_no = p.lead_no AND ${LIVE_LEADS} OFFSET 0) AS l
  CROSS JOIN LATERAL lead_term_rows(l) AS r),
locked AS (
  SELECT x.tid, w.*
  FROM want w
  CROSS JOIN LATERAL (SELECT x.ctid AS tid FROM lead_payload_terms x
                      WHERE x.key = w.key AND x.value = w.value AND x.lead_no = w.lead_no
                      FOR UPDATE SKIP LOCKED) AS x
  WHERE w.owner_no IS NOT NULL),
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

/**
 * Rewrites the terms of the leads of the first `batch` pending rows, taking every pending row of those
 * leads (a lead claimed and finished since the last round is rewritten once); returns the number of
 * pending rows taken.
 */
export async function rewritePendingTerms(q: Queryable, batch = TERMS_FOLD_BATCH): Promise<number> {
  const pending = await q.query<{ any: boolean }>('SELECT EXISTS (SELECT 1 FROM lead_terms_pending) AS any', [], { prepare: true });
  if (!pending.rows[0]?.any) return 0;
  await q.query(ADD_OWNERS, [batch], { prepare: true });
  const { rows } = await q.query<{ taken: number }>(REWRITE, [batch], { prepare: true });
  return rows[0]?.taken ?? 0;
}

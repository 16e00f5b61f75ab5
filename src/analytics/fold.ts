/**
 * The analytics folder: the background work that keeps the rollup and the payload terms cheap to
 * write. Each round, in one transaction, it folds the rollup's deltas (./rollup) and rewrites the
 * terms of the leads whose facts changed (./terms). One folder at a time (a transaction-scoped
 * advisory lock, tried, never waited for): writers of leads never wait for it, and readers never
 * need it to have run (they read what is still pending too).
 */
import type { Db } from '../db/index.js';
import { foldDeltas } from './rollup/index.js';
import { rewritePendingTerms, TERMS_FOLD_BATCH } from './terms/index.js';

/** Any constant: the advisory lock of the folder. */
const FOLD_LOCK_KEY = 7_230_552;

export interface FoldResult {
  /** False when another folder held the lock (nothing was done). */
  folded: boolean;
  /** Delta rows moved into the rollup. */
  moved: number;
  /** Pending term rows taken (their leads' terms rewritten). */
  terms: number;
  /** Whether more may be pending: the round took a full batch. */
  more: boolean;
}

/**
 * Pending term rows a backlog round takes on the embedded database: about 100 ms of its one thread
 * (2,000 took 300 to 500 ms), shorter than the time a paced campaign's claims look ahead for their
 * start slots, so a round between two claims costs the campaign no start.
 */
const EMBEDDED_TERMS_BATCH = 500;

/** One round of folding (at most `termsBatch` pending term rows); skips (folded: false) while another folder runs. */
export async function foldAnalytics(db: Db, termsBatch = TERMS_FOLD_BATCH): Promise<FoldResult> {
  return db.tx(async (q) => {
    const { rows } = await q.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS locked', [FOLD_LOCK_KEY], { prepare: true });
    if (!rows[0]?.locked) return { folded: false, moved: 0, terms: 0, more: false };
    // Its statements are planned from guessed row counts (data-modifying CTEs): a guess too high
    // must not also cost a JIT compilation (0.6 s seen) every round.
    await q.query('SET LOCAL jit = off', [], { prepare: true });
    const moved = await foldDeltas(q);
    const terms = await rewritePendingTerms(q, termsBatch);
    return { folded: true, moved, terms, more: terms >= termsBatch };
  });
}

/** What waits for the folder: rollup delta rows and pending term rows (read at scrape time, for /metrics). */
export async function analyticsBacklog(db: Db): Promise<Record<string, number>> {
  const { rows } = await db.query<{ rollup_deltas: number; pending_terms: number }>(
    `SELECT ((SELECT count(*) FROM lead_stats_delta) + (SELECT count(*) FROM lead_stats_breakdown_delta))::int AS rollup_deltas,
            (SELECT count(*) FROM lead_terms_pending)::int AS pending_terms`,
  );
  return { ...rows[0]! };
}

/**
 * Runs the folder every `intervalMs` until `signal` aborts, and again soon after a round that took
 * a full batch (a backlog is worked off in short transactions); `onError` hears failures (the next
 * round tries again). On PostgreSQL a backlog round follows the last at once. On the embedded
 * database, whose one thread also serves the claims, pushes and call writes, backlog rounds are
 * smaller (EMBEDDED_TERMS_BATCH) and each is followed by a rest as long as the round itself: working
 * off a large import then takes at most half of that thread, and a paced campaign's claims never
 * wait long behind a round.
 * Returns a promise that settles when the loop has stopped.
 */
export async function runFolder(db: Db, options: { intervalMs: number; signal: AbortSignal; onError: (err: unknown) => void }): Promise<void> {
  const { intervalMs, signal, onError } = options;
  const termsBatch = db.kind === 'pglite' ? EMBEDDED_TERMS_BATCH : TERMS_FOLD_BATCH;
  while (!signal.aborted) {
    let restMs = intervalMs;
    try {
      const started = performance.now();
      if ((await foldAnalytics(db, termsBatch)).more) {
        if (db.kind !== 'pglite') continue;
        restMs = Math.min(intervalMs, performance.now() - started);
      }
    } catch (err) {
      if (signal.aborted) break;
      onError(err);
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, restMs);
      signal.addEventListener('abort', done, { once: true });
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
    });
  }
}

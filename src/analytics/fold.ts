/**
 * The analytics folder: the background work that keeps the rollup and the payload terms cheap to
 * write. Each round, in one transaction, it folds the rollup's deltas (./rollup) and rewrites the
 * terms of the leads whose facts changed (./terms). One folder at a time (a transaction-scoped
 * advisory lock, tried, never waited for): writers of leads never wait for it, and readers never
 * need it to have run (they read what is still pending too).
 */
import type { Db } from '../db/index.js';
import { foldDeltas } from './rollup/index.js';
import { rewritePendingTerms } from './terms/index.js';

/** Any constant: the advisory lock of the folder. */
const FOLD_LOCK_KEY = 7_230_552;

export interface FoldResult {
  /** False when another folder held the lock (nothing was done). */
  folded: boolean;
  /** Delta rows moved into the rollup. */
  moved: number;
  /** Pending term rows taken (their leads' terms rewritten). */
  terms: number;
}

/** One round of folding; skips (folded: false) while another folder runs. */
export async function foldAnalytics(db: Db): Promise<FoldResult> {
  return db.tx(async (q) => {
    const { rows } = await q.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS locked', [FOLD_LOCK_KEY], { prepare: true });
    if (!rows[0]?.locked) return { folded: false, moved: 0, terms: 0 };
    const moved = await foldDeltas(q);
    return { folded: true, moved, terms: await rewritePendingTerms(q) };
  });
}

/**
 * Runs the folder every `intervalMs` until `signal` aborts; `onError` hears failures (the next
 * round tries again). Returns a promise that settles when the loop has stopped.
 */
export async function runFolder(db: Db, options: { intervalMs: number; signal: AbortSignal; onError: (err: unknown) => void }): Promise<void> {
  const { intervalMs, signal, onError } = options;
  while (!signal.aborted) {
    try {
      await foldAnalytics(db);
    } catch (err) {
      if (signal.aborted) break;
      onError(err);
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, intervalMs);
      signal.addEventListener('abort', done, { once: true });
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
    });
  }
}

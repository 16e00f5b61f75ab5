/**
 * Transactions PostgreSQL rolled back to break a conflict with another transaction: a deadlock
 * (40P01: two transactions each waiting for a row the other locked) or a serialization failure
 * (40001). Nothing of such a transaction was written, and PostgreSQL's own advice is to run it
 * again; the second run usually waits for the other transaction instead of crossing it.
 */
const CONFLICTS = new Set(['40P01', '40001']);

export function isConflict(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && CONFLICTS.has(code);
}

/**
 * Runs `run` (one whole transaction, with no effect outside the database) again when PostgreSQL
 * rolled it back for a conflict, up to `tries` runs in all; any other failure, or the last
 * conflict, is thrown.
 */
export async function retryConflicts<T>(run: () => Promise<T>, tries = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      if (attempt >= tries || !isConflict(err)) throw err;
    }
  }
}

/**
 * What the main thread and the embedded database's thread say to each other (see pglite.ts and
 * pglite-thread.ts). Every request carries an id; the thread answers each once, in any order.
 *
 * Glossary: a *unit* is what the thread runs alone: one statement outside a transaction, or a
 * whole transaction (BEGIN, the statements the caller sends with its `tx` number, COMMIT or
 * ROLLBACK). While a transaction is open, requests without its number wait, as they would for
 * PGlite's own transaction lock.
 */
export type ThreadRequest =
  | { op: 'query'; id: number; tx?: number; sql: string; params: readonly unknown[]; prepare: boolean }
  | { op: 'exec'; id: number; tx?: number; sql: string }
  | { op: 'begin'; id: number; tx: number }
  | { op: 'end'; id: number; tx: number; commit: boolean }
  | { op: 'listen'; id: number; channel: string }
  | { op: 'unlisten'; id: number; channel: string }
  | { op: 'dump'; id: number }
  | { op: 'close'; id: number };

/** A database error as plain data (structured clone keeps only an Error's message and stack). */
export interface ThreadError {
  message: string;
  name?: string;
  stack?: string;
  /** PostgreSQL's fields (code, detail, constraint, ...), when the error came from the database. */
  fields: Record<string, string>;
}

export type ThreadReply =
  | { id: number; ok: true; rows?: unknown[]; rowCount?: number; data?: ArrayBuffer }
  | { id: number; ok: false; error: ThreadError }
  | { notify: string }
  | { ready: true }
  | { startError: ThreadError };

export interface ThreadOptions {
  /** Directory of the database files; undefined keeps everything in memory. */
  dataDir?: string;
  /** A tarball of a database's files to start from (an in-memory database only). */
  loadDataDir?: ArrayBuffer;
}

/** The fields of a PostgreSQL error worth carrying across (those of pg's and PGlite's DatabaseError). */
export const ERROR_FIELDS = [
  'code', 'severity', 'detail', 'hint', 'position', 'internalPosition', 'internalQuery', 'where',
  'schema', 'table', 'column', 'dataType', 'constraint', 'file', 'line', 'routine',
] as const;

export function toThreadError(err: unknown): ThreadError {
  if (!(err instanceof Error)) return { message: String(err), fields: {} };
  const fields: Record<string, string> = {};
  for (const key of ERROR_FIELDS) {
    const value = (err as unknown as Record<string, unknown>)[key];
    if (typeof value === 'string') fields[key] = value;
  }
  return { message: err.message, name: err.name, ...(err.stack ? { stack: err.stack } : {}), fields };
}

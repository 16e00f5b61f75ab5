/**
 * The database seen by the rest of Dialer: plain SQL with positional parameters, the same on
 * embedded PGlite and on PostgreSQL. Repositories are the only callers.
 */
export interface QueryResult<T> {
  rows: T[];
  /** Rows changed by an INSERT, UPDATE or DELETE; rows returned otherwise. */
  rowCount: number;
}

export interface QueryOptions {
  /**
   * A hot statement, run with the same text again and again (claims, finishes, pushes): PostgreSQL
   * parses it once per connection and may keep its plan (a named prepared statement), instead of
   * parsing and planning it on every run. Only for fixed SQL text: each distinct text is kept by
   * every connection (and by embedded PGlite's thread) for its life.
   */
  prepare?: boolean;
  /**
   * In a transaction: its last statement. COMMIT is sent right behind it, without waiting for its
   * answer (one round trip fewer), so the transaction commits when this statement succeeds and
   * rolls back when it fails. A statement after it is refused; code after it must not fail, since
   * the transaction is already committed. Outside a transaction it changes nothing.
   */
  final?: boolean;
}

/** What a statement sent after a transaction's final statement is refused with. */
export function statementAfterFinal(): Error {
  return new Error('a statement after the final statement of a transaction (its COMMIT has been sent)');
}

export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<QueryResult<T>>;
  /** Runs a script of several statements (no parameters): migrations. */
  exec(sql: string): Promise<void>;
}

export interface Db extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /**
   * Calls `onNotify` on every NOTIFY on `channel` (PostgreSQL LISTEN, or PGlite's in-process
   * equivalent). Resolves to a function that stops listening. Best effort: callers also poll.
   * On PostgreSQL a lost connection (a server restart, a network cut) is reconnected and LISTEN
   * issued again, with pauses that grow to a second at most; `events` hears of each step, and
   * `onNotify` is called once on return (notifications sent meanwhile were lost).
   */
  listen(channel: string, onNotify: () => void, events?: ListenEvents): Promise<() => Promise<void>>;
}

export interface ListenEvents {
  /** The listening connection was lost; reconnecting. */
  lost?(err: Error | undefined): void;
  /** A reconnection is due `pauseMs` from now (the `attempt`th since the loss, from 1). */
  retrying?(attempt: number, pauseMs: number): void;
  /** Listening again after `attempts` tries. */
  restored?(attempts: number): void;
}

import { createHash } from 'node:crypto';
import pg from 'pg';
import { statementAfterFinal, type Db, type Queryable, type QueryOptions, type QueryResult } from './types.js';

// Timestamps come back as Date (pg's default); int8 (counts) as JavaScript numbers, since no count
// Dialer keeps comes near 2^53; numeric stays a string and repositories convert it.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => Number(value));

/** The prepared statement name of a hot statement's text (see QueryOptions.prepare). */
const names = new Map<string, string>();
function statementName(sql: string): string {
  let name = names.get(sql);
  if (!name) {
    name = `dialer_${createHash('sha256').update(sql).digest('base64url').slice(0, 20)}`;
    names.set(sql, name);
  }
  return name;
}

function wrap(client: pg.Pool | pg.PoolClient): Queryable {
  return {
    async query<T>(sql: string, params: readonly unknown[] = [], options?: QueryOptions): Promise<QueryResult<T>> {
      return toResult<T>(await send(client, sql, params, options));
    },
    async exec(sql: string): Promise<void> {
      await client.query(sql);
    },
  };
}

function send(client: pg.Pool | pg.PoolClient, sql: string, params: readonly unknown[], options: QueryOptions | undefined): Promise<pg.QueryResult> {
  return options?.prepare
    ? client.query({ name: statementName(sql), text: sql, values: params as unknown[] })
    : client.query(sql, params as unknown[]);
}

function toResult<T>(result: pg.QueryResult): QueryResult<T> {
  return { rows: result.rows as T[], rowCount: result.rowCount ?? result.rows.length };
}

/**
 * The socket under a pool client, corked while statements that go out together are queued (pg's
 * own extended-protocol messages are written the same way). pg does not export it: should a later
 * pg not have it, statements still go out in order, a write each.
 */
function socketOf(client: pg.PoolClient): { cork(): void; uncork(): void } {
  const stream = (client as unknown as { connection?: { stream?: { cork?(): void; uncork?(): void } } }).connection?.stream;
  return stream?.cork && stream.uncork ? (stream as { cork(): void; uncork(): void }) : { cork() {}, uncork() {} };
}

const LISTEN_RETRY_MAX_PAUSE_MS = 1_000;

/**
 * The pause before a lost LISTEN connection's `attempt`th reconnection (from 0): it doubles from
 * 250 ms to at most a second. A worker is deaf to new leads until LISTEN is back (it only polls), so
 * the pause stays short: a reconnection costs the server one refused connection a second per
 * process, while a longer cap left workers deaf for seconds after the server had returned.
 */
function listenRetryPauseMs(attempt: number): number {
  return Math.min(250 * 2 ** attempt, LISTEN_RETRY_MAX_PAUSE_MS);
}

export async function openPostgres(connectionString: string, options: { max?: number } = {}): Promise<Db> {
  // Pipeline mode: statements queued on a client are sent without waiting for the answers before
  // them. Only a transaction queues more than one (BEGIN with its first statement, the last
  // statement with COMMIT); everything else sends one statement at a time, as before.
  const pool = new pg.Pool({ connectionString, max: options.max ?? 10, pipeline: true } as pg.PoolConfig);
  // An idle client that loses its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  // Fail fast with a clear message when the server is unreachable.
  const probe = await pool.connect();
  probe.release();
  const root = wrap(pool);
  const listeners = new Set<() => Promise<void>>();
  return {
    kind: 'postgres',
    query: root.query,
    exec: root.exec,
    async tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      // A checked-out client has no pool listener: a connection lost between statements (a server
      // restart) would be an uncaught 'error' that ends the process. Note it; the client is then
      // discarded on release instead of going back to the pool.
      let broken: Error | undefined;
      const onError = (err: Error) => {
        broken ??= err;
      };
      client.on('error', onError);
      // BEGIN goes out in one write with the transaction's first statement (queued in the same
      // tick), and COMMIT with a statement marked `final`: two round trips fewer per transaction.
      const socket = socketOf(client);
      socket.cork();
      const begun = client.query('BEGIN');
      begun.catch(() => undefined);
      process.nextTick(() => socket.uncork());
      let committed: Promise<unknown> | undefined;
      const q: Queryable = {
        async query<T>(sql: string, params: readonly unknown[] = [], options?: QueryOptions): Promise<QueryResult<T>> {
          if (committed) throw statementAfterFinal();
          if (!options?.final) return toResult<T>(await send(client, sql, params, options));
          socket.cork();
          const sent = send(client, sql, params, options);
          // After a failed statement PostgreSQL answers this COMMIT by rolling back.
          committed = client.query('COMMIT');
          committed.catch(() => undefined);
          socket.uncork();
          return toResult<T>(await sent);
        },
        async exec(sql: string): Promise<void> {
          if (committed) throw statementAfterFinal();
          await client.query(sql);
        },
      };
      try {
        const result = await fn(q);
        await begun;
        await (committed ?? client.query('COMMIT'));
        return result;
      } catch (err) {
        // A COMMIT already sent ends the transaction (a rollback if its statement failed).
        await (committed ?? client.query('ROLLBACK')).catch((endErr: Error) => {
          broken ??= endErr;
        });
        throw err;
      } finally {
        client.off('error', onError);
        client.release(broken);
      }
    },
    async close() {
      await Promise.all([...listeners].map((stop) => stop()));
      await pool.end();
    },
    async listen(channel, onNotify, events = {}) {
      if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`invalid channel name ${channel}`);
      // A dedicated connection: LISTEN lasts as long as the session, so a lost session is replaced.
      let current: pg.Client | undefined;
      let stopped = false;
      let timer: NodeJS.Timeout | undefined;
      let attempts = 0;
      const subscribe = async (): Promise<pg.Client> => {
        const client = new pg.Client({ connectionString });
        client.on('error', (err) => lost(client, err));
        client.on('end', () => lost(client, undefined));
        client.on('notification', (message) => {
          if (message.channel === channel) onNotify();
        });
        try {
          await client.connect();
          await client.query(`LISTEN ${channel}`);
        } catch (err) {
          await client.end().catch(() => {});
          throw err;
        }
        return client;
      };
      const lost = (client: pg.Client, err: Error | undefined) => {
        if (stopped || client !== current) return;
        current = undefined;
        void client.end().catch(() => {});
        events.lost?.(err);
        retry();
      };
      const retry = () => {
        if (stopped || timer) return;
        const pauseMs = listenRetryPauseMs(attempts);
        attempts++;
        events.retrying?.(attempts, pauseMs);
        timer = setTimeout(() => {
          timer = undefined;
          subscribe().then(
            (client) => {
              if (stopped) return void client.end().catch(() => {});
              current = client;
              events.restored?.(attempts);
              attempts = 0;
              onNotify();
            },
            () => retry(),
          );
        }, pauseMs);
      };
      current = await subscribe();
      const stop = async () => {
        stopped = true;
        clearTimeout(timer);
        listeners.delete(stop);
        await current?.end().catch(() => {});
      };
      listeners.add(stop);
      return stop;
    },
  };
}

import { Worker } from 'node:worker_threads';
import { type ThreadError, type ThreadOptions, type ThreadReply, type ThreadRequest } from './pglite-messages.js';
import { statementAfterFinal, type Db, type Queryable, type QueryOptions, type QueryResult } from './types.js';

/** A PostgreSQL error raised in the database's thread, with the same fields (code, detail, ...) as pg's. */
export class EmbeddedDatabaseError extends Error {
  override name = 'DatabaseError';
  constructor(error: ThreadError) {
    super(error.message);
    Object.assign(this, error.fields);
    if (error.stack) this.stack = `${this.name}: ${error.message}\n    (in the embedded database's thread)\n${error.stack.split('\n').slice(1).join('\n')}`;
  }
}

type Pending = { resolve: (reply: Extract<ThreadReply, { ok: true }>) => void; reject: (err: Error) => void };
type Request = ThreadRequest extends infer R ? (R extends ThreadRequest ? Omit<R, 'id'> : never) : never;

export interface PgliteDb extends Db {
  readonly kind: 'pglite';
  /** A tarball of the database's files (tests start from a migrated snapshot). */
  dump(): Promise<Blob>;
}

/**
 * Embedded PostgreSQL (PGlite, WebAssembly) in a worker thread of its own: a long statement
 * (an analytics query, an import's batch, a migration) runs beside the event loop instead of on
 * it, so live calls keep their audio pacing. `dataDir` undefined keeps everything in memory (tests).
 * PGlite is single-process: the caller holds the data-directory lock (see lock.ts).
 *
 * Durability: see docs/database.md. Every commit is written to the operating system before it is
 * acknowledged (it survives the process being killed); PGlite does not fsync, so a power loss or
 * operating-system crash can lose the last commits.
 */
export async function openPglite(dataDir: string | undefined, options: { loadDataDir?: Blob } = {}): Promise<PgliteDb> {
  const threadOptions: ThreadOptions = {
    ...(dataDir ? { dataDir } : {}),
    ...(options.loadDataDir ? { loadDataDir: await options.loadDataDir.arrayBuffer() } : {}),
  };
  const worker = new Worker(new URL('./pglite-thread.mjs', import.meta.url), {
    workerData: threadOptions,
    transferList: threadOptions.loadDataDir ? [threadOptions.loadDataDir] : [],
  });
  const pending = new Map<number, Pending>();
  const listeners = new Map<string, Set<() => void>>();
  let nextId = 1;
  let nextTx = 1;
  let failure: Error | undefined;

  const failAll = (err: Error) => {
    failure ??= err;
    for (const p of pending.values()) p.reject(failure);
    pending.clear();
  };

  await new Promise<void>((resolve, reject) => {
    const onStartExit = (code: number) => reject(new Error(`the embedded database's thread exited (code ${code}) while starting`));
    worker.once('error', reject);
    worker.once('exit', onStartExit);
    worker.on('message', function onStart(reply: ThreadReply) {
      if ('ready' in reply) resolve();
      else if ('startError' in reply) reject(new EmbeddedDatabaseError(reply.startError));
      else return;
      worker.off('message', onStart);
      worker.off('error', reject);
      worker.off('exit', onStartExit);
    });
  }).catch(async (err: unknown) => {
    await worker.terminate();
    throw err;
  });

  worker.on('message', (reply: ThreadReply) => {
    if ('notify' in reply) {
      for (const onNotify of listeners.get(reply.notify) ?? []) onNotify();
      return;
    }
    if (!('id' in reply)) return;
    const p = pending.get(reply.id);
    if (!p) return;
    pending.delete(reply.id);
    if (reply.ok) p.resolve(reply);
    else p.reject(new EmbeddedDatabaseError(reply.error));
  });
  worker.on('error', (err) => failAll(new Error(`the embedded database's thread failed: ${err.message}`, { cause: err })));
  worker.on('exit', (code) => failAll(new Error(`the embedded database's thread has stopped (exit code ${code})`)));

  const call = (request: Request): Promise<Extract<ThreadReply, { ok: true }>> => {
    if (failure) return Promise.reject(failure);
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      worker.postMessage({ ...request, id } as ThreadRequest);
    });
  };

  /** A transaction's statements, or the database's outside one; `final` sends the transaction's COMMIT behind its statement. */
  const queryable = (tx?: number, onFinal?: () => void): Queryable => {
    let ended = false;
    return {
      async query<T>(sql: string, params: readonly unknown[] = [], queryOptions?: QueryOptions): Promise<QueryResult<T>> {
        if (ended) throw statementAfterFinal();
        const sent = call({ op: 'query', sql, params, prepare: queryOptions?.prepare === true, ...(tx ? { tx } : {}) });
        if (queryOptions?.final && onFinal) {
          ended = true;
          onFinal();
        }
        const reply = await sent;
        return { rows: (reply.rows ?? []) as T[], rowCount: reply.rowCount ?? 0 };
      },
      async exec(sql: string): Promise<void> {
        if (ended) throw statementAfterFinal();
        await call({ op: 'exec', sql, ...(tx ? { tx } : {}) });
      },
    };
  };
  const root = queryable();

  return {
    kind: 'pglite',
    query: root.query,
    exec: root.exec,
    async tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
      const tx = nextTx++;
      // BEGIN is sent, not waited for: the thread runs it before the transaction's first statement
      // (messages arrive in order), which saves the thread a round trip to this one, idle with the
      // transaction open. A BEGIN that fails fails the transaction's statements and its commit.
      const begun = call({ op: 'begin', tx });
      begun.catch(() => undefined);
      // A statement marked `final` has its COMMIT sent right behind it (the thread runs them in
      // order; after a failed statement PGlite answers the COMMIT by rolling back).
      let committed: Promise<unknown> | undefined;
      const q = queryable(tx, () => {
        committed = call({ op: 'end', tx, commit: true });
        committed.catch(() => undefined);
      });
      let result: T;
      try {
        result = await fn(q);
        await begun;
      } catch (err) {
        await (committed ?? call({ op: 'end', tx, commit: false })).catch(() => undefined);
        throw err;
      }
      await (committed ?? call({ op: 'end', tx, commit: true }));
      return result;
    },
    async close() {
      if (!failure) await call({ op: 'close' });
      failAll(new Error('the embedded database is closed'));
      await worker.terminate();
    },
    async listen(channel, onNotify) {
      let set = listeners.get(channel);
      if (!set) {
        set = new Set();
        listeners.set(channel, set);
        await call({ op: 'listen', channel });
      }
      set.add(onNotify);
      return async () => {
        set.delete(onNotify);
        if (set.size > 0 || listeners.get(channel) !== set) return;
        listeners.delete(channel);
        if (!failure) await call({ op: 'unlisten', channel });
      };
    },
    async dump() {
      const reply = await call({ op: 'dump' });
      return new Blob([reply.data ?? new ArrayBuffer(0)]);
    },
  };
}

/** A tarball of an in-memory PGlite's files (tests start from a migrated snapshot). */
export async function dumpPglite(db: PgliteDb): Promise<Blob> {
  return db.dump();
}

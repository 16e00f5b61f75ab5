import { PGlite, types, type Transaction } from '@electric-sql/pglite';
import type { Db, Queryable, QueryResult } from './types.js';

const parsers = {
  // Same conventions as the pg driver (see postgres.ts): int8 as number, numeric as string.
  [types.INT8]: (value: string) => Number(value),
  [types.NUMERIC]: (value: string) => value,
};

function wrap(target: PGlite | Transaction): Queryable {
  return {
    async query<T>(sql: string, params: readonly unknown[] = []): Promise<QueryResult<T>> {
      const result = await target.query<T>(sql, params as unknown[], { parsers });
      return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
    },
    async exec(sql: string): Promise<void> {
      await target.exec(sql);
    },
  };
}

export interface PgliteDb extends Db {
  readonly pglite: PGlite;
}

/**
 * Embedded PostgreSQL (WASM). `dataDir` undefined keeps everything in memory (tests).
 * PGlite is single-process: the caller holds the data-directory lock (see lock.ts).
 */
export async function openPglite(dataDir: string | undefined, options: { loadDataDir?: Blob } = {}): Promise<PgliteDb> {
  const db = await PGlite.create({ ...(dataDir ? { dataDir } : {}), ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}) });
  const root = wrap(db);
  return {
    kind: 'pglite',
    pglite: db,
    query: root.query,
    exec: root.exec,
    async tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
      return db.transaction((tx) => fn(wrap(tx)));
    },
    async close() {
      await db.close();
    },
    async listen(channel, onNotify) {
      return db.listen(channel, () => onNotify());
    },
  };
}

/** A tarball of an in-memory PGlite's files (tests start from a migrated snapshot). */
export async function dumpPglite(db: PgliteDb): Promise<Blob> {
  return db.pglite.dumpDataDir('none');
}

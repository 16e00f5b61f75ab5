import type { Config } from '../config.js';
import { lockDataDir } from './lock.js';
import { migrate } from './migrate.js';
import { openPglite } from './pglite.js';
import { openPostgres } from './postgres.js';
import type { Db } from './types.js';

export type { Db, ListenEvents, Queryable, QueryOptions, QueryResult } from './types.js';
export { migrate, loadMigrations } from './migrate.js';
export { DataDirLockedError, lockDataDir } from './lock.js';
export { openPglite, dumpPglite, EmbeddedDatabaseError, type PgliteDb } from './pglite.js';
export { openPostgres } from './postgres.js';
export { isConflict, retryConflicts } from './conflicts.js';

/**
 * Opens the configured database: PostgreSQL when DATABASE_URL is set, otherwise embedded PGlite in
 * the data directory (locked for this process; the lock is released on close).
 */
export async function openDatabase(config: Pick<Config, 'databaseUrl' | 'dataDir'>): Promise<Db> {
  if (config.databaseUrl) return openPostgres(config.databaseUrl);
  const release = lockDataDir(config.dataDir);
  try {
    const db = await openPglite(`${config.dataDir}/pgdata`);
    return {
      ...db,
      async close() {
        try {
          await db.close();
        } finally {
          release();
        }
      },
    };
  } catch (err) {
    release();
    throw err;
  }
}

export async function openAndMigrate(config: Pick<Config, 'databaseUrl' | 'dataDir'>): Promise<Db> {
  const db = await openDatabase(config);
  try {
    await migrate(db);
  } catch (err) {
    await db.close();
    throw err;
  }
  return db;
}

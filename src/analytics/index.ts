import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../db/index.js';
import type { App } from '../http/index.js';
import { runFolder } from './fold.js';
import { registerAnalyticsRoutes } from './routes.js';
import { AnalyticsService } from './service.js';

export { AnalyticsService, type AnalyticsSource } from './service.js';
export { analyticsBacklog, foldAnalytics, type FoldResult } from './fold.js';
export { TERMS_FOLD_BATCH } from './terms/index.js';
export { QUERY_TYPES, GRANULARITIES, type QueryType, type Granularity } from './schemas.js';

/** How often the serving process folds the rollup's deltas and the pending terms (any process may; one at a time). */
const FOLD_INTERVAL_MS = 1000;

/**
 * The analytics feature's only door: POST /analytics over the twelve query types, and
 * the analytics folder running beside it until the app closes.
 */
export function registerAnalytics(app: App, deps: { db: Db; log: FastifyBaseLogger }): void {
  registerAnalyticsRoutes(app, new AnalyticsService(deps.db));
  const stop = new AbortController();
  let folder: Promise<void> | undefined;
  app.addHook('onReady', async () => {
    folder = runFolder(deps.db, {
      intervalMs: FOLD_INTERVAL_MS,
      signal: stop.signal,
      onError: (err) => deps.log.warn({ err }, 'analytics fold failed'),
    });
  });
  app.addHook('onClose', async () => {
    stop.abort();
    await folder;
  });
}

import type { Db } from '../db/index.js';
import type { App } from '../http/index.js';
import { registerOverviewRoutes } from './routes.js';

export { Overview, LiveCall, LiveCalls } from './routes.js';

/** What is happening now: calls in progress, the cost of the day, recent failures (GET /overview, GET /calls/live). */
export function registerOverview(app: App, db: Db): void {
  registerOverviewRoutes(app, db);
}

import type { FeatureDeps } from '../features.js';
import type { App } from '../http/index.js';
import { registerOverviewRoutes } from './routes.js';

export { Overview, LiveCall, LiveCalls } from './routes.js';

/** What is happening now: calls in progress, the cost of the day, recent failures (GET /overview, GET /calls/live). */
export function registerOverview(app: App, deps: FeatureDeps): void {
  registerOverviewRoutes(app, deps.db);
}

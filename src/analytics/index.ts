import type { FeatureDeps } from '../features.js';
import type { App } from '../http/index.js';
import { registerAnalyticsRoutes } from './routes.js';
import { AnalyticsService } from './service.js';

export { AnalyticsService } from './service.js';
export { QUERY_TYPES, GRANULARITIES, type QueryType, type Granularity } from './schemas.js';
export { insertFinishedLeads, type FinishedLead } from './demo.js';

/** The analytics feature's only door: POST /analytics (spec 4.8) over the twelve query types. */
export function registerAnalytics(app: App, deps: FeatureDeps): void {
  registerAnalyticsRoutes(app, new AnalyticsService(deps.db));
}

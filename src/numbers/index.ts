import type { FeatureDeps } from '../features.js';
import type { App } from '../http/index.js';
import { registerNumberRoutes } from './routes.js';
import { NumbersService } from './service.js';

export { acquireNumber, releaseNumber, type OutboundNumberRow } from './pool.js';

/** The numbers feature's only door: the outbound number API and the pool the dialler draws from. */
export function registerNumbers(app: App, deps: FeatureDeps): void {
  registerNumberRoutes(app, new NumbersService(deps.db));
}

import type { FeatureDeps } from '../features.js';
import type { App } from '../http/index.js';
import { registerBlacklistRoutes } from './routes.js';
import { BlacklistService } from './service.js';

export { isBlacklisted, blacklistedSql } from './lookup.js';

/** The blacklist feature's only door: the API of spec 4.7 and the lookup push and dial use. */
export function registerBlacklist(app: App, deps: FeatureDeps): void {
  registerBlacklistRoutes(app, new BlacklistService(deps.db));
}

import type { Db } from '../db/index.js';
import type { App } from '../http/index.js';
import { registerBlacklistRoutes } from './routes.js';
import { BlacklistService } from './service.js';

export { blacklistedSql, hashOptOuts } from './lookup.js';

/** The blacklist feature's only door: the blacklist API and the lookup push and dial use. */
export function registerBlacklist(app: App, db: Db): void {
  registerBlacklistRoutes(app, new BlacklistService(db));
}

import type { Db } from '../db/index.js';
import type { App } from '../http/index.js';
import { registerNumberRoutes } from './routes.js';
import { NumbersService } from './service.js';

export { acquireNumber, releaseNumber, type OutboundNumberRow } from './pool.js';
export { NumbersService } from './service.js';

/** The numbers feature's only door: the outbound number API and the pool the dialler draws from. */
export function registerNumbers(app: App, db: Db): void {
  registerNumberRoutes(app, new NumbersService(db));
}

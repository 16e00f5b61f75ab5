import type { Db } from '../db/index.js';
import type { App } from '../http/index.js';
import { registerNumberRoutes } from './routes.js';
import { NumbersService } from './service.js';

export type { OutboundNumberRow } from './row.js';
export { NumbersService } from './service.js';

/** The numbers feature's only door: the outbound number API (the dialler takes and gives back numbers in the lifecycle). */
export function registerNumbers(app: App, db: Db): void {
  registerNumberRoutes(app, new NumbersService(db));
}

import type { Db } from '../db/index.js';
import type { App } from '../http/index.js';
import type { OutboundPolicy } from '../lib/outbound/index.js';
import { registerTrunkRoutes } from './routes.js';
import { TrunksService } from './service.js';

export { TrunksService, IMPLEMENTED_TRANSPORTS, SANDBOX_TRUNK_NAME } from './service.js';
export type { TrunkRow } from './repository.js';
export { admitTrunkStarts, trunkHold, TrunkAdmission } from './admission.js';

/** The trunks feature's only door: the SIP trunk API, and the trunk a lead dials through (for the SIP driver). */
export function registerTrunks(app: App, db: Db, policy: OutboundPolicy): void {
  registerTrunkRoutes(app, new TrunksService(db, policy));
}

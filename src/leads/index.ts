import type { Db } from '../db/index.js';
import type { OnFinished } from '../lifecycle/index.js';
import type { RecordingStore } from '../recordings/index.js';
import type { App } from '../http/index.js';
import type { OutboundPolicy } from '../lib/outbound/index.js';
import { registerLeadRoutes } from './routes.js';
import { LeadsService } from './service.js';

export { LeadsService } from './service.js';
export { leadView } from './routes.js';
export type { LeadRow } from './repository.js';
export { EXECUTION_MODES, LEAD_STATUSES, type ExecutionMode } from './schema.js';

/** The leads feature's only door: push (single and batch), read, list, abort, recordings. */
export function registerLeads(app: App, deps: { db: Db; recordings?: RecordingStore | undefined; onFinished: OnFinished; policy: OutboundPolicy }): void {
  registerLeadRoutes(app, new LeadsService(deps.db, deps.onFinished, deps.policy), deps.recordings);
}

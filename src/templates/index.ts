import type { Db } from '../db/index.js';
import type { App } from '../http/index.js';
import type { OutboundPolicy } from '../lib/outbound/index.js';
import type { AgentOptions } from '../voice/index.js';
import { registerTemplateRoutes } from './routes.js';
import { TemplatesService } from './service.js';

export { TemplatesService, findTemplateByName, findTemplateById, type TemplateRef } from './service.js';
export type { TemplateRow } from './repository.js';
// A template's flow is the engine's (voice/flow): what others need of it goes through this door.
export { validateFlow, promptVariables, type Flow } from '../voice/flow/index.js';

/** The templates feature's only door: CRUD routes, flow validation, lookups for pushes; `agentOptions`: what a template may choose of its calls' services. */
export function registerTemplates(app: App, db: Db, policy: OutboundPolicy, agentOptions?: AgentOptions): void {
  registerTemplateRoutes(app, new TemplatesService(db, policy, agentOptions));
}

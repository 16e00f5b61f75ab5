import type { Db } from '../db/index.js';
import type { App } from '../http/index.js';
import type { OutboundPolicy } from '../lib/outbound/index.js';
import { registerTemplateRoutes } from './routes.js';
import { TemplatesService } from './service.js';

export { TemplatesService, findTemplateByName, findTemplateById, type TemplateRef } from './service.js';
export type { TemplateRow } from './repository.js';
export {
  validateFlow,
  promptVariables,
  CALL_VARIABLES,
  FlowSchema,
  ACTION_TYPES,
  HTTP_METHODS,
  MESSAGE_ROLES,
  MAX_HOOK_TIMEOUT_SECONDS,
  BUILTIN_FUNCTIONS,
  type BuiltinFunction,
  type Flow,
  type FlowNode,
  type FlowMessage,
  type FlowFunction,
  type FlowHook,
  type FlowAction,
  type HttpRequestSpec,
} from '../voice/flow/index.js';

/** The templates feature's only door: CRUD routes, flow validation, lookups for pushes. */
export function registerTemplates(app: App, db: Db, policy: OutboundPolicy): void {
  registerTemplateRoutes(app, new TemplatesService(db, policy));
}

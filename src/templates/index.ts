import type { FeatureDeps } from '../features.js';
import type { App } from '../http/index.js';
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
  type Flow,
  type FlowNode,
  type FlowMessage,
  type FlowFunction,
  type FlowHook,
  type FlowAction,
  type HttpRequestSpec,
} from '../voice/flow/schema.js';

/** The templates feature's only door: CRUD routes (spec 4.3), flow validation, lookups for pushes. */
export function registerTemplates(app: App, deps: FeatureDeps): void {
  registerTemplateRoutes(app, new TemplatesService(deps.db));
}

export { createFlowSession, FlowEngine } from './engine.js';
export { substitute } from './substitute.js';
export type { AgentAction, FlowDeps, FlowRecord, FlowSession, FlowUsage, FunctionCallRecord, CreateFlowSession } from './types.js';
export { CALLBACK_REQUESTED, OPTED_OUT } from './builtins.js';
export { validateFlow } from './validate.js';
export {
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
} from './schema.js';

export { createFlowSession, FlowEngine } from './engine.js';
export { substitute } from './substitute.js';
export type { AgentAction, FlowDeps, FlowRecord, FlowSession, FunctionCallRecord, CreateFlowSession } from './types.js';
export { CALLBACK_REQUESTED, OPTED_OUT } from './builtins.js';

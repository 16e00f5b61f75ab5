export { createFlowSession, FlowEngine } from './engine.js';
export { substitute } from './substitute.js';
export type { AgentAction, FlowDeps, FlowRecord, FlowSession, FlowUsage, FunctionCallRecord, CreateFlowSession } from './types.js';

export type { CallAgent, CallContext, CallIO, ConversationResult, PlayResult } from './agent.js';
export { GreeterAgent, GREETER_DEFAULTS, type GreeterOptions } from './greeter.js';

export type { CallAgent, CallContext, CallEvent, CallIO, ConsultAnswer, ConsultLeg, ConversationResult, Disclosure, PlayResult, SpeakRequest, VoicemailPolicy } from './agent.js';
export { ConversationAgent, type AgentTemplate, type VoiceServices } from './conversation.js';
export { AgentChoiceSchema, AgentOptionsSchema, agentChoiceErrors, type AgentChoice, type AgentOptions } from './agent-choice.js';
export { StreamAgent } from './stream.js';
export { RealtimeAgent, type RealtimeAgentOptions, type Truncation } from './realtime/agent.js';
export { GreeterAgent, GREETER_DEFAULTS, type GreeterOptions } from './greeter.js';
export { analyseCall, type AnalysisSpec } from './analysis.js';
export type { LLM, RealtimeModel } from './services.js';
export type { DisclosureRecord } from './disclosure.js';

/**
 * The span of one LLM request of the flow engine (a Langfuse generation): opened with the prompt
 * when the turn is traced, closed with what came back, its timing and its usage.
 */
import type { ChatMessage, ToolCall, ToolSpec } from '../services.js';
import { childSpan, wallClockMs } from '../tracing.js';
import type { FlowDeps } from './types.js';

type Span = ReturnType<typeof childSpan>;

export function startLlmSpan(deps: FlowDeps, node: string, messages: ChatMessage[], tools: ToolSpec[]): Span {
  const span = childSpan(deps.traceParent?.(), 'llm', {
    'langfuse.observation.type': 'generation',
    'gen_ai.operation.name': 'chat',
    'gen_ai.system': 'openai',
    'gen_ai.request.model': deps.llm.model,
    'langfuse.observation.model.name': deps.llm.model,
    'dialer.llm.service': deps.llm.label,
    'dialer.node': node,
  });
  // The prompt is serialised only for a recorded span.
  span?.setAttributes({ 'langfuse.observation.input': JSON.stringify(messages), 'dialer.llm.tools': tools.map((t) => t.name) });
  return span;
}

export interface LlmEnd {
  durationMs: number;
  aborted: boolean;
  calls: ToolCall[];
  text: string;
  /** performance.now() of the request and of its first token. */
  asked: number;
  firstAt: number | undefined;
  finishReason: string | undefined;
  usage: { promptTokens: number; completionTokens: number } | undefined;
}

export function endLlmSpan(span: Span, e: LlmEnd): void {
  if (!span) return;
  span.setAttributes({
    'dialer.duration_ms': Math.round(e.durationMs),
    'dialer.aborted': e.aborted,
    'dialer.llm.tool_calls': e.calls.map((c) => c.name),
    'langfuse.observation.output': JSON.stringify({ role: 'assistant', content: e.text || null, ...(e.calls.length ? { tool_calls: e.calls } : {}) }),
    ...(e.firstAt !== undefined
      ? { 'dialer.llm.time_to_first_token_ms': Math.round(e.firstAt - e.asked), 'langfuse.observation.completion_start_time': new Date(wallClockMs(e.firstAt)).toISOString() }
      : {}),
    ...(e.finishReason ? { 'gen_ai.response.finish_reasons': [e.finishReason] } : {}),
    ...(e.usage
      ? {
          'gen_ai.usage.input_tokens': e.usage.promptTokens,
          'gen_ai.usage.output_tokens': e.usage.completionTokens,
          'langfuse.observation.usage_details': JSON.stringify({ input: e.usage.promptTokens, output: e.usage.completionTokens }),
        }
      : {}),
  });
  span.end();
}

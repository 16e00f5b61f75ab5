/**
 * Anthropic's Messages API (`POST /v1/messages`, streamed as server-sent events), with tools: the
 * native client for Claude models, beside the OpenAI-compatible one.
 *
 * Request: `x-api-key` and `anthropic-version` headers; the conversation's leading system messages
 * become the top-level `system`; later ones (a node's instructions added at a transition) become
 * user turns marked as instructions, since the API has no system role inside `messages`; an
 * assistant turn's tool calls become `tool_use` blocks and each tool result a `tool_result` block
 * of the next user turn; consecutive turns of one role are merged. An outbound call's agent speaks
 * first, so a conversation that would begin with the assistant (or has no turn yet) begins with a
 * short user turn saying the call connected: the API requires the first turn to be the user's.
 *
 * Stream: `message_start` (input tokens), `content_block_start` (a text or `tool_use` block, with
 * its id and name), `content_block_delta` (`text_delta`, `input_json_delta`), `content_block_stop`
 * (a tool call is complete), `message_delta` (stop reason, output tokens), `message_stop`,
 * `ping`, and `error` (for example `overloaded_error`).
 */
import type { LlmSettings } from '../../config/voice.js';
import { ServiceError, warmConnection, type ChatMessage, type ChatRequest, type LLM, type LlmEvent } from '../../voice/services.js';
import { readServerSentEvents } from '../sse.js';
import { postStream } from './request.js';

export const ANTHROPIC_VERSION = '2023-06-01';
/** Replies of a phone call are short; the API requires a ceiling. */
export const DEFAULT_MAX_TOKENS = 1024;
/** The user turn put before an assistant that speaks first. */
export const CALL_CONNECTED = '(The call has connected.)';

type Block =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; tool_use_id: string; content: string };

interface Turn {
  role: 'user' | 'assistant';
  content: Block[];
}

interface StreamEvent {
  type: string;
  index?: number;
  message?: { usage?: { input_tokens?: number; output_tokens?: number } };
  content_block?: { type: string; id?: string; name?: string; text?: string };
  delta?: { type?: string; text?: string; partial_json?: string; stop_reason?: string | null };
  usage?: { output_tokens?: number; input_tokens?: number };
  error?: { type?: string; message?: string };
}

/** The API's stop reasons in the words the flow engine reads (OpenAI's finish reasons). */
const FINISH: Readonly<Record<string, string>> = { end_turn: 'stop', stop_sequence: 'stop', tool_use: 'tool_calls', max_tokens: 'length', refusal: 'content_filter' };


function parseInput(args: string): unknown {
  try {
    const value = JSON.parse(args) as unknown;
    return value && typeof value === 'object' ? value : {};
  } catch {
    return {};
  }
}

/** The conversation in the Messages API's shape: `system` and alternating user/assistant turns. */
export function toMessages(messages: ChatMessage[]): { system: string | undefined; turns: Turn[] } {
  const system: string[] = [];
  const turns: Turn[] = [];
  const add = (role: Turn['role'], block: Block) => {
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(block);
    else turns.push({ role, content: [block] });
  };
  for (const m of messages) {
    if (m.role === 'system') {
      if (turns.length === 0) system.push(m.content);
      else add('user', { type: 'text', text: `[Instructions] ${m.content}` });
    } else if (m.role === 'user') add('user', { type: 'text', text: m.content });
    else if (m.role === 'tool') add('user', { type: 'tool_result', tool_use_id: m.tool_call_id, content: m.content });
    else if (m.role === 'assistant') {
      if (m.content) add('assistant', { type: 'text', text: m.content });
      for (const c of m.tool_calls ?? []) add('assistant', { type: 'tool_use', id: c.id, name: c.name, input: parseInput(c.arguments) });
    }
  }
  if (turns[0]?.role !== 'user') turns.unshift({ role: 'user', content: [{ type: 'text', text: CALL_CONNECTED }] });
  return { system: system.length ? system.join('\n\n') : undefined, turns };
}

export class AnthropicLLM implements LLM {
  readonly label: string;
  readonly model: string;

  constructor(private readonly options: LlmSettings) {
    this.model = options.model;
    this.label = `anthropic(${new URL(options.baseUrl).host})`;
  }

  private headers(): Record<string, string> {
    return { 'anthropic-version': ANTHROPIC_VERSION, ...(this.options.apiKey ? { 'x-api-key': this.options.apiKey } : {}) };
  }

  /** GET /models: cheap, and answered with the same key. */
  warm(): Promise<void> {
    return warmConnection('llm', `${this.options.baseUrl}/models`, this.headers());
  }

  async *chat(request: ChatRequest): AsyncIterable<LlmEvent> {
    const o = this.options;
    const { system, turns } = toMessages(request.messages);
    const temperature = request.temperature ?? o.temperature;
    const body = {
      model: o.model,
      max_tokens: DEFAULT_MAX_TOKENS,
      stream: true,
      ...(system ? { system } : {}),
      messages: turns,
      // The API's temperature runs 0-1: above 1 (allowed by OpenAI's 0-2) is taken as 1.
      ...(temperature !== undefined ? { temperature: Math.min(1, temperature) } : {}),
      ...(request.tools?.length ? { tools: request.tools.map((t) => ({ name: t.name, ...(t.description ? { description: t.description } : {}), input_schema: t.parameters })) } : {}),
    };
    const res = await postStream(this.label, new URL(`${o.baseUrl}/messages`), { headers: this.headers(), body, signal: request.signal, timeoutMs: o.timeoutMs });

    const tools = new Map<number, { id: string; name: string; arguments: string }>();
    let finishReason = 'stop';
    let promptTokens = 0;
    let completionTokens = 0;
    let stopped = false;
    try {
      for await (const data of readServerSentEvents(res.body, request.signal)) {
        let event: StreamEvent;
        try {
          event = JSON.parse(data) as StreamEvent;
        } catch {
          throw new ServiceError(this.label, `malformed stream event: ${data.slice(0, 80)}`, false);
        }
        switch (event.type) {
          case 'message_start':
            promptTokens = event.message?.usage?.input_tokens ?? 0;
            completionTokens = event.message?.usage?.output_tokens ?? 0;
            break;
          case 'content_block_start':
            if (event.content_block?.type === 'tool_use') tools.set(event.index ?? 0, { id: event.content_block.id ?? '', name: event.content_block.name ?? '', arguments: '' });
            else if (event.content_block?.type === 'text' && event.content_block.text) yield { type: 'text', text: event.content_block.text };
            break;
          case 'content_block_delta':
            if (event.delta?.type === 'text_delta' && event.delta.text) yield { type: 'text', text: event.delta.text };
            else if (event.delta?.type === 'input_json_delta') {
              const tool = tools.get(event.index ?? 0);
              if (tool) tool.arguments += event.delta.partial_json ?? '';
            }
            break;
          case 'content_block_stop': {
            const tool = tools.get(event.index ?? 0);
            if (tool) {
              tools.delete(event.index ?? 0);
              yield { type: 'tool_call', call: { ...tool, arguments: tool.arguments || '{}' } };
            }
            break;
          }
          case 'message_delta':
            if (event.delta?.stop_reason) finishReason = FINISH[event.delta.stop_reason] ?? event.delta.stop_reason;
            if (event.usage?.output_tokens !== undefined) completionTokens = event.usage.output_tokens;
            if (event.usage?.input_tokens !== undefined) promptTokens = event.usage.input_tokens;
            break;
          case 'message_stop':
            stopped = true;
            break;
          case 'error':
            throw new ServiceError(this.label, `${event.error?.type ?? 'error'}: ${event.error?.message ?? 'error in stream'}`, event.error?.type === 'overloaded_error' || event.error?.type === 'api_error');
        }
        if (stopped) break;
      }
    } catch (err) {
      if (err instanceof ServiceError || request.signal.aborted) throw err;
      throw new ServiceError(this.label, `the stream broke: ${(err as Error).message}`, true, { cause: err });
    }
    if (!stopped) throw new ServiceError(this.label, 'the stream ended before message_stop', true);
    yield { type: 'done', finishReason, usage: { promptTokens, completionTokens } };
  }
}

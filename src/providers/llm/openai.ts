/**
 * OpenAI-compatible chat completions, streamed (server-sent events), with tool calls: OpenAI, Azure
 * OpenAI, Groq, vLLM, Ollama, llama.cpp server — any endpoint that speaks `/chat/completions`.
 */
import type { LlmSettings } from '../../config/voice.js';
import { ServiceError, warmConnection, type ChatRequest, type LLM, type LlmEvent, type ToolCall } from '../../voice/services.js';
import { readServerSentEvents } from '../sse.js';
import { postStream } from './request.js';

export type OpenAILlmOptions = LlmSettings;

interface ChunkToolDelta {
  index: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

interface Chunk {
  choices?: Array<{ delta?: { content?: string | null; tool_calls?: ChunkToolDelta[] }; finish_reason?: string | null }>;
  usage?: { prompt_tokens: number; completion_tokens: number } | null;
  error?: { message?: string };
}


export class OpenAICompatibleLLM implements LLM {
  readonly label: string;
  readonly model: string;

  constructor(private readonly options: OpenAILlmOptions) {
    this.model = options.model;
    this.label = `openai-compatible(${new URL(options.baseUrl).host})`;
  }

  /** GET /models: a request every OpenAI-compatible server answers, cheaply. */
  warm(): Promise<void> {
    const o = this.options;
    const headers: Record<string, string> = o.azure ? (o.apiKey ? { 'api-key': o.apiKey } : {}) : o.apiKey ? { authorization: `Bearer ${o.apiKey}` } : {};
    return warmConnection('llm', `${o.baseUrl}/models${o.azure ? `?api-version=${encodeURIComponent(o.azure.apiVersion)}` : ''}`, headers);
  }

  async *chat(request: ChatRequest): AsyncIterable<LlmEvent> {
    const o = this.options;
    const url = new URL(`${o.baseUrl}/chat/completions`);
    const headers: Record<string, string> = {};
    if (o.azure) {
      url.searchParams.set('api-version', o.azure.apiVersion);
      if (o.apiKey) headers['api-key'] = o.apiKey;
    } else if (o.apiKey) headers.authorization = `Bearer ${o.apiKey}`;
    const body = {
      model: o.model,
      stream: true,
      stream_options: { include_usage: true },
      messages: request.messages.map((m) =>
        m.role === 'assistant' && m.tool_calls?.length
          ? { role: 'assistant', content: m.content, tool_calls: m.tool_calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) }
          : m,
      ),
      ...(request.tools?.length ? { tools: request.tools.map((t) => ({ type: 'function', function: t })) } : {}),
      ...((request.temperature ?? o.temperature) !== undefined ? { temperature: request.temperature ?? o.temperature } : {}),
    };
    const res = await postStream(this.label, url, { headers, body, signal: request.signal, timeoutMs: o.timeoutMs });

    const calls = new Map<number, { id: string; name: string; arguments: string }>();
    let finishReason = 'stop';
    let usage: { promptTokens: number; completionTokens: number } | undefined;
    const flushCalls = function* (): Generator<LlmEvent> {
      for (const [, c] of [...calls.entries()].sort((a, b) => a[0] - b[0])) yield { type: 'tool_call', call: c satisfies ToolCall };
      calls.clear();
    };
    try {
      for await (const data of readServerSentEvents(res.body, request.signal)) {
        if (data === '[DONE]') break;
        let chunk: Chunk;
        try {
          chunk = JSON.parse(data) as Chunk;
        } catch {
          throw new ServiceError(this.label, `malformed stream chunk: ${data.slice(0, 80)}`, false);
        }
        if (chunk.error) throw new ServiceError(this.label, chunk.error.message ?? 'error in stream', true);
        if (chunk.usage) usage = { promptTokens: chunk.usage.prompt_tokens, completionTokens: chunk.usage.completion_tokens };
        const choice = chunk.choices?.[0];
        if (!choice) continue;
        const delta = choice.delta ?? {};
        if (delta.content) yield { type: 'text', text: delta.content };
        for (const piece of delta.tool_calls ?? []) {
          const call = calls.get(piece.index) ?? { id: '', name: '', arguments: '' };
          if (piece.id) call.id = piece.id;
          if (piece.function?.name) call.name += piece.function.name;
          if (piece.function?.arguments) call.arguments += piece.function.arguments;
          calls.set(piece.index, call);
        }
        if (choice.finish_reason) {
          finishReason = choice.finish_reason;
          yield* flushCalls();
        }
      }
    } catch (err) {
      if (err instanceof ServiceError || request.signal.aborted) throw err;
      throw new ServiceError(this.label, `the stream broke: ${(err as Error).message}`, true, { cause: err });
    }
    yield* flushCalls();
    yield { type: 'done', finishReason, ...(usage ? { usage } : {}) };
  }
}

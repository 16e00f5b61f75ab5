/**
 * An LLM that replays scripted replies, one per request, and keeps every request (messages and
 * tools) so tests can assert the context the flow engine built. Replies are text pieces, tool
 * calls, or an error.
 */
import { ServiceError, type ChatRequest, type LLM, type LlmEvent } from '../../src/voice/services.js';

export type ScriptedReply = { text?: string[]; tools?: Array<{ name: string; arguments: unknown }>; fail?: string };

export class ScriptedLLM implements LLM {
  readonly label = 'scripted';
  readonly model = 'script';
  readonly requests: ChatRequest[] = [];
  private seq = 0;

  constructor(private readonly replies: ScriptedReply[]) {}

  async *chat(request: ChatRequest): AsyncIterable<LlmEvent> {
    this.requests.push({ ...request, messages: structuredClone(request.messages) });
    const reply = this.replies.shift() ?? { text: [''] };
    if (reply.fail) throw new ServiceError('scripted', reply.fail, true);
    for (const piece of reply.text ?? []) {
      await Promise.resolve();
      yield { type: 'text', text: piece };
    }
    for (const t of reply.tools ?? []) {
      yield { type: 'tool_call', call: { id: `call_${++this.seq}`, name: t.name, arguments: typeof t.arguments === 'string' ? t.arguments : JSON.stringify(t.arguments) } };
    }
    yield { type: 'done', finishReason: reply.tools ? 'tool_calls' : 'stop', usage: { promptTokens: 10, completionTokens: 5 } };
  }
}

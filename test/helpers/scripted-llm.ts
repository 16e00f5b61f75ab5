/**
 * An LLM that replays scripted replies, one per request, and keeps every request (messages and
 * tools, copied as they were sent) so tests can assert the context the flow engine built: the
 * frame-in/frame-out harness of the flow engine. A reply is text pieces (streamed in order), tool
 * calls, and optionally a failure after its text; a request beyond the script fails, so a test sees
 * an unexpected LLM run as an error instead of silence.
 */
import { ServiceError, type ChatRequest, type LLM, type LlmEvent } from '../../src/voice/services.js';

export type ScriptedReply = { text?: string[]; tools?: Array<{ name: string; arguments: unknown }>; fail?: string };
export type RecordedRequest = Pick<ChatRequest, 'messages' | 'tools'>;

export class ScriptedLLM implements LLM {
  readonly label = 'scripted';
  readonly model = 'script';
  readonly requests: RecordedRequest[] = [];
  private seq = 0;

  constructor(private readonly replies: ScriptedReply[]) {}

  /** Scripted replies not asked for yet. */
  get remaining(): number {
    return this.replies.length;
  }

  async *chat(request: ChatRequest): AsyncIterable<LlmEvent> {
    this.requests.push(structuredClone({ messages: request.messages, tools: request.tools }));
    const reply = this.replies.shift();
    if (!reply) throw new ServiceError('scripted', `no scripted reply left for request ${this.requests.length}`, false);
    for (const piece of reply.text ?? []) {
      await Promise.resolve();
      yield { type: 'text', text: piece };
    }
    if (reply.fail) throw new ServiceError('scripted', reply.fail, true);
    for (const t of reply.tools ?? []) {
      const args = typeof t.arguments === 'string' ? t.arguments : JSON.stringify(t.arguments);
      yield { type: 'tool_call', call: { id: `call_${++this.seq}`, name: t.name, arguments: args } };
    }
    yield { type: 'done', finishReason: reply.tools ? 'tool_calls' : 'stop', usage: { promptTokens: 10, completionTokens: 5 } };
  }
}

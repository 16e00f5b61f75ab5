/**
 * The flow engine: a template's flow run turn by turn with pipecat-flows semantics. Entering a node
 * always goes in one order: record it, pre_actions, tools from `functions`, context from
 * `role_messages` + `task_messages` (with `{variable}` substitution), the LLM when the node responds
 * immediately, post_actions. A function call is validated, fires its hooks, and may transition.
 * Unknown functions, bad arguments, hook and LLM failures are recorded and the conversation goes on.
 */
import type { Flow, FlowAction, FlowFunction, FlowNode } from '../../templates/index.js';
import type { ChatMessage, ToolCall, ToolSpec } from '../services.js';
import { runHook } from './hooks.js';
import { substitute } from './substitute.js';
import type { AgentAction, FlowDeps, FlowRecord, FlowSession, FunctionCallRecord } from './types.js';
import { validateArguments } from './arguments.js';

const APOLOGY = 'Sorry, I am having trouble right now.';
const MAX_TOOL_ROUNDS = 3;
export class FlowEngine implements FlowSession {
  readonly record: FlowRecord = { transcription: [], node_traversal: [], function_calls: [], errors: [], usage: { promptTokens: 0, completionTokens: 0 } };
  private readonly nodes: Map<string, FlowNode>;
  private node: FlowNode;
  private roleMessages: ChatMessage[] = [];
  private readonly context: ChatMessage[] = [];
  private tools: ToolSpec[] = [];
  private ended = false;
  private readonly unknownVariables = new Set<string>();

  constructor(private readonly flow: Flow, private readonly deps: FlowDeps) {
    this.nodes = new Map(flow.nodes.map((n) => [n.node_name, n]));
    this.node = this.nodes.get(flow.initial_node) ?? flow.nodes[0]!;
  }

  get currentNode(): string {
    return this.node.node_name;
  }

  get nodeSettings(): { idleMs?: number; endOfSpeechMs?: number } {
    const n = this.node;
    return {
      ...(n.idle_timeout_seconds ? { idleMs: n.idle_timeout_seconds * 1000 } : {}),
      ...(n.vad?.stop_secs ? { endOfSpeechMs: n.vad.stop_secs * 1000 } : {}),
    };
  }

  private now(): string {
    return (this.deps.now?.() ?? new Date()).toISOString();
  }

  private fill(text: string, extra: Record<string, unknown> = {}): string {
    return substitute(text, { ...this.deps.variables, ...extra }, (name) => {
      if (this.unknownVariables.has(name)) return;
      this.unknownVariables.add(name);
      this.record.errors.push(`no value for {${name}}`);
    });
  }

  async *start(signal: AbortSignal): AsyncIterable<AgentAction> {
    yield* this.enter(this.node.node_name, signal, true);
  }

  async *userTurn(text: string, signal: AbortSignal): AsyncIterable<AgentAction> {
    if (this.ended) return;
    this.record.transcription.push({ role: 'user', content: text });
    this.context.push({ role: 'user', content: text });
    yield* this.respond(signal);
  }

  async *idle(signal: AbortSignal): AsyncIterable<AgentAction> {
    if (this.ended) return;
    if (this.node.idle_prompt) {
      yield* this.say(this.fill(this.node.idle_prompt));
      return;
    }
    this.context.push({ role: 'system', content: 'The caller has been silent for a while. Check briefly whether they are still there.' });
    yield* this.respond(signal);
  }

  interrupted(spoken: string): void {
    const spokenText = spoken.trim();
    for (let i = this.context.length - 1; i >= 0; i--) {
      const m = this.context[i]!;
      if (m.role === 'assistant' && m.content) {
        m.content = spokenText;
        break;
      }
    }
    for (let i = this.record.transcription.length - 1; i >= 0; i--) {
      const t = this.record.transcription[i]!;
      if (t.role === 'assistant') {
        if (spokenText) t.content = spokenText;
        else this.record.transcription.splice(i, 1);
        break;
      }
    }
  }

  private async *say(text: string): AsyncIterable<AgentAction> {
    this.record.transcription.push({ role: 'assistant', content: text });
    this.context.push({ role: 'assistant', content: text });
    yield { type: 'say', text };
  }

  private async *enter(name: string, signal: AbortSignal, initial: boolean): AsyncIterable<AgentAction> {
    const node = this.nodes.get(name);
    if (!node) {
      this.record.errors.push(`transition to unknown node "${name}"`);
      return;
    }
    this.node = node;
    this.record.node_traversal.push(node.node_name);
    yield* this.actions(node.pre_actions ?? [], signal);
    if (this.ended) return;
    this.tools = (node.functions ?? []).map((f) => ({
      name: f.name,
      ...(f.description ? { description: f.description } : {}),
      parameters: { type: 'object', properties: f.properties ?? {}, required: f.required ?? [] },
    }));
    if (node.role_messages?.length) this.roleMessages = node.role_messages.map((m) => ({ role: m.role, content: this.fill(m.content) }) as ChatMessage);
    for (const m of node.task_messages) this.context.push({ role: m.role, content: this.fill(m.content) } as ChatMessage);
    if (node.respond_immediately ?? true) yield* this.respond(signal);
    if (this.ended) return;
    yield* this.actions(node.post_actions ?? [], signal);
  }

  private async *actions(actions: FlowAction[], signal: AbortSignal): AsyncIterable<AgentAction> {
    for (const action of actions) {
      if (this.ended || signal.aborted) return;
      if (action.type === 'tts_say') yield* this.say(this.fill(action.text));
      else if (action.type === 'end_conversation') yield* this.end(action.outcome);
      else if (action.type === 'function') {
        const fn = this.node.functions?.find((f) => f.name === action.name);
        if (!fn) this.record.errors.push(`action names unknown function "${action.name}"`);
        else {
          const outcome = yield* this.call(fn, {}, signal);
          if (outcome.transition) yield* this.enter(outcome.transition, signal, false);
        }
      }
    }
  }

  private async *end(outcome?: string): AsyncIterable<AgentAction> {
    this.ended = true;
    this.record.outcome = outcome ?? this.node.outcome;
    yield { type: 'end', ...(this.record.outcome ? { outcome: this.record.outcome } : {}) };
  }

  private async *respond(signal: AbortSignal, round = 0): AsyncIterable<AgentAction> {
    if (this.ended || signal.aborted) return;
    let text = '';
    const calls: ToolCall[] = [];
    try {
      for await (const event of this.deps.llm.chat({ messages: [...this.roleMessages, ...this.context], tools: this.tools.length ? this.tools : undefined, signal })) {
        if (signal.aborted) return;
        if (event.type === 'text') {
          text += event.text;
          yield { type: 'say', text: event.text };
        } else if (event.type === 'tool_call') calls.push(event.call);
        else if (event.usage) {
          this.record.usage.promptTokens += event.usage.promptTokens;
          this.record.usage.completionTokens += event.usage.completionTokens;
        }
      }
    } catch (err) {
      if (signal.aborted) return;
      this.record.errors.push(`LLM failed: ${(err as Error).message}`);
      if (text) this.keepReply(text);
      yield* this.say(APOLOGY);
      return;
    }
    if (text || calls.length) {
      this.context.push({ role: 'assistant', content: text || null, ...(calls.length ? { tool_calls: calls } : {}) });
      if (text) this.record.transcription.push({ role: 'assistant', content: text });
    }
    if (calls.length === 0) return;
    let transition: string | undefined;
    for (const call of calls) {
      const fn = this.node.functions?.find((f) => f.name === call.name);
      if (!fn) {
        this.record.errors.push(`the LLM called unknown function "${call.name}" in node ${this.node.node_name}`);
        this.context.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify({ error: `unknown function ${call.name}` }) });
        continue;
      }
      const checked = validateArguments(fn, call.arguments);
      if (!checked.ok) {
        this.record.errors.push(`bad arguments for ${fn.name}: ${checked.error}`);
        this.record.function_calls.push({ node: this.node.node_name, name: fn.name, arguments: {}, hooks: [], error: checked.error, at: this.now() });
        this.context.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify({ error: checked.error }) });
        continue;
      }
      const outcome = yield* this.call(fn, checked.value, signal);
      this.context.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(outcome.result) });
      if (outcome.transfer) {
        yield { type: 'transfer', to: outcome.transfer };
        this.ended = true;
        return;
      }
      transition ??= outcome.transition;
    }
    if (transition) yield* this.enter(transition, signal, false);
    else if (round + 1 < MAX_TOOL_ROUNDS) yield* this.respond(signal, round + 1);
  }

  private keepReply(text: string): void {
    this.context.push({ role: 'assistant', content: text });
    this.record.transcription.push({ role: 'assistant', content: text });
  }

  /** Runs a function: its hooks (never longer than their timeouts), its record, and what follows it. */
  private async *call(
    fn: FlowFunction,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): AsyncGenerator<never, { result: unknown; transition?: string; transfer?: string }> {
    const record: FunctionCallRecord = { node: this.node.node_name, name: fn.name, arguments: args, hooks: [], at: this.now() };
    this.record.function_calls.push(record);
    const vars = { ...this.deps.variables, ...args };
    for (const hook of fn.hooks ?? []) {
      const result = await runHook(hook, vars, { fetch: this.deps.fetch ?? fetch, defaultTimeoutMs: this.deps.hookTimeoutMs ?? 10_000, signal });
      record.hooks.push(result);
      if (!result.ok) this.record.errors.push(`hook ${hook.name} of ${fn.name} failed: ${result.error ?? `HTTP ${result.status}`}`);
    }
    if (fn.transition_to) record.transition_to = fn.transition_to;
    const transferTo = fn.transfer_to_number;
    const transfer = transferTo ? this.fill(transferTo, args) : undefined;
    return {
      result: { ok: true, hooks: record.hooks.map((h) => ({ name: h.name, status: h.status, response: h.response })) },
      ...(fn.transition_to ? { transition: fn.transition_to } : {}),
      ...(transfer ? { transfer } : {}),
    };
  }
}

export function createFlowSession(flow: Flow, deps: FlowDeps): FlowSession {
  return new FlowEngine(flow, deps);
}

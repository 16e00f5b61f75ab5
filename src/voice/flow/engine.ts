/**
 * The flow engine: a template's flow run turn by turn with pipecat-flows semantics. Entering a node
 * always goes in one order: record it, pre_actions, tools from `functions`, context from
 * `role_messages` + `task_messages` (with `{variable}` substitution), the LLM when the node responds
 * immediately, post_actions. A function call is validated, fires its hooks, and may transition or
 * transfer. Unknown functions, bad arguments, hook and LLM failures are recorded and the
 * conversation goes on.
 *
 * When the LLM runs on entry: `respond_immediately` when the node sets it; otherwise yes for the
 * initial node and for a node reached by an LLM function call (the call needs an answer, and it
 * comes from the new node's context, before its post_actions), and no for a node reached by a
 * post_action `function` (the previous node already answered). A node reached by a function call
 * that sets `respond_immediately: false` still answers the call, after its post_actions.
 */
import type { BuiltinFunction, Flow, FlowAction, FlowFunction, FlowNode } from './schema.js';
import type { ChatMessage, ToolCall, ToolSpec } from '../services.js';
import { failSpan } from '../tracing.js';
import { endLlmSpan, startLlmSpan } from './llm-span.js';
import { validateArguments } from './arguments.js';
import { CALLBACK_REQUESTED, nodeFunctions, runBuiltin, toolsOf, type BuiltinDeps, type NodeFunctions } from './builtins.js';
import { recordingAt } from '../agent.js';
import { substitute } from './substitute.js';
import { resolveTurnTaking } from '../turns/settings.js';
import { addUsage, emptyUsage, estimateUsage, Tentative } from './speculation.js';
import type { AgentAction, FlowDeps, FlowRecord, FlowSession, FunctionCallRecord } from './types.js';
import { CallLanguage } from './call-language.js';
import { runFunction, type FunctionOutcome } from './function-call.js';
import { warmTransfer, type WarmCall, type WarmHost } from './warm.js';

export const APOLOGY = 'Sorry, I am having trouble right now.';
export const IDLE_NOTE = 'The caller has been silent for a while. Check briefly whether they are still there.';
/** LLM replies with tool calls per turn; beyond it the loop is cut (a model calling tools forever). */
export const MAX_TOOL_ROUNDS = 3;

type AssistantMessage = Extract<ChatMessage, { role: 'assistant' }>;
type Line = FlowRecord['transcription'][number];
/** How a node was entered decides whether the LLM runs when `respond_immediately` is not set. */
type Entry = 'initial' | 'function_call' | 'action';
type CallOutcome = FunctionOutcome | { result: unknown; transition?: string; transfer?: string; warm?: undefined };

const collapse = (text: string) => text.replace(/\s+/g, ' ').trim();

export class FlowEngine implements FlowSession {
  readonly record: FlowRecord = { transcription: [], node_traversal: [], function_calls: [], errors: [], warm_transfers: [], knowledge: [], language_switches: [], usage: emptyUsage() };
  readonly languages: CallLanguage;
  /** The speculative turn in progress, until its verdict. */
  private tentative: Tentative | undefined;
  private readonly nodes: Map<string, FlowNode>;
  private node: FlowNode;
  private roleMessages: ChatMessage[] = [];
  /** The conversation after the role messages: it carries over between nodes (APPEND). */
  private readonly context: ChatMessage[] = [];
  private tools: ToolSpec[] = [];
  /** The current node's functions as the LLM sees them (built-ins resolved), by name. */
  private functions: NodeFunctions = new Map();
  private ended = false;
  /** The conversation ends after the agent's next reply, with this outcome (opt_out). */
  private endAfterReply: string | undefined;
  private readonly builtinDeps: BuiltinDeps;
  /** Counts node entries, so a caller of `enter` can tell the node was left (even for itself). */
  private entries = 0;
  private readonly unknownVariables = new Set<string>();
  // Per turn:
  private toolRounds = 0;
  private apologised = false;
  /** What the agent said this turn, for `interrupted` to cut down to what was heard. */
  private replies: Array<{ message: AssistantMessage; line?: Line }> = [];

  constructor(private readonly flow: Flow, private readonly deps: FlowDeps) {
    this.nodes = new Map(flow.nodes.map((n) => [n.node_name, n]));
    this.node = this.nodes.get(flow.initial_node) ?? flow.nodes[0]!;
    this.languages = new CallLanguage(deps.languages ?? [], this.record.language_switches, () => this.now(), deps.onLanguage);
    this.builtinDeps = { now: () => this.deps.now?.() ?? new Date(), timeZone: deps.timeZone ?? 'UTC', ...(deps.sendDigits ? { sendDigits: deps.sendDigits } : {}), ...(deps.searchKnowledge ? { searchKnowledge: deps.searchKnowledge } : {}), ...(deps.languages?.length ? { languages: this.languages } : {}) };
  }

  get currentNode(): string {
    return this.node.node_name;
  }

  get nodeSettings(): FlowSession['nodeSettings'] {
    const n = this.node;
    return {
      ...(n.idle_timeout_seconds ? { idleMs: n.idle_timeout_seconds * 1000 } : {}),
      ...(n.vad?.stop_secs ? { endOfSpeechMs: n.vad.stop_secs * 1000 } : {}),
      turnTaking: resolveTurnTaking(this.flow.turn_taking, n.turn_taking, n.vad?.stop_secs),
    };
  }

  async *start(signal: AbortSignal): AsyncIterable<AgentAction> {
    this.beginTurn();
    yield* this.enter(this.flow.initial_node, signal, 'initial');
  }

  async *userTurn(text: string, signal: AbortSignal, options: { confirmed?: Promise<boolean>; startedMsAgo?: number; language?: string } = {}): AsyncIterable<AgentAction> {
    if (this.ended) return;
    this.beginTurn();
    if (options.language) this.languages.heard(options.language);
    const tentative = options.confirmed ? new Tentative(this.context, this.record, options.confirmed) : undefined;
    this.tentative = tentative;
    void tentative?.confirmed.then((yes) => yes && this.tentative === tentative && (this.tentative = undefined));
    this.record.transcription.push({ role: 'user', content: text, node: this.node.node_name, ...this.languages.mark(), ...recordingAt(this.deps.recordingMs?.(), options.startedMsAgo) });
    this.context.push({ role: 'user', content: text });
    yield* this.respond(signal);
  }

  retract(): void {
    const t = this.tentative;
    if (!t) return;
    this.tentative = undefined;
    t.rollBack(this.context, this.record);
    this.replies = [];
  }

  async *idle(signal: AbortSignal): AsyncIterable<AgentAction> {
    if (this.ended) return;
    this.beginTurn();
    if (this.node.idle_prompt) {
      yield* this.say(this.fill(this.node.idle_prompt));
      return;
    }
    this.context.push({ role: 'system', content: IDLE_NOTE });
    yield* this.respond(signal);
  }

  /** `spoken` is what the caller heard of this turn's replies, in order; the rest is dropped. */
  interrupted(spoken: string): void {
    let heard = collapse(spoken);
    for (const { message, line } of this.replies) {
      const said = collapse(message.content ?? '');
      const kept = heard.startsWith(said) ? said : heard;
      heard = collapse(heard.slice(kept.length));
      if (kept) message.content = kept;
      else if (message.tool_calls) message.content = null;
      else this.context.splice(this.context.indexOf(message), 1);
      if (line && kept) line.content = kept;
      else if (line) this.record.transcription.splice(this.record.transcription.indexOf(line), 1);
    }
    this.replies = [];
  }

  private beginTurn(): void {
    this.toolRounds = 0;
    this.apologised = false;
    this.replies = [];
  }

  private now(): string {
    return (this.deps.now?.() ?? new Date()).toISOString();
  }

  /** Unknown placeholders stay as written and are reported once. */
  private readonly missing = (name: string): void => {
    if (this.unknownVariables.has(name)) return;
    this.unknownVariables.add(name);
    this.record.errors.push(`no value for {${name}}`);
  };

  private fill(text: string, extra: Record<string, unknown> = {}): string {
    return substitute(text, { ...this.deps.variables, ...extra }, this.missing);
  }

  private addReply(text: string, calls: ToolCall[] = []): void {
    const message: AssistantMessage = { role: 'assistant', content: text || null, ...(calls.length ? { tool_calls: calls } : {}) };
    this.context.push(message);
    const line: Line | undefined = text ? { role: 'assistant', content: text, node: this.node.node_name, ...this.languages.mark(), ...recordingAt(this.deps.recordingMs?.()) } : undefined;
    if (line) this.record.transcription.push(line);
    this.replies.push({ message, ...(line ? { line } : {}) });
  }

  private async *say(text: string): AsyncGenerator<AgentAction> {
    this.addReply(text);
    yield { type: 'say', text };
  }

  private async *apologise(): AsyncGenerator<AgentAction> {
    if (this.apologised) return;
    this.apologised = true;
    yield* this.say(APOLOGY);
  }

  private async *end(outcome?: string): AsyncGenerator<AgentAction> {
    this.ended = true;
    this.record.outcome = outcome ?? this.node.outcome ?? (this.record.callback ? CALLBACK_REQUESTED : undefined);
    yield { type: 'end', ...(this.record.outcome ? { outcome: this.record.outcome } : {}) };
  }

  private async *enter(name: string, signal: AbortSignal, how: Entry): AsyncGenerator<AgentAction> {
    const node = this.nodes.get(name);
    if (!node) {
      this.record.errors.push(`transition to unknown node "${name}"`);
      return;
    }
    this.node = node;
    const entry = ++this.entries;
    const left = () => this.ended || this.entries !== entry;
    this.record.node_traversal.push(node.node_name);
    this.functions = nodeFunctions(node, this.deps.optOut === true, this.builtinDeps);
    yield* this.actions(node.pre_actions ?? [], signal, how !== 'action');
    if (left()) return;
    this.tools = toolsOf(this.functions);
    if (node.role_messages?.length) this.roleMessages = node.role_messages.map((m) => ({ role: m.role, content: this.fill(m.content) }) as ChatMessage);
    for (const m of node.task_messages) this.context.push({ role: m.role, content: this.fill(m.content) } as ChatMessage);
    const respondNow = node.respond_immediately ?? how !== 'action';
    if (respondNow) yield* this.respond(signal);
    if (left()) return;
    yield* this.actions(node.post_actions ?? [], signal, false);
    // A function call is answered in the new node even when it does not respond immediately.
    if (!respondNow && how === 'function_call' && !left()) yield* this.respond(signal);
  }

  /** `respondAfter`: whether a node entered by a `function` action runs the LLM by default. */
  private async *actions(actions: FlowAction[], signal: AbortSignal, respondAfter: boolean): AsyncGenerator<AgentAction> {
    const entry = this.entries;
    for (const action of actions) {
      if (this.ended || this.entries !== entry) return;
      if (action.type === 'tts_say') yield* this.say(this.fill(action.text));
      else if (action.type === 'end_conversation') yield* this.end(action.outcome);
      else {
        const fn = this.functions.get(action.name)?.fn;
        if (!fn) {
          this.record.errors.push(`action names unknown function "${action.name}" in node ${this.node.node_name}`);
          continue;
        }
        const outcome = await this.call(fn, {});
        if (outcome.transfer && outcome.warm && this.deps.warmTransfer) yield* this.warm(outcome.transfer, outcome.warm);
        else if (outcome.transfer) yield* this.transfer(outcome.transfer);
        else if (outcome.transition) yield* this.enter(outcome.transition, signal, respondAfter ? 'initial' : 'action');
      }
    }
  }

  private async *transfer(to: string, bridged = false): AsyncGenerator<AgentAction> {
    this.ended = true;
    yield { type: 'transfer', to, ...(bridged ? { bridged: true as const } : {}) };
  }

  /** A warm transfer (warm.ts): the human is called and briefed, and decides. */
  private async *warm(to: string, w: WarmCall, toolCallId?: string): AsyncGenerator<AgentAction> {
    const host: WarmHost = { node: this.node.node_name, record: this.record, deps: this.deps, fill: (text) => this.fill(text, w.args), say: (text) => this.say(text), end: () => this.end(), transfer: () => this.transfer(to, true) };
    if (toolCallId) host.toolResult = (result) => this.context.push({ role: 'tool', tool_call_id: toolCallId, content: JSON.stringify(result) });
    yield* warmTransfer(host, to, w);
    // A model that keeps the conversation itself learns the outcome now, not at the caller's next turn.
    if (!this.ended) this.deps.llm.sync?.(this.messages());
  }

  /**
   * Runs the LLM, then the functions it calls, until it answers without calls. A turn runs at most
   * MAX_TOOL_ROUNDS rounds of calls (transitions included), against a model calling tools forever.
   * Calls that arrived are always answered (even after an abort) so the context stays valid.
   */
  private async *respond(signal: AbortSignal): AsyncGenerator<AgentAction> {
    for (;;) {
      if (this.ended || signal.aborted) return;
      const reply = yield* this.generate(signal);
      if (!reply || reply.calls.length === 0) return;
      if (this.toolRounds++ >= MAX_TOOL_ROUNDS) {
        for (const call of reply.calls) this.context.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify({ error: 'too many function calls in this turn' }) });
        this.record.errors.push(`the LLM called functions more than ${MAX_TOOL_ROUNDS} times in one turn; the turn was cut`);
        return yield* this.apologise();
      }
      // A speculative turn runs no function until the caller's turn is confirmed over.
      if (this.tentative && !(await this.tentative.confirmed)) return;
      if (signal.aborted) return;
      let transition: string | undefined;
      for (const call of reply.calls) {
        const outcome = await this.handleCall(call);
        // A warm transfer ends the turn: the caller is bridged, told the human declined, or told they will be called back.
        if (outcome.transfer && outcome.warm && this.deps.warmTransfer) return yield* this.warm(outcome.transfer, { ...outcome.warm, result: outcome.result }, call.id);
        this.context.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(outcome.result) });
        if (outcome.transfer) return yield* this.transfer(outcome.transfer);
        transition ??= outcome.transition;
      }
      if (this.endAfterReply) {
        // The agent confirms in one reply (no more functions), then the call ends.
        const outcome = this.endAfterReply;
        this.endAfterReply = undefined;
        yield* this.generate(signal, false);
        return yield* this.end(outcome);
      }
      if (transition) return yield* this.enter(transition, signal, 'function_call');
    }
  }

  /** What the LLM is given: the node's role messages, the language line, the conversation. */
  private messages(): ChatMessage[] {
    return [...this.roleMessages, ...this.languages.instruction(), ...this.context];
  }

  /** One LLM reply, its text streamed as `say` actions. Undefined when it failed or was aborted. */
  private async *generate(signal: AbortSignal, withTools = true): AsyncGenerator<AgentAction, { text: string; calls: ToolCall[] } | undefined> {
    let text = '';
    const calls: ToolCall[] = [];
    let kept = false;
    const messages = this.messages();
    // The span of the request (a Langfuse generation), when the turn is traced.
    const span = startLlmSpan(this.deps, this.node.node_name, messages, this.tools);
    const asked = performance.now();
    let firstAt: number | undefined;
    let finishReason: string | undefined;
    let usage: { promptTokens: number; completionTokens: number } | undefined;
    let pieces = 0;
    try {
      for await (const event of this.deps.llm.chat({ messages, ...(withTools && this.tools.length ? { tools: this.tools } : {}), signal })) {
        if (signal.aborted) return undefined;
        if (event.type !== 'done') {
          firstAt ??= performance.now();
          pieces++;
        }
        if (event.type === 'text') {
          text += event.text;
          yield { type: 'say', text: event.text, ...(this.deps.llm.voiced ? { voiced: true as const } : {}) };
        } else if (event.type === 'tool_call') calls.push(event.call);
        else {
          finishReason = event.finishReason;
          if (event.usage) usage = addUsage(this.record.usage, event.usage);
        }
      }
      kept = true;
      if (text || calls.length) this.addReply(text, calls);
      return { text, calls };
    } catch (err) {
      if (signal.aborted) return undefined;
      failSpan(span, err);
      this.record.errors.push(`LLM failed in node ${this.node.node_name}: ${(err as Error).message}`);
      kept = true;
      if (text) this.addReply(text);
      yield* this.apologise();
      return undefined;
    } finally {
      // Cut short (abort, or the pipeline stopped listening): keep what was produced, for
      // `interrupted` to trim to what was heard. Unanswered tool calls are dropped.
      if (!kept && text) this.addReply(text);
      // A speculative reply's cost, for usage.cancelled if it is dropped (estimated when cut off before its usage came).
      if (this.tentative) {
        const cutOff = signal.aborted || !kept;
        const spent = usage ?? (cutOff ? addUsage(this.record.usage, estimateUsage(messages, pieces)) : undefined);
        if (spent) this.tentative.charge(spent);
      }
      endLlmSpan(span, { durationMs: performance.now() - asked, aborted: signal.aborted || !kept, calls, text, firstAt, asked, finishReason, usage });
    }
  }

  private async handleCall(call: ToolCall): Promise<CallOutcome> {
    const fn = this.functions.get(call.name)?.fn;
    if (!fn) {
      this.record.errors.push(`the LLM called unknown function "${call.name}" in node ${this.node.node_name}`);
      return { result: { error: 'unknown function' } };
    }
    const checked = validateArguments(fn, call.arguments);
    if (!checked.ok) {
      this.record.errors.push(`bad arguments for ${fn.name} in node ${this.node.node_name}: ${checked.error}`);
      this.record.function_calls.push({ node: this.node.node_name, name: fn.name, arguments: {}, hooks: [], error: checked.error, at: this.now() });
      return { result: { error: `invalid arguments: ${checked.error}` } };
    }
    return this.call(fn, checked.value);
  }

  /** A built-in: its effect, what it leaves on the record, and what follows (an end after one more reply). */
  private async callBuiltin(name: BuiltinFunction, args: Record<string, unknown>, record: FunctionCallRecord): Promise<CallOutcome> {
    const done = await runBuiltin(name, args, this.builtinDeps);
    if (done.error) {
      record.error = done.error;
      this.record.errors.push(`${name}: ${done.error}`);
    }
    if (done.keys) this.record.transcription.push({ role: 'assistant', content: `(pressed ${done.keys})`, ...recordingAt(this.deps.recordingMs?.()) });
    if (done.optedOut) this.record.opted_out = done.optedOut;
    if (done.callback) this.record.callback = done.callback;
    if (done.knowledge) this.record.knowledge.push(done.knowledge);
    if (done.endAfterReply) this.endAfterReply = done.endAfterReply;
    return { result: done.result };
  }

  /**
   * Runs a function: its hooks (each bounded by its timeout; not cut by the turn's signal, so a
   * barge-in does not lose a side effect the caller asked for), its record, and what follows.
   */
  private async call(fn: FlowFunction, args: Record<string, unknown>): Promise<CallOutcome> {
    const record: FunctionCallRecord = { node: this.node.node_name, name: fn.name, arguments: args, hooks: [], at: this.now() };
    this.record.function_calls.push(record);
    if (this.functions.get(fn.name)?.builtin) return this.callBuiltin(fn.name as BuiltinFunction, args, record);
    return runFunction(fn, args, record, { deps: this.deps, missing: this.missing, fill: (text) => this.fill(text, args), errors: this.record.errors });
  }
}

export function createFlowSession(flow: Flow, deps: FlowDeps): FlowSession {
  return new FlowEngine(flow, deps);
}

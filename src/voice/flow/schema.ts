/**
 * Terminology
 * - flow: a template's conversation as data (pipecat-flows style): `initial_node` and `nodes`.
 * - node: one phase of the conversation; what the agent is told (`role_messages`, `task_messages`),
 *   the tools it may call (`functions`) and what happens on entry and exit (`pre_actions`,
 *   `post_actions`).
 * - function: a tool the LLM may call in a node; it may fire HTTP `hooks`, `transition_to`
 *   another node, or `transfer_to_number` (a transfer to a human; with `warm_transfer` the human is
 *   called and briefed first, and accepts or declines). A `builtin` function is one
 *   of Dialer's own, offered by name alone: `send_dtmf` (press keys in a phone menu), `opt_out`
 *   (the callee asks not to be called again), `schedule_callback` (call back at a time they chose),
 *   `search_knowledge` (the business's documents), `switch_language` (speak another of the template's languages).
 * - action: a step run on entering (pre) or leaving (post) a node: `tts_say` speaks `text`,
 *   `end_conversation` ends the call (with an optional `outcome`), `function` runs a function of
 *   the same node as if the LLM had called it with no arguments (its hooks fire, its transition is
 *   followed); so it may not name a function that has required arguments.
 *
 * `{variable}` placeholders may appear in message content, hook URLs, headers and bodies; the
 * voice engine substitutes lead payload and call values.
 *
 * The flow's shape, once: TypeBox schemas with the types derived from them. validate.ts checks a
 * flow written through the API against it.
 */
import { Type, type Static } from 'typebox';
import { TurnTakingSchema } from './turn-taking.js';

export const MESSAGE_ROLES = ['system', 'user', 'assistant'] as const;
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export const ACTION_TYPES = ['tts_say', 'end_conversation', 'function'] as const;
export const MAX_HOOK_TIMEOUT_SECONDS = 60;
export const JSON_TYPES = ['string', 'number', 'integer', 'boolean', 'array', 'object', 'null'];
export const FUNCTION_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;
export const MAX_NODE_NAME_LENGTH = 100;
/** Dialer's own functions, offered in a node as `{"name": "send_dtmf", "type": "builtin"}`. */
export const BUILTIN_FUNCTIONS = ['send_dtmf', 'opt_out', 'schedule_callback', 'search_knowledge', 'switch_language'] as const;
export type BuiltinFunction = (typeof BUILTIN_FUNCTIONS)[number];

// Response schemas stay open (additionalProperties) so a stored flow is never trimmed on the way
// out; writes are checked by validateFlow, which refuses unknown fields.
const open = { additionalProperties: true } as const;

export const FlowMessageSchema = Type.Object(
  { role: Type.Union([Type.Literal('system'), Type.Literal('user'), Type.Literal('assistant')]), content: Type.String() },
  open,
);

export const HttpRequestSchema = Type.Object(
  {
    url: Type.String({ description: 'Absolute http(s) URL; {variable} placeholders allowed' }),
    method: Type.Optional(
      Type.Union([Type.Literal('GET'), Type.Literal('POST'), Type.Literal('PUT'), Type.Literal('PATCH'), Type.Literal('DELETE')]),
    ),
    headers: Type.Optional(Type.Record(Type.String(), Type.String())),
    query_params: Type.Optional(Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()]))),
    body: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    timeout: Type.Optional(Type.Number({ description: `Seconds, positive, at most ${MAX_HOOK_TIMEOUT_SECONDS}` })),
  },
  open,
);

export const FlowHookSchema = Type.Object({ name: Type.String(), http_request: HttpRequestSchema }, open);

/** A transfer that briefs the human first (a function's `warm_transfer`); every text may hold `{variable}`s. */
export const WarmTransferSchema = Type.Object(
  {
    briefing: Type.Optional(
      Type.String({
        description:
          'What the human hears before taking the call; {variable}s and the function\'s arguments are filled in. Without it the LLM summarises the transcript in two sentences (a fixed sentence naming the customer when that fails)',
      }),
    ),
    hold_message: Type.Optional(Type.String({ description: 'What the customer hears while the human is briefed (default: a short request to hold)' })),
    declined_message: Type.Optional(Type.String({ description: 'What the agent tells the customer when the human declines; the agent then keeps talking' })),
    no_answer_message: Type.Optional(Type.String({ description: 'What the agent tells the customer when nobody answers (busy, no answer, a failed call); the call then ends with a callback scheduled' })),
    callback_after_minutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 10080, description: 'When nobody answered: how long after the call the lead is called back (default 60)' })),
  },
  { ...open, description: 'Brief the human before the customer is put through: Dialer calls the human, speaks the briefing, and asks them to accept (say yes or press 1) or decline (say no or press 2)' },
);

export const FlowFunctionSchema = Type.Object(
  {
    name: Type.String({ description: 'Identifier-like, unique within the node' }),
    type: Type.Optional(
      Type.Literal('builtin', { description: `One of Dialer's own functions (${BUILTIN_FUNCTIONS.join(', ')}), given by name and optionally description alone` }),
    ),
    description: Type.Optional(Type.String()),
    properties: Type.Optional(
      Type.Record(
        Type.String(),
        Type.Object(
          {
            type: Type.Union([Type.String(), Type.Array(Type.String())]),
            description: Type.Optional(Type.String()),
            enum: Type.Optional(Type.Array(Type.Unknown())),
          },
          open,
        ),
        {
          description: 'JSON-schema properties of the arguments',
        },
      ),
    ),
    required: Type.Optional(Type.Array(Type.String())),
    transition_to: Type.Optional(Type.String({ description: 'Name of the node to go to after the call' })),
    transfer_to_number: Type.Optional(Type.String({ description: 'Warm-transfer the caller to this E.164 number (or {variable}) when the function is called' })),
    warm_transfer: Type.Optional(WarmTransferSchema),
    hooks: Type.Optional(Type.Array(FlowHookSchema)),
  },
  open,
);

export const FlowActionSchema = Type.Union([
  Type.Object({ type: Type.Literal('tts_say'), text: Type.String() }, open),
  Type.Object({ type: Type.Literal('end_conversation'), outcome: Type.Optional(Type.String()) }, open),
  Type.Object({ type: Type.Literal('function'), name: Type.String({ description: 'A function of the same node' }) }, open),
]);

export const FlowNodeSchema = Type.Object(
  {
    node_name: Type.String(),
    role_messages: Type.Optional(Type.Array(FlowMessageSchema)),
    task_messages: Type.Array(FlowMessageSchema),
    functions: Type.Optional(Type.Array(FlowFunctionSchema)),
    pre_actions: Type.Optional(Type.Array(FlowActionSchema)),
    post_actions: Type.Optional(Type.Array(FlowActionSchema)),
    respond_immediately: Type.Optional(Type.Boolean({ description: 'Run the LLM on entry without waiting for the callee' })),
    vad: Type.Optional(Type.Object({ stop_secs: Type.Optional(Type.Number()) }, open)),
    idle_timeout_seconds: Type.Optional(Type.Number({ description: 'Silence after which idle_prompt is spoken' })),
    idle_prompt: Type.Optional(Type.String()),
    outcome: Type.Optional(Type.String({ description: 'Outcome recorded when the call ends in this node' })),
    turn_taking: Type.Optional(TurnTakingSchema),
  },
  open,
);

export const PostCallAnalysisSchema = Type.Object(
  {
    summary: Type.Optional(Type.Boolean({ description: 'Ask for a summary of the call' })),
    fields: Type.Optional(
      Type.Record(Type.String(), Type.Object({ type: Type.String(), description: Type.String() }, open), {
        description: 'Values to fill from the conversation, as JSON-schema properties with descriptions, e.g. {"delivery_date": {"type": "string", "format": "date", "description": "..."}}',
      }),
    ),
    success_criteria: Type.Optional(Type.String({ description: 'What makes the call a success; the analysis says whether it was (success) and why (reason)' })),
  },
  { ...open, description: 'After each conversation, one LLM request over the transcript fills these (metaData.analysis, the webhook\'s analysis)' },
);

export const FlowSchema = Type.Object(
  {
    initial_node: Type.String({ description: 'Name of the first node' }),
    nodes: Type.Array(FlowNodeSchema),
    turn_taking: Type.Optional(TurnTakingSchema),
    post_call_analysis: Type.Optional(PostCallAnalysisSchema),
  },
  { ...open, description: 'The conversation: nodes as in pipecat-flows. Unknown fields are refused on write.' },
);

export type FlowMessage = Static<typeof FlowMessageSchema>;
export type HttpRequestSpec = Static<typeof HttpRequestSchema>;
export type FlowHook = Static<typeof FlowHookSchema>;
export type FlowFunction = Static<typeof FlowFunctionSchema>;
export type FlowAction = Static<typeof FlowActionSchema>;
export type FlowNode = Static<typeof FlowNodeSchema>;
export type Flow = Static<typeof FlowSchema>;

/** Values the voice engine fills itself; a lead's payload need not carry them. */
export const CALL_VARIABLES = new Set(['lead_id', 'call_id', 'request_id', 'template', 'execution_mode', 'attempt_count', 'customer_mobile_number']);
const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * The payload variables a flow's conversation needs: `{placeholders}` in what the agent is told
 * (role and task messages) and says (`tts_say`), less the call values. Hook requests are left out:
 * their placeholders may also be filled from function arguments at call time.
 */
export function promptVariables(flow: Flow): string[] {
  const found = new Set<string>();
  const scan = (text: unknown) => {
    if (typeof text !== 'string') return;
    for (const m of text.matchAll(PLACEHOLDER)) if (!CALL_VARIABLES.has(m[1]!)) found.add(m[1]!);
  };
  for (const node of flow.nodes ?? []) {
    for (const message of [...(node.role_messages ?? []), ...(node.task_messages ?? [])]) scan(message.content);
    for (const action of [...(node.pre_actions ?? []), ...(node.post_actions ?? [])]) {
      if (action.type === 'tts_say') scan((action as { text?: unknown }).text);
    }
  }
  return [...found].sort();
}
export type WarmTransfer = Static<typeof WarmTransferSchema>;

/**
 * The shapes of template test suites: a case (a scripted callee, the lead's variables, the
 * expectations its call must meet) and a run (each case's call and the verdict on each expectation,
 * with its evidence).
 *
 * Terminology
 * - case: one simulated conversation with a template and what must hold of it.
 * - callee: the simulated customer of a case, a script of steps played on the sandbox line, or a
 *   persona with a goal whose lines the LLM writes as the call goes.
 * - expectation: one thing the call must show (an outcome, nodes, a function call ...), judged pass or fail.
 * - run: every case of a suite played at once as calls; its leads are test leads (never in analytics).
 */
import { Type, type Static } from 'typebox';
import { Timestamp } from '../http/index.js';

const Text = (description: string, maxLength = 2000) => Type.String({ minLength: 1, maxLength, description });

export const CalleeStep = Type.Union(
  [
    Type.Object({ say: Text('A line the callee speaks (the local voice), heard by the speech-to-text', 1000) }, { additionalProperties: false }),
    Type.Object(
      {
        wait_for_agent: Type.Literal(true, { description: 'Wait until the agent has spoken and then paused' }),
        timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 120_000, default: 15_000 })),
      },
      { additionalProperties: false },
    ),
    Type.Object({ silence_ms: Type.Integer({ minimum: 1, maximum: 120_000, description: 'Stay silent this long' }) }, { additionalProperties: false }),
    Type.Object({ keys: Type.String({ pattern: '^[0-9*#]{1,32}$', description: 'Press these keys' }) }, { additionalProperties: false }),
    Type.Object({ hang_up: Type.Literal(true) }, { additionalProperties: false }),
  ],
  { description: 'One step of the callee: say, wait_for_agent, silence_ms, keys or hang_up' },
);

export const Callee = Type.Object(
  {
    answer: Type.Optional(Type.Union([Type.Literal('person'), Type.Literal('voicemail'), Type.Literal('busy'), Type.Literal('no_answer')], { default: 'person' })),
    steps: Type.Array(CalleeStep, { maxItems: 100, default: [] }),
    persona: Type.Optional(Text('Instead of steps, a customer the LLM plays: who they are, their situation and manner', 2000)),
    goal: Type.Optional(Text("The persona's goal on the call (with persona)", 1000)),
    max_turns: Type.Optional(Type.Integer({ minimum: 1, maximum: 20, description: 'A persona speaks at most this many times, then hangs up (default 6)' })),
    max_seconds: Type.Optional(Type.Integer({ minimum: 5, maximum: 600, default: 90, description: 'The callee hangs up after this long' })),
  },
  {
    additionalProperties: false,
    description: 'The simulated customer: a script of steps, or a persona with a goal played by the configured LLM (each of its lines asked of the LLM given the conversation so far)',
  },
);
export type Callee = Static<typeof Callee>;

/** Every kind of expectation, and what each checks. */
export const EXPECTATION_KINDS = {
  outcome: 'the lead\'s outcome equals `equals`',
  nodes: 'the nodes visited: `match` exact (the whole path), in_order (these, in this order, others between allowed) or set (each visited)',
  function_called: 'the function `name` was called (with `arguments` among its arguments, when given); `called: false`: it was not',
  hook_request: 'a hook request was made (of `function` / `hook`, to a URL containing `url_contains`, with `body` among its body), answered 2xx',
  analysis_field: 'the post-call analysis field `field` equals `equals`',
  says: 'the agent said `text` (case and punctuation ignored)',
  never_says: 'the agent never said `text`',
  turn_latency: 'every turn of the agent began within `max_ms` of the callee\'s end of speech',
  judge: 'the LLM judges the transcript to meet `criteria` (and says why)',
} as const;
export type ExpectationKind = keyof typeof EXPECTATION_KINDS;

const Json = Type.Unknown();
const JsonObject = Type.Record(Type.String(), Type.Unknown());

export const Expectation = Type.Object(
  {
    kind: Type.String({ minLength: 1, maxLength: 40, description: `One of: ${Object.keys(EXPECTATION_KINDS).join(', ')}` }),
    equals: Type.Optional(Json),
    nodes: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 100 })),
    match: Type.Optional(Type.Union([Type.Literal('exact'), Type.Literal('in_order'), Type.Literal('set')])),
    name: Type.Optional(Text('A function name', 200)),
    arguments: Type.Optional(JsonObject),
    called: Type.Optional(Type.Boolean()),
    function: Type.Optional(Text('The function whose hook it is', 200)),
    hook: Type.Optional(Text('The hook name', 200)),
    url_contains: Type.Optional(Text('Part of the request URL', 2000)),
    body: Type.Optional(JsonObject),
    field: Type.Optional(Text('An analysis field', 200)),
    text: Type.Optional(Text('Words of the agent', 1000)),
    max_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: 120_000 })),
    criteria: Type.Optional(Text('What the conversation must do, in plain words', 4000)),
  },
  { additionalProperties: false, description: `An expectation: \`kind\` and its fields. ${Object.entries(EXPECTATION_KINDS).map(([k, v]) => `${k}: ${v}`).join('; ')}` },
);
export type Expectation = Static<typeof Expectation>;

const Variables = Type.Record(Type.String({ maxLength: 100 }), Type.Union([Type.String({ maxLength: 2000 }), Type.Number(), Type.Boolean()]), {
  description: "The lead's variables (its payload); customer_mobile_number is the test line's own",
});

export const TestCaseBody = Type.Object(
  {
    name: Text('Unique within the template', 200),
    callee: Callee,
    variables: Type.Optional(Variables),
    expectations: Type.Array(Expectation, { maxItems: 50, default: [] }),
  },
  { additionalProperties: false },
);
export type TestCaseBody = Static<typeof TestCaseBody>;

export const TestCasePatch = Type.Partial(TestCaseBody, { additionalProperties: false });
export type TestCasePatch = Static<typeof TestCasePatch>;

export const TestCase = Type.Object({
  id: Type.String(),
  template_id: Type.String(),
  reseller_id: Type.String(),
  merchant_id: Type.Union([Type.String(), Type.Null()]),
  name: Type.String(),
  callee: Callee,
  variables: Variables,
  expectations: Type.Array(Expectation),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type TestCase = Static<typeof TestCase>;

export const RunBody = Type.Object(
  {
    test_ids: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 200, description: 'Run only these stored cases' })),
    cases: Type.Optional(Type.Array(TestCaseBody, { minItems: 1, maxItems: 200, description: 'Run these cases instead of the stored ones (a suite file); they are not stored' })),
  },
  { additionalProperties: false },
);
export type RunBody = Static<typeof RunBody>;

export const ExpectationResult = Type.Object({
  kind: Type.String(),
  expectation: Expectation,
  /** null: not judged (no LLM to judge with, or the call never took place). */
  passed: Type.Union([Type.Boolean(), Type.Null()], { description: 'null: could not be judged (says why in `detail`)' }),
  detail: Type.String({ description: 'The evidence: what was expected and what the call showed' }),
});
export type ExpectationResult = Static<typeof ExpectationResult>;

export const CaseResult = Type.Object({
  test_id: Type.Union([Type.String(), Type.Null()], { description: 'The stored case (null: a case sent with the run)' }),
  name: Type.String(),
  status: Type.Union([Type.Literal('queued'), Type.Literal('calling'), Type.Literal('passed'), Type.Literal('failed'), Type.Literal('error'), Type.Literal('not_runnable')], {
    description: 'queued, calling, then passed, failed (an expectation failed), error (the call could not be played) or not_runnable (this service cannot play it, say why in `error`: a persona with no LLM configured)',
  }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'Why the case could not be played or judged' }),
  lead_id: Type.Union([Type.String(), Type.Null()]),
  call_id: Type.Union([Type.String(), Type.Null()]),
  outcome: Type.Union([Type.String(), Type.Null()]),
  expectations: Type.Array(ExpectationResult),
  transcript: Type.Array(Type.Object({ role: Type.String(), content: Type.String(), node: Type.Optional(Type.String()), at_ms: Type.Optional(Type.Number()) })),
  node_path: Type.Array(Type.String()),
  function_calls: Type.Array(Type.Object({ name: Type.String(), node: Type.String(), arguments: Type.Unknown() })),
  turn_latency_ms: Type.Array(Type.Number()),
  duration_seconds: Type.Union([Type.Number(), Type.Null()]),
  cost: Type.Union([Type.Number(), Type.Null()]),
  recording_url: Type.Union([Type.String(), Type.Null()], { description: 'GET it (with the same token) for the call\'s audio' }),
  /** The case as it was run. */
  case: TestCaseBody,
});
export type CaseResult = Static<typeof CaseResult>;

export const TestRun = Type.Object({
  id: Type.String(),
  template_id: Type.String(),
  status: Type.Union([Type.Literal('running'), Type.Literal('passed'), Type.Literal('failed'), Type.Literal('interrupted')]),
  agent: Type.String({ description: 'The agent the calls ran: flow (the template) or greeter (no LLM is configured)' }),
  note: Type.Union([Type.String(), Type.Null()], { description: 'What could not run as asked, and why' }),
  passed: Type.Integer(),
  failed: Type.Integer(),
  total: Type.Integer(),
  cases: Type.Array(CaseResult),
  created_at: Timestamp,
  finished_at: Type.Union([Timestamp, Type.Null()]),
});
export type TestRun = Static<typeof TestRun>;

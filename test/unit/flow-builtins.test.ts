/**
 * The flow engine's built-in functions with a scripted LLM: send_dtmf presses keys through the
 * call, opt_out (offered in every node when enabled) ends the call OPTED_OUT after one confirming
 * reply, schedule_callback records a time the callee chose and refuses bad ones; and how templates
 * declare them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { validateFlow, type Flow } from '../../src/templates/index.js';
import { createFlowSession, type AgentAction } from '../../src/voice/flow/index.js';
import { ScriptedLLM, type ScriptedReply } from '../helpers/scripted-llm.js';

const NOW = new Date('2026-03-13T15:00:00Z');

async function collect(actions: AsyncIterable<AgentAction>): Promise<AgentAction[]> {
  const out: AgentAction[] = [];
  for await (const a of actions) out.push(a);
  return out;
}

const said = (actions: AgentAction[]) => actions.filter((a) => a.type === 'say').map((a) => (a as { text: string }).text).join('');

function session(flow: Flow, replies: ScriptedReply[], extra: { optOut?: boolean; sendDigits?: (d: string) => Promise<void>; timeZone?: string } = {}) {
  const llm = new ScriptedLLM(replies);
  const s = createFlowSession(flow, { llm, variables: { customer_name: 'Ana' }, now: () => NOW, ...extra });
  return { s, llm };
}

const menuFlow: Flow = {
  initial_node: 'menu',
  nodes: [{ node_name: 'menu', task_messages: [{ role: 'system', content: 'Get to sales.' }], functions: [{ name: 'send_dtmf', type: 'builtin' }] }],
};

describe('send_dtmf', () => {
  it('presses the keys through the call, in the transcript and the function calls, and tells the LLM', async () => {
    const pressed: string[] = [];
    const { s, llm } = session(menuFlow, [{ tools: [{ name: 'send_dtmf', arguments: { digits: '2' } }] }, { tools: [{ name: 'send_dtmf', arguments: { digits: '1w3#' } }] }, { text: ['Hello, sales please.'] }], {
      sendDigits: async (d) => void pressed.push(d),
    });
    const actions = await collect(s.start(new AbortController().signal));
    assert.deepEqual(pressed, ['2', '1w3#']);
    assert.equal(said(actions), 'Hello, sales please.');
    assert.deepEqual(s.record.transcription, [
      { role: 'assistant', content: '(pressed 2)' },
      { role: 'assistant', content: '(pressed 1w3#)' },
      { role: 'assistant', content: 'Hello, sales please.' },
    ]);
    assert.deepEqual(s.record.function_calls.map((c) => [c.name, c.arguments]), [['send_dtmf', { digits: '2' }], ['send_dtmf', { digits: '1w3#' }]]);
    // The tool the LLM saw, and the result it got.
    const tool = llm.requests[0]!.tools!.find((t) => t.name === 'send_dtmf')!;
    assert.deepEqual((tool.parameters as { required: string[] }).required, ['digits']);
    const result = llm.requests[1]!.messages.at(-1)!;
    assert.equal(result.role, 'tool');
    assert.deepEqual(JSON.parse((result as { content: string }).content), { ok: true, pressed: '2' });
    assert.deepEqual(s.record.errors, []);
  });

  it('refuses keys that are not keys, and says so when the call cannot press them', async () => {
    const { s, llm } = session(menuFlow, [{ tools: [{ name: 'send_dtmf', arguments: { digits: '2x' } }] }, { text: ['Sorry.'] }], { sendDigits: async () => assert.fail('not pressed') });
    await collect(s.start(new AbortController().signal));
    assert.match(JSON.parse((llm.requests[1]!.messages.at(-1) as { content: string }).content).error, /not a key sequence/);
    const web = session(menuFlow, [{ tools: [{ name: 'send_dtmf', arguments: { digits: '2' } }] }, { text: ['Sorry.'] }]);
    await collect(web.s.start(new AbortController().signal));
    assert.deepEqual(web.s.record.errors, ['send_dtmf: keys cannot be pressed on this call']);
  });
});

const talkFlow: Flow = {
  initial_node: 'talk',
  nodes: [{ node_name: 'talk', task_messages: [{ role: 'system', content: 'Offer the upgrade to {customer_name}.' }], functions: [{ name: 'confirm', transition_to: 'talk' }] }],
};

describe('opt_out', () => {
  it('is offered in every node when enabled; the agent confirms in one reply without tools and the call ends OPTED_OUT', async () => {
    const { s, llm } = session(talkFlow, [{ text: ['Hi Ana! Would you like the upgrade?'] }, { tools: [{ name: 'opt_out', arguments: { reason: 'asked to stop calling' } }] }, { text: ['Understood, we will not call you again. Goodbye.'] }], { optOut: true });
    await collect(s.start(new AbortController().signal));
    assert.deepEqual(llm.requests[0]!.tools!.map((t) => t.name), ['confirm', 'opt_out']);
    const actions = await collect(s.userTurn('Please stop calling me.', new AbortController().signal));
    assert.equal(said(actions), 'Understood, we will not call you again. Goodbye.');
    assert.deepEqual(actions.at(-1), { type: 'end', outcome: 'OPTED_OUT' });
    assert.equal(llm.requests[2]!.tools, undefined, 'the confirmation is one reply, with no function to call');
    assert.equal(s.record.opted_out?.reason, 'asked to stop calling');
    assert.equal(s.record.opted_out?.at, NOW.toISOString());
    assert.equal(llm.remaining, 0);
  });

  it('is not offered when the configuration turns it off (and a node may still list it)', async () => {
    const off = session(talkFlow, [{ text: ['Hi!'] }]);
    await collect(off.s.start(new AbortController().signal));
    assert.deepEqual(off.llm.requests[0]!.tools!.map((t) => t.name), ['confirm']);
    const listed: Flow = { ...talkFlow, nodes: [{ ...talkFlow.nodes[0]!, functions: [{ name: 'opt_out', type: 'builtin', description: 'They want no more calls.' }] }] };
    const own = session(listed, [{ text: ['Hi!'] }]);
    await collect(own.s.start(new AbortController().signal));
    assert.deepEqual(own.llm.requests[0]!.tools!.map((t) => [t.name, t.description]), [['opt_out', 'They want no more calls.']]);
  });
});

const callbackFlow: Flow = {
  initial_node: 'talk',
  nodes: [{ node_name: 'talk', task_messages: [{ role: 'system', content: 'Talk.' }], functions: [{ name: 'schedule_callback', type: 'builtin' }] }],
};

describe('schedule_callback', () => {
  it('records the time the callee chose (UTC), and the outcome is callback_requested unless the flow names another', async () => {
    const { s, llm } = session(callbackFlow, [{ tools: [{ name: 'schedule_callback', arguments: { time: '2026-03-14T10:00:00+01:00', reason: 'busy now' } }] }, { text: ['I will call you tomorrow at ten.'] }], { timeZone: 'Europe/Paris' });
    await collect(s.start(new AbortController().signal));
    assert.deepEqual(s.record.callback, { at: '2026-03-14T09:00:00Z', requested: '2026-03-14T10:00:00+01:00', reason: 'busy now' });
    // The LLM was told the time now, in the lead's zone.
    assert.match(llm.requests[0]!.tools![0]!.description!, /Now is 2026-03-13T16:00:00\+01:00 \(Europe\/Paris\)/);
  });

  it('reads a time without an offset in the call zone; refuses the past, the far future and what is not a time', async () => {
    const ok = session(callbackFlow, [{ tools: [{ name: 'schedule_callback', arguments: { time: '2026-03-14T10:00' } }] }, { text: ['Fine.'] }], { timeZone: 'America/New_York' });
    await collect(ok.s.start(new AbortController().signal));
    assert.equal(ok.s.record.callback?.at, '2026-03-14T14:00:00Z');
    for (const [time, error] of [['2026-03-13T14:00:00Z', /passed/], ['2027-03-13T14:00:00Z', /90 days/], ['next tuesday', /not an ISO 8601/]] as const) {
      const bad = session(callbackFlow, [{ tools: [{ name: 'schedule_callback', arguments: { time } }] }, { text: ['Which time?'] }]);
      await collect(bad.s.start(new AbortController().signal));
      assert.equal(bad.s.record.callback, undefined);
      assert.match(JSON.parse((bad.llm.requests[1]!.messages.at(-1) as { content: string }).content).error, error);
    }
  });
});

describe('declaring built-ins in a template', () => {
  it('accepts a built-in by name (with a description), refuses unknown names, extra fields and actions that name one', () => {
    const ok = validateFlow({ ...menuFlow, nodes: [{ ...menuFlow.nodes[0]!, functions: [{ name: 'send_dtmf', type: 'builtin', description: 'Press keys' }, { name: 'schedule_callback', type: 'builtin' }] }] });
    assert.deepEqual(ok, []);
    const bad = validateFlow({
      initial_node: 'a',
      nodes: [
        {
          node_name: 'a',
          task_messages: [],
          functions: [{ name: 'launch_rocket', type: 'builtin' }, { name: 'send_dtmf', type: 'builtin', hooks: [] }, { name: 'x', type: 'magic' }, { name: 'opt_out', type: 'builtin' }],
          pre_actions: [{ type: 'function', name: 'opt_out' }],
        },
      ],
    });
    assert.deepEqual(bad.map((e) => e.path).sort(), [
      '/flow/nodes/0/functions/0/name',
      '/flow/nodes/0/functions/1/hooks',
      '/flow/nodes/0/functions/2/type',
      '/flow/nodes/0/pre_actions/0/name',
    ]);
  });

  it('validates post_call_analysis', () => {
    const flow = (analysis: unknown) => validateFlow({ ...menuFlow, post_call_analysis: analysis }).map((e) => e.path);
    assert.deepEqual(flow({ summary: true, fields: { delivery_date: { type: 'string', format: 'date', description: 'The agreed date' } }, success_criteria: 'A date was agreed.' }), []);
    assert.deepEqual(flow({}), ['/flow/post_call_analysis']);
    assert.deepEqual(flow({ summary: 'yes' }), ['/flow/post_call_analysis/summary']);
    assert.deepEqual(flow({ fields: { a: { type: 'string' } } }), ['/flow/post_call_analysis/fields/a/description']);
    assert.deepEqual(flow({ fields: { a: { type: 'strung', description: 'x' } } }), ['/flow/post_call_analysis/fields/a']);
    assert.deepEqual(flow({ success_criteria: '  ', colour: 'red' }), ['/flow/post_call_analysis/colour', '/flow/post_call_analysis/success_criteria']);
  });
});

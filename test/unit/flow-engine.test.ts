/**
 * The flow engine driven turn by turn with a scripted LLM and a real local HTTP server for hooks:
 * greet -> confirm the order (or reschedule, or talk to a human) -> end `confirmed` / `rescheduled`.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { validateFlow, type Flow } from '../../src/templates/index.js';
import { createFlowSession, type AgentAction } from '../../src/voice/flow/index.js';
import type { ChatMessage } from '../../src/voice/services.js';
import { ScriptedLLM, type ScriptedReply } from '../helpers/scripted-llm.js';
import { OutboundClient, parseOutboundAllowList } from '../../src/lib/outbound/index.js';
import { TEST_OUTBOUND_ALLOW } from '../helpers/app.js';

// The hook receiver listens on loopback, which the outbound URL policy allows only when told to.
const outbound = new OutboundClient(parseOutboundAllowList(TEST_OUTBOUND_ALLOW));

let server: http.Server;
let hookUrl: string;
const received: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; body: unknown }> = [];
let hookBehaviour: 'ok' | 'fail-once' | 'fail' | 'hang' | 'big' = 'ok';

before(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ method: req.method!, url: req.url!, headers: req.headers, body: body ? JSON.parse(body) : undefined });
      if (hookBehaviour === 'hang') return; // never answers
      if (hookBehaviour === 'fail' || (hookBehaviour === 'fail-once' && received.length === 1)) return void res.writeHead(500).end('oops');
      if (hookBehaviour === 'big') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ rows: 'r'.repeat(20_000) }));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ saved: true, id: 7 }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  hookUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  server.closeAllConnections();
  server.close();
  void outbound.close();
});
beforeEach(() => {
  received.length = 0;
  hookBehaviour = 'ok';
});

function orderFlow(hookTimeoutSeconds?: number): Flow {
  return {
    initial_node: 'greet',
    nodes: [
      {
        node_name: 'greet',
        role_messages: [{ role: 'system', content: 'You are a polite assistant of Acme calling {customer_name}.' }],
        task_messages: [{ role: 'system', content: 'Greet {customer_name} and ask to confirm order {order_id}.' }],
        idle_prompt: 'Are you still there, {customer_name}?',
        functions: [
          {
            name: 'confirm_order',
            description: 'The customer answered',
            properties: { confirmed: { type: 'boolean' }, note: { type: 'string' } },
            required: ['confirmed'],
            transition_to: 'end_confirmed',
            hooks: [
              {
                name: 'crm',
                http_request: {
                  url: `${hookUrl}/orders/{order_id}/confirm`,
                  headers: { authorization: 'Bearer {crm_token}', 'x-customer': '{customer_name}' },
                  query_params: { source: 'dialer', confirmed: '{confirmed}' },
                  body: { order: '{order_id}', customer: '{customer_name}', confirmed: '{confirmed}', nested: { note: 'note: {note}' }, attempt: 1 },
                  ...(hookTimeoutSeconds ? { timeout: hookTimeoutSeconds } : {}),
                },
              },
            ],
          },
          { name: 'reschedule', properties: { date: { type: 'string' }, slot: { type: 'string', enum: ['am', 'pm'] } }, required: ['date'], transition_to: 'end_rescheduled' },
          { name: 'talk_to_human', description: 'The customer asks for a person', transfer_to_number: '{agent_number}' },
        ],
      },
      {
        node_name: 'end_confirmed',
        task_messages: [{ role: 'system', content: 'Thank them.' }],
        respond_immediately: false,
        pre_actions: [{ type: 'tts_say', text: 'Thank you {customer_name}, your order is confirmed.' }, { type: 'end_conversation', outcome: 'confirmed' }],
      },
      { node_name: 'end_rescheduled', task_messages: [{ role: 'system', content: 'Say goodbye to {customer_name}.' }], post_actions: [{ type: 'end_conversation', outcome: 'rescheduled' }] },
    ],
  };
}

const variables = { customer_name: 'Ana Lima', order_id: 'A-42', crm_token: 'tok-1', agent_number: '+14155550100' };
const ROLE: ChatMessage = { role: 'system', content: 'You are a polite assistant of Acme calling Ana Lima.' };
const TASK: ChatMessage = { role: 'system', content: 'Greet Ana Lima and ask to confirm order A-42.' };

async function collect(actions: AsyncIterable<AgentAction>): Promise<AgentAction[]> {
  const out: AgentAction[] = [];
  for await (const a of actions) out.push(a);
  return out;
}
const said = (actions: AgentAction[]) => actions.filter((a) => a.type === 'say').map((a) => (a as { text: string }).text).join('');
const toolResults = (messages: ChatMessage[]) => messages.filter((m) => m.role === 'tool').map((m) => JSON.parse((m as { content: string }).content) as unknown);

function session(replies: ScriptedReply[], options: { hookTimeoutSeconds?: number; flow?: Flow; vars?: Record<string, unknown> } = {}) {
  const llm = new ScriptedLLM(replies);
  const flow = createFlowSession(options.flow ?? orderFlow(options.hookTimeoutSeconds), { llm, variables: options.vars ?? variables, hookTimeoutMs: 5000, fetch: outbound.fetch });
  return { llm, flow, signal: new AbortController().signal };
}

describe('flow engine: an order confirmation call', () => {
  it('uses a valid template; transfer_to_number must be E.164 or one {variable}', () => {
    assert.deepEqual(validateFlow(orderFlow(2)), []);
    const flow = orderFlow();
    flow.nodes[0]!.functions![2]!.transfer_to_number = '555-0100';
    assert.deepEqual(validateFlow(flow).map((e) => e.path), ['/flow/nodes/0/functions/2/transfer_to_number']);
  });

  it('greets, is interrupted, confirms through a function whose hook gets the substituted values, and ends confirmed', async () => {
    const { llm, flow, signal } = session([
      { text: ['Hello Ana! ', 'Shall I confirm order A-42?'] },
      { text: ['Great. '], tools: [{ name: 'confirm_order', arguments: { confirmed: true, note: 'leave at door' } }] },
    ]);
    // Turn 0: the initial node responds immediately, from its role and task messages.
    const greeting = await collect(flow.start(signal));
    assert.deepEqual(greeting, [{ type: 'say', text: 'Hello Ana! ' }, { type: 'say', text: 'Shall I confirm order A-42?' }]);
    assert.deepEqual(llm.requests[0]!.messages, [ROLE, TASK]);
    assert.deepEqual(llm.requests[0]!.tools!.map((t) => t.name), ['confirm_order', 'reschedule', 'talk_to_human']);
    assert.deepEqual(llm.requests[0]!.tools![0], {
      name: 'confirm_order',
      description: 'The customer answered',
      parameters: { type: 'object', properties: { confirmed: { type: 'boolean' }, note: { type: 'string' } }, required: ['confirmed'] },
    });
    assert.equal(flow.currentNode, 'greet');
    // The caller cut in: only what was heard stays, in the transcript and in the context.
    flow.interrupted('Hello Ana!');

    // Turn 1: the function runs its hook, transitions; the new node speaks and ends.
    const answer = await collect(flow.userTurn('Yes please, leave it at the door.', signal));
    assert.deepEqual(answer, [
      { type: 'say', text: 'Great. ' },
      { type: 'say', text: 'Thank you Ana Lima, your order is confirmed.' },
      { type: 'end', outcome: 'confirmed' },
    ]);
    assert.deepEqual(llm.requests[1]!.messages, [ROLE, TASK, { role: 'assistant', content: 'Hello Ana!' }, { role: 'user', content: 'Yes please, leave it at the door.' }]);
    assert.equal(llm.requests.length, 2, 'end_confirmed ends in its pre_actions: no LLM run');

    assert.equal(received.length, 1);
    const hook = received[0]!;
    assert.equal(hook.method, 'POST');
    assert.equal(hook.url, '/orders/A-42/confirm?source=dialer&confirmed=true');
    assert.equal(hook.headers.authorization, 'Bearer tok-1');
    assert.equal(hook.headers['x-customer'], 'Ana Lima');
    assert.equal(hook.headers['content-type'], 'application/json');
    assert.deepEqual(hook.body, { order: 'A-42', customer: 'Ana Lima', confirmed: 'true', nested: { note: 'note: leave at door' }, attempt: 1 });

    const r = flow.record;
    assert.deepEqual(r.node_traversal, ['greet', 'end_confirmed']);
    assert.equal(flow.currentNode, 'end_confirmed');
    assert.equal(r.outcome, 'confirmed');
    // Each turn names the node it was said in.
    assert.deepEqual(r.transcription, [
      { role: 'assistant', content: 'Hello Ana!', node: 'greet' },
      { role: 'user', content: 'Yes please, leave it at the door.', node: 'greet' },
      { role: 'assistant', content: 'Great. ', node: 'greet' },
      { role: 'assistant', content: 'Thank you Ana Lima, your order is confirmed.', node: 'end_confirmed' },
    ]);
    assert.equal(r.function_calls.length, 1);
    const call = r.function_calls[0]!;
    assert.deepEqual({ node: call.node, name: call.name, arguments: call.arguments, transition_to: call.transition_to }, {
      node: 'greet',
      name: 'confirm_order',
      arguments: { confirmed: true, note: 'leave at door' },
      transition_to: 'end_confirmed',
    });
    const { request: sent, ...result } = call.hooks[0]!;
    assert.deepEqual({ ...result, durationMs: 0 }, { name: 'crm', status: 200, ok: true, durationMs: 0, response: { saved: true, id: 7 } });
    // The request as sent is kept (its substituted URL and body), not its headers (they may hold secrets).
    assert.equal(sent?.method, 'POST');
    assert.equal(new URL(sent!.url).pathname + new URL(sent!.url).search, hook.url);
    assert.deepEqual(sent?.body, hook.body);
    assert.ok(!Number.isNaN(Date.parse(call.at)));
    assert.deepEqual(r.errors, []);
    assert.deepEqual(r.usage, { promptTokens: 20, completionTokens: 10, cancelled: { requests: 0, promptTokens: 0, completionTokens: 0 } });
    // Ended: nothing more is said and the LLM is not asked again.
    assert.deepEqual(await collect(flow.userTurn('Hello?', signal)), []);
    assert.deepEqual(await collect(flow.idle(signal)), []);
    assert.equal(llm.requests.length, 2);
  });

  it('records an unknown function and bad arguments, re-runs the LLM with the error, and reschedules', async () => {
    const { llm, flow, signal } = session([
      { text: ['Hi Ana.'] },
      { tools: [{ name: 'cancel_everything', arguments: {} }] },
      { tools: [{ name: 'reschedule', arguments: { date: 20261201, slot: 'night' } }] },
      { tools: [{ name: 'reschedule', arguments: { date: '2026-12-01', slot: 'pm' } }] },
      { text: ['See you on December first, Ana. ', 'Goodbye!'] },
    ]);
    await collect(flow.start(signal));
    const actions = await collect(flow.userTurn('Can we do another day?', signal));
    assert.deepEqual(actions, [
      { type: 'say', text: 'See you on December first, Ana. ' },
      { type: 'say', text: 'Goodbye!' },
      { type: 'end', outcome: 'rescheduled' },
    ]);
    const r = flow.record;
    assert.equal(r.errors.length, 2, r.errors.join('; '));
    assert.match(r.errors[0]!, /unknown function "cancel_everything" in node greet/);
    assert.match(r.errors[1]!, /argument "date" must be string, got 20261201; argument "slot" must be one of \["am","pm"\], got "night"/);
    // Each error went back to the LLM as the call's result, and the LLM ran again.
    assert.deepEqual(toolResults(llm.requests[2]!.messages), [{ error: 'unknown function' }]);
    assert.match(String((toolResults(llm.requests[3]!.messages)[1] as { error: string }).error), /^invalid arguments: argument "date" must be string/);
    // The new node's context: history carried over, the greet role kept, its own task appended, no tools.
    const last = llm.requests[4]!;
    assert.equal(last.tools, undefined);
    assert.deepEqual(last.messages[0], ROLE);
    assert.deepEqual(last.messages.at(-2), { role: 'tool', tool_call_id: 'call_3', content: JSON.stringify({ ok: true, hooks: [] }) });
    assert.deepEqual(last.messages.at(-1), { role: 'system', content: 'Say goodbye to Ana Lima.' });
    assert.deepEqual(r.node_traversal, ['greet', 'end_rescheduled']);
    assert.equal(r.outcome, 'rescheduled');
    assert.deepEqual(r.function_calls.map((c) => c.name), ['reschedule', 'reschedule']);
    assert.match(r.function_calls[0]!.error!, /argument "date" must be string/);
    assert.equal(r.function_calls[1]!.error, undefined);
    assert.deepEqual(r.function_calls[1]!.arguments, { date: '2026-12-01', slot: 'pm' });
  });

  it('cuts a turn whose LLM keeps calling functions with a missing required argument', async () => {
    const missing = { tools: [{ name: 'reschedule', arguments: { slot: 'am' } }] };
    const { llm, flow, signal } = session([{ text: ['Hi.'] }, missing, missing, missing, missing, { text: ['Sorry, which day?'] }]);
    await collect(flow.start(signal));
    const actions = await collect(flow.userTurn('Another day.', signal));
    assert.deepEqual(actions, [{ type: 'say', text: 'Sorry, I am having trouble right now.' }]);
    assert.equal(llm.requests.length, 5, 'three rounds of calls run; the fourth is answered with an error, not run');
    assert.equal(flow.record.errors.filter((e) => /missing required argument "date"/.test(e)).length, 3);
    assert.match(flow.record.errors.at(-1)!, /more than 3 times in one turn/);
    // The next turn starts afresh, and every call of the cut round got a result.
    assert.equal(said(await collect(flow.userTurn('Tuesday?', signal))), 'Sorry, which day?');
    const calls = llm.requests[5]!.messages.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []) : []));
    assert.equal(toolResults(llm.requests[5]!.messages).length, calls.length);
  });

  it('does not stall on a hook that never answers: recorded, and the conversation goes on at once', async () => {
    hookBehaviour = 'hang';
    const { flow, signal } = session([{ text: ['Hi.'] }, { tools: [{ name: 'confirm_order', arguments: { confirmed: true } }] }], { hookTimeoutSeconds: 0.3 });
    await collect(flow.start(signal));
    const started = Date.now();
    const actions = await collect(flow.userTurn('Yes', signal));
    assert.ok(Date.now() - started < 1500, `took ${Date.now() - started} ms`);
    assert.deepEqual(actions.at(-1), { type: 'end', outcome: 'confirmed' });
    const hook = flow.record.function_calls[0]!.hooks[0]!;
    assert.equal(hook.ok, false);
    assert.match(hook.error!, /timed out after 300 ms/);
    assert.match(flow.record.errors.join(' '), /hook crm of confirm_order failed: timed out/);
    // A placeholder with no value (no note given) stays as written and is reported once.
    assert.deepEqual((received[0]!.body as { nested: unknown }).nested, { note: 'note: {note}' });
    assert.deepEqual(flow.record.errors.filter((e) => e === 'no value for {note}').length, 1);
  });

  it('retries a hook answering 500 once; a hook failing twice is recorded and the call goes on', async () => {
    hookBehaviour = 'fail-once';
    const once = session([{ text: ['Hi.'] }, { tools: [{ name: 'confirm_order', arguments: { confirmed: false, note: 'x' } }] }]);
    await collect(once.flow.start(once.signal));
    await collect(once.flow.userTurn('No', once.signal));
    assert.equal(received.length, 2, 'retried once');
    assert.equal(once.flow.record.function_calls[0]!.hooks[0]!.status, 200);
    assert.deepEqual(once.flow.record.errors, []);

    received.length = 0;
    hookBehaviour = 'fail';
    const twice = session([{ text: ['Hi.'] }, { tools: [{ name: 'confirm_order', arguments: { confirmed: true, note: 'x' } }] }]);
    await collect(twice.flow.start(twice.signal));
    const actions = await collect(twice.flow.userTurn('Yes', twice.signal));
    assert.equal(received.length, 2);
    const { request: _sent, ...failed } = twice.flow.record.function_calls[0]!.hooks[0]!;
    assert.deepEqual({ ...failed, durationMs: 0 }, { name: 'crm', status: 500, ok: false, durationMs: 0, response: 'oops', error: 'HTTP 500' });
    assert.match(twice.flow.record.errors[0]!, /hook crm of confirm_order failed: HTTP 500/);
    assert.deepEqual(actions.at(-1), { type: 'end', outcome: 'confirmed' });
  });

  it('keeps at most 8 kB of a hook response in the record, marked truncated', async () => {
    hookBehaviour = 'big';
    const { flow, signal } = session([{ text: ['Hi.'] }, { tools: [{ name: 'confirm_order', arguments: { confirmed: true } }] }, { text: ['Done.'] }]);
    await collect(flow.start(signal));
    await collect(flow.userTurn('Yes', signal));
    const hook = flow.record.function_calls[0]!.hooks[0]!;
    assert.equal(hook.ok, true);
    assert.equal(hook.truncated, true);
    assert.equal(typeof hook.response, 'string');
    assert.equal((hook.response as string).length, 8192);
  });

  it('transfers the caller to the substituted number, and refuses a number that is not E.164', async () => {
    const { llm, flow, signal } = session([{ text: ['Hi.'] }, { text: ['Connecting you now.'], tools: [{ name: 'talk_to_human', arguments: {} }] }]);
    await collect(flow.start(signal));
    const actions = await collect(flow.userTurn('I want a person.', signal));
    assert.deepEqual(actions, [{ type: 'say', text: 'Connecting you now.' }, { type: 'transfer', to: '+14155550100' }]);
    assert.equal(flow.record.function_calls[0]!.transfer_to, '+14155550100');
    assert.deepEqual(await collect(flow.userTurn('Hello?', signal)), []);
    assert.equal(llm.requests.length, 2);

    const bad = session([{ text: ['Hi.'] }, { tools: [{ name: 'talk_to_human', arguments: {} }] }, { text: ['Nobody is free, sorry.'] }], { vars: { ...variables, agent_number: 'reception' } });
    await collect(bad.flow.start(bad.signal));
    const refused = await collect(bad.flow.userTurn('A person please.', bad.signal));
    assert.deepEqual(refused, [{ type: 'say', text: 'Nobody is free, sorry.' }]);
    assert.match(bad.flow.record.errors[0]!, /"reception" is not an E\.164 number/);
    assert.deepEqual(toolResults(bad.llm.requests[2]!.messages), [{ ok: false, hooks: [], error: 'the transfer is not possible' }]);
  });

  it('a warm transfer: refused when badly written; a plain transfer where the transport cannot brief; declined, the LLM learns it and the caller is told', async () => {
    const flow = orderFlow();
    flow.nodes[0]!.functions![2]!.warm_transfer = { briefing: ' ', callback_after_minutes: 0, tone: 'warm' } as never;
    flow.nodes[0]!.functions![1]!.warm_transfer = {};
    assert.deepEqual(validateFlow(flow).map((e) => e.path), [
      '/flow/nodes/0/functions/1/warm_transfer',
      '/flow/nodes/0/functions/2/warm_transfer/tone',
      '/flow/nodes/0/functions/2/warm_transfer/briefing',
      '/flow/nodes/0/functions/2/warm_transfer/callback_after_minutes',
    ]);
    const warmFlow = orderFlow();
    warmFlow.nodes[0]!.functions![2]!.warm_transfer = { briefing: '{customer_name} asks about {order_id}.', declined_message: 'My colleague is busy; I will help you.' };
    assert.deepEqual(validateFlow(warmFlow), []);
    // No second leg on this transport: the plain transfer.
    const plain = session([{ text: ['Hi.'] }, { tools: [{ name: 'talk_to_human', arguments: {} }] }], { flow: warmFlow });
    await collect(plain.flow.start(plain.signal));
    assert.deepEqual(await collect(plain.flow.userTurn('A person please.', plain.signal)), [{ type: 'transfer', to: '+14155550100' }]);
    // Declined: the hold message, then the declined message; the tool result says so; the agent goes on.
    const llm = new ScriptedLLM([{ text: ['Hi.'] }, { tools: [{ name: 'talk_to_human', arguments: {} }] }, { text: ['What can I do for you?'] }]);
    const runs: Array<{ to: string; briefing: string }> = [];
    const warm = createFlowSession(warmFlow, {
      llm,
      variables,
      warmTransfer: async (run) => {
        runs.push({ to: run.to, briefing: await run.briefing });
        return { decision: 'declined', via: 'key', events: [{ event: 'dial', at: 'x' }, { event: 'declined', at: 'y' }] };
      },
    });
    const signal = new AbortController().signal;
    await collect(warm.start(signal));
    const actions = await collect(warm.userTurn('A person please.', signal));
    assert.deepEqual(actions, [
      { type: 'say', text: 'Please hold for a moment while I brief a colleague who can help you. ' },
      { type: 'say', text: 'My colleague is busy; I will help you.' },
    ]);
    assert.deepEqual(runs, [{ to: '+14155550100', briefing: 'Ana Lima asks about A-42.' }]);
    assert.deepEqual(warm.record.warm_transfers.map((w) => [w.decision, w.via, w.briefing_source]), [['declined', 'key', 'template']]);
    assert.deepEqual(await collect(warm.userTurn('Change my address then.', signal)), [{ type: 'say', text: 'What can I do for you?' }]);
    assert.deepEqual(toolResults(llm.requests[2]!.messages), [{ ok: true, hooks: [], transfer: 'declined', note: 'The human declined: go on helping the caller yourself.' }]);
  });

  it('apologises once when the LLM fails (keeping what it had said), and carries on next turn', async () => {
    const { flow, signal } = session([{ fail: 'upstream 503' }, { text: ['Let me '], fail: 'connection reset' }, { text: ['Yes, order A-42.'] }]);
    assert.deepEqual(await collect(flow.start(signal)), [{ type: 'say', text: 'Sorry, I am having trouble right now.' }]);
    assert.match(flow.record.errors[0]!, /LLM failed in node greet: scripted: upstream 503/);
    const second = await collect(flow.userTurn('Hello?', signal));
    assert.deepEqual(second, [{ type: 'say', text: 'Let me ' }, { type: 'say', text: 'Sorry, I am having trouble right now.' }]);
    assert.equal(flow.record.errors.length, 2);
    assert.equal(said(await collect(flow.userTurn('My order?', signal))), 'Yes, order A-42.');
    assert.deepEqual(flow.record.transcription.map((t) => t.content).slice(2, 4), ['Let me ', 'Sorry, I am having trouble right now.']);
  });

  it('speaks the idle prompt; without one the LLM is told the caller is silent', async () => {
    const { llm, flow, signal } = session([{ text: ['Hi.'] }]);
    await collect(flow.start(signal));
    assert.deepEqual(await collect(flow.idle(signal)), [{ type: 'say', text: 'Are you still there, Ana Lima?' }]);
    assert.equal(llm.requests.length, 1);

    const plain: Flow = { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Chat.' }] }] };
    const other = session([{ text: ['Hi.'] }, { text: ['Hello, are you there?'] }], { flow: plain });
    await collect(other.flow.start(other.signal));
    assert.equal(said(await collect(other.flow.idle(other.signal))), 'Hello, are you there?');
    assert.match((other.llm.requests[1]!.messages.at(-1) as { content: string }).content, /caller has been silent/);
  });
});

describe('flow engine: node entry', () => {
  const desk: Flow = {
    initial_node: 'intro',
    nodes: [
      {
        node_name: 'intro',
        role_messages: [{ role: 'system', content: 'You are Acme reception. Manager: {account_manager}.' }],
        task_messages: [{ role: 'system', content: 'Find out what {customer_name} needs ({account_manager}).' }],
        respond_immediately: false,
        pre_actions: [{ type: 'tts_say', text: 'Hi {customer_name}, this is Acme.' }],
        functions: [{ name: 'billing', transition_to: 'billing' }],
      },
      {
        node_name: 'billing',
        role_messages: [{ role: 'system', content: 'You are the billing desk.' }],
        task_messages: [{ role: 'system', content: 'Answer billing questions.' }],
        pre_actions: [{ type: 'function', name: 'log' }],
        functions: [{ name: 'log', hooks: [] }, { name: 'done', transition_to: 'bye' }],
      },
      { node_name: 'bye', task_messages: [{ role: 'system', content: 'Say bye.' }], outcome: 'handled', pre_actions: [{ type: 'end_conversation' }] },
    ],
  };

  it('runs pre_actions, waits when not responding immediately, replaces the role on transition, and ends with the node outcome', async () => {
    assert.deepEqual(validateFlow(desk), []);
    const { llm, flow, signal } = session([{ tools: [{ name: 'billing', arguments: {} }] }, { text: ['Billing here.'] }, { tools: [{ name: 'done', arguments: '' }] }], { flow: desk });
    assert.deepEqual(await collect(flow.start(signal)), [{ type: 'say', text: 'Hi Ana Lima, this is Acme.' }]);
    assert.equal(llm.requests.length, 0, 'respond_immediately: false');
    assert.deepEqual(flow.record.errors, ['no value for {account_manager}'], 'reported once though used twice');

    assert.equal(said(await collect(flow.userTurn('A question about my bill.', signal))), 'Billing here.');
    // pre_actions run before the context is set: the greeting comes before the node's task.
    assert.deepEqual(llm.requests[0]!.messages, [
      { role: 'system', content: 'You are Acme reception. Manager: {account_manager}.' },
      { role: 'assistant', content: 'Hi Ana Lima, this is Acme.' },
      { role: 'system', content: 'Find out what Ana Lima needs ({account_manager}).' },
      { role: 'user', content: 'A question about my bill.' },
    ]);
    const inBilling = llm.requests[1]!;
    assert.deepEqual(inBilling.messages[0], { role: 'system', content: 'You are the billing desk.' });
    assert.equal(inBilling.messages.filter((m) => m.role === 'system').length, 3, 'new role + both task messages (APPEND)');
    assert.deepEqual(inBilling.messages.at(-1), { role: 'system', content: 'Answer billing questions.' });
    assert.deepEqual(inBilling.tools!.map((t) => t.name), ['log', 'done']);
    assert.deepEqual(flow.record.function_calls.map((c) => `${c.node}.${c.name}`), ['intro.billing', 'billing.log']);

    assert.deepEqual(await collect(flow.userTurn('Thanks, that is all.', signal)), [{ type: 'end', outcome: 'handled' }]);
    assert.deepEqual(flow.record.node_traversal, ['intro', 'billing', 'bye']);
    assert.equal(flow.record.outcome, 'handled');
  });

  it("gives the pipeline the current node's turn-taking settings", async () => {
    const flow = createFlowSession(
      { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'x' }], idle_timeout_seconds: 5, vad: { stop_secs: 1.2 } }] },
      { llm: new ScriptedLLM([{ text: ['Hi.'] }]), variables: {} },
    );
    await collect(flow.start(new AbortController().signal));
    const { turnTaking, ...settings } = flow.nodeSettings;
    assert.deepEqual(settings, { idleMs: 5000, endOfSpeechMs: 1200 });
    // vad.stop_secs: the longest wait of the adaptive end of turn (and the silence of the vad mode).
    assert.deepEqual([turnTaking.mode, turnTaking.maxWaitMs, turnTaking.silenceMs], ['adaptive', 1200, 1200]);
  });

  it('stops when its signal aborts, keeping the words produced for interrupted() to trim', async () => {
    const controller = new AbortController();
    const { llm, flow } = session([{ text: ['Hello ', 'Ana, ', 'about ', 'your order'] }, { text: ['Yes?'] }]);
    const out: AgentAction[] = [];
    for await (const a of flow.start(controller.signal)) {
      out.push(a);
      if (out.length === 2) controller.abort();
    }
    assert.deepEqual(out, [{ type: 'say', text: 'Hello ' }, { type: 'say', text: 'Ana, ' }]);
    flow.interrupted('Hello');
    await collect(flow.userTurn('Sorry?', new AbortController().signal));
    assert.deepEqual(llm.requests[1]!.messages.slice(2), [{ role: 'assistant', content: 'Hello' }, { role: 'user', content: 'Sorry?' }]);
    // Nothing heard at all: the reply leaves the context and the transcript.
    flow.interrupted('');
    assert.deepEqual(flow.record.transcription.map((t) => t.content), ['Hello', 'Sorry?']);
  });
});

describe('flow engine: languages that switch mid-call', () => {
  const talk: Flow = {
    initial_node: 'talk',
    nodes: [{ node_name: 'talk', role_messages: [{ role: 'system', content: 'You are Acme.' }], task_messages: [{ role: 'system', content: 'Help.' }], functions: [{ name: 'switch_language', type: 'builtin' }] }],
  };
  const languages = ['en-US', 'es-ES', 'hi-IN'];
  const spoken = (messages: ChatMessage[]) => messages.filter((m) => m.role === 'system' && String(m.content).startsWith('Speak ')).map((m) => m.content);
  const start = async (replies: ScriptedReply[]) => {
    const switched: string[] = [];
    const llm = new ScriptedLLM(replies);
    const flow = createFlowSession(talk, { llm, variables: {}, fetch: outbound.fetch, languages, onLanguage: (l) => switched.push(l) });
    const signal = new AbortController().signal;
    await collect(flow.start(signal));
    return { llm, flow, signal, switched };
  };

  it('a language the speech-to-text heard switches the call before the reply: the instruction, the transcript marks and the pipeline follow', async () => {
    const { llm, flow, signal, switched } = await start([{ text: ['Hello!'] }, { text: ['¡Hola! ¿En qué puedo ayudarle?'] }, { text: ['Bien.'] }]);
    assert.deepEqual(spoken(llm.requests[0]!.messages), ['Speak English (en-US): answer the caller in English only. If the caller switches to Spanish or Hindi, call switch_language first.']);
    // Whisper names the language ("spanish"), Deepgram and AssemblyAI give its code ("es").
    await collect(flow.userTurn('Hola, ¿habla español?', signal, { language: 'spanish' }));
    await collect(flow.userTurn('Sí.', signal, { language: 'es' }));
    assert.deepEqual(switched, ['es-ES']);
    assert.equal(flow.languages?.current, 'es-ES');
    assert.match(spoken(llm.requests[1]!.messages)[0]!, /^Speak Spanish \(es-ES\)/);
    assert.deepEqual(flow.record.transcription.map((t) => t.language), ['en-US', 'es-ES', 'es-ES', 'es-ES', 'es-ES']);
    assert.deepEqual(flow.record.language_switches.map((s) => [s.from, s.to, s.by, s.refused]), [['en-US', 'es-ES', 'detected', undefined]]);
  });

  it('a language the template does not declare is refused: recorded, and the LLM is told to say which languages the call speaks', async () => {
    const { llm, flow, signal, switched } = await start([{ text: ['Hello!'] }, { text: ['Sorry, I speak English, Spanish and Hindi.'] }, { tools: [{ name: 'switch_language', arguments: { language: 'de-DE' } }] }, { text: ['I can only speak English, Spanish or Hindi.'] }]);
    await collect(flow.userTurn('Bonjour, vous parlez français ?', signal, { language: 'fr' }));
    assert.equal(flow.languages?.current, 'en-US');
    // After the language line, while the caller speaks it.
    assert.deepEqual(llm.requests[1]!.messages.slice(1, 3).map((m) => m.content), [
      'Speak English (en-US): answer the caller in English only. If the caller switches to Spanish or Hindi, call switch_language first.',
      'The caller asked for French (fr), which this call does not speak. Answer in English: say briefly that you can speak English and Spanish and Hindi.',
    ]);
    // The flow's own switch_language to an undeclared language: an error to the LLM, which answers in the call's language.
    const actions = await collect(flow.userTurn('Deutsch bitte.', signal));
    assert.deepEqual(actions, [{ type: 'say', text: 'I can only speak English, Spanish or Hindi.' }]);
    assert.match(JSON.parse(String(llm.requests[3]!.messages.at(-1)!.content)).error, /de-DE is not a language of this call \(en-US, es-ES, hi-IN\)/);
    assert.deepEqual(switched, []);
    assert.deepEqual(flow.record.language_switches.map((s) => [s.from, s.to, s.by, Boolean(s.refused)]), [['en-US', 'fr', 'detected', true], ['en-US', 'de-DE', 'function', true]]);
    assert.ok(flow.record.transcription.every((t) => t.language === 'en-US'));
  });

  it('switch_language to a declared language switches, naming the declared ones to the LLM (a language code or its name)', async () => {
    const { llm, flow, signal, switched } = await start([{ text: ['Hello!'] }, { tools: [{ name: 'switch_language', arguments: { language: 'hi' } }] }, { text: ['नमस्ते'] }]);
    await collect(flow.userTurn('Hindi mein baat karein?', signal));
    assert.match((llm.requests[1]!.tools![0]!.parameters as any).properties.language.description, /en-US, es-ES, hi-IN/);
    assert.deepEqual(switched, ['hi-IN']);
    assert.match(spoken(llm.requests[2]!.messages)[0]!, /^Speak Hindi \(hi-IN\)/);
    assert.equal(flow.record.transcription.at(-1)!.language, 'hi-IN');
  });
});

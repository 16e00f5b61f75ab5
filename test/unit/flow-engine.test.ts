/**
 * The flow engine driven turn by turn with a scripted LLM and a real local HTTP server for hooks:
 * greet -> confirm the order (or reschedule) -> end with `confirmed` / `rescheduled`.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Flow } from '../../src/templates/index.js';
import { createFlowSession, type AgentAction } from '../../src/voice/flow/index.js';
import { ScriptedLLM, type ScriptedReply } from '../helpers/scripted-llm.js';

let server: http.Server;
let hookUrl: string;
const received: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; body: unknown }> = [];
let hookBehaviour: 'ok' | 'fail-once' | 'hang' = 'ok';
let failures = 0;

before(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ method: req.method!, url: req.url!, headers: req.headers, body: body ? JSON.parse(body) : undefined });
      if (hookBehaviour === 'hang') return; // never answers
      if (hookBehaviour === 'fail-once' && failures++ === 0) return void res.writeHead(503).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ saved: true }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  hookUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

function orderFlow(timeout?: number): Flow {
  return {
    initial_node: 'greet',
    nodes: [
      {
        node_name: 'greet',
        role_messages: [{ role: 'system', content: 'You are a polite assistant of Acme calling {customer_name}.' }],
        task_messages: [{ role: 'system', content: 'Greet {customer_name} and ask to confirm order {order_id}.' }],
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
                  method: 'POST',
                  headers: { authorization: 'Bearer {crm_token}' },
                  body: { order: '{order_id}', customer: '{customer_name}', confirmed: '{confirmed}', nested: { note: '{note}' } },
                  ...(timeout ? { timeout } : {}),
                },
              },
            ],
          },
          { name: 'reschedule', properties: { date: { type: 'string' }, slot: { type: 'string', enum: ['am', 'pm'] } }, required: ['date'], transition_to: 'end_rescheduled' },
        ],
      },
      { node_name: 'end_confirmed', task_messages: [{ role: 'system', content: 'Thank them.' }], respond_immediately: false, pre_actions: [{ type: 'tts_say', text: 'Thank you {customer_name}, your order is confirmed.' }, { type: 'end_conversation', outcome: 'confirmed' }] },
      { node_name: 'end_rescheduled', task_messages: [{ role: 'system', content: 'Say goodbye.' }], post_actions: [{ type: 'end_conversation', outcome: 'rescheduled' }] },
    ],
  };
}

const variables = { customer_name: 'Ana', order_id: 'A-42', crm_token: 'tok-1' };

async function collect(it: AsyncIterable<AgentAction>): Promise<AgentAction[]> {
  const out: AgentAction[] = [];
  for await (const a of it) out.push(a);
  return out;
}
const said = (actions: AgentAction[]) => actions.filter((a) => a.type === 'say').map((a) => (a as { text: string }).text).join('');

function session(replies: ScriptedReply[], timeoutSeconds?: number) {
  const llm = new ScriptedLLM(replies);
  const flow = createFlowSession(orderFlow(timeoutSeconds), { llm, variables, hookTimeoutMs: 5000 });
  return { llm, flow, signal: new AbortController().signal };
}

describe('flow engine', () => {
  it('greets, confirms through a function whose hook gets the substituted values, transitions and ends confirmed', async () => {
    received.length = 0;
    hookBehaviour = 'ok';
    const { llm, flow, signal } = session([{ text: ['Hello Ana! ', 'Shall I confirm order A-42?'] }, { tools: [{ name: 'confirm_order', arguments: { confirmed: true, note: 'leave at door' } }] }]);
    const greeting = await collect(flow.start(signal));
    assert.equal(said(greeting), 'Hello Ana! Shall I confirm order A-42?');
    // The context: role messages, then the task, substituted; the node's functions as tools.
    assert.deepEqual(llm.requests[0]!.messages, [
      { role: 'system', content: 'You are a polite assistant of Acme calling Ana.' },
      { role: 'system', content: 'Greet Ana and ask to confirm order A-42.' },
    ]);
    assert.deepEqual(llm.requests[0]!.tools!.map((t) => t.name), ['confirm_order', 'reschedule']);
    assert.deepEqual(llm.requests[0]!.tools![0]!.parameters, { type: 'object', properties: { confirmed: { type: 'boolean' }, note: { type: 'string' } }, required: ['confirmed'] });

    const answer = await collect(flow.userTurn('Yes please, leave it at the door.', signal));
    assert.deepEqual(answer, [
      { type: 'say', text: 'Thank you Ana, your order is confirmed.' },
      { type: 'end', outcome: 'confirmed' },
    ]);
    assert.equal(received.length, 1);
    assert.equal(received[0]!.url, '/orders/A-42/confirm');
    assert.equal(received[0]!.headers.authorization, 'Bearer tok-1');
    assert.deepEqual(received[0]!.body, { order: 'A-42', customer: 'Ana', confirmed: 'true', nested: { note: 'leave at door' } });
    const r = flow.record;
    assert.deepEqual(r.node_traversal, ['greet', 'end_confirmed']);
    assert.equal(r.outcome, 'confirmed');
    assert.deepEqual(r.transcription.map((t) => t.role), ['assistant', 'user', 'assistant']);
    assert.equal(r.function_calls[0]!.hooks[0]!.status, 200);
    assert.deepEqual(r.function_calls[0]!.hooks[0]!.response, { saved: true });
    assert.equal(r.function_calls[0]!.transition_to, 'end_confirmed');
    assert.deepEqual(r.errors, []);
    assert.deepEqual(r.usage, { promptTokens: 20, completionTokens: 10 });
    // Nothing more after the end.
    assert.deepEqual(await collect(flow.userTurn('Hello?', signal)), []);
  });

  it('records unknown functions and bad arguments, tells the LLM, and goes on to reschedule', async () => {
    const { llm, flow, signal } = session([
      { text: ['Hi Ana.'] },
      { tools: [{ name: 'cancel_everything', arguments: {} }] },
      { tools: [{ name: 'reschedule', arguments: { slot: 'night' } }] },
      { tools: [{ name: 'reschedule', arguments: { date: '2026-12-01', slot: 'pm' } }] },
      { text: ['Done, see you on December first. Goodbye!'] },
    ]);
    await collect(flow.start(signal));
    const actions = await collect(flow.userTurn('Can we do another day?', signal));
    assert.equal(flow.record.errors.length, 2, flow.record.errors.join('; '));
    assert.match(flow.record.errors[0]!, /unknown function "cancel_everything"/);
    assert.match(flow.record.errors[1]!, /missing required argument "date"/);
    // The LLM saw the error as the tool result.
    const toolResult = llm.requests[2]!.messages.find((m) => m.role === 'tool');
    assert.match((toolResult as { content: string }).content, /unknown function/);
    assert.deepEqual(actions.at(-1), { type: 'end', outcome: 'rescheduled' });
    assert.equal(said(actions), 'Done, see you on December first. Goodbye!');
    assert.deepEqual(flow.record.node_traversal, ['greet', 'end_rescheduled']);
  });

  it('keeps only what was heard of an interrupted reply', async () => {
    const { llm, flow, signal } = session([{ text: ['Hello Ana! Shall I confirm order A-42?'] }, { text: ['Of course.'] }]);
    await collect(flow.start(signal));
    flow.interrupted('Hello Ana!');
    await collect(flow.userTurn('Who is this?', signal));
    assert.deepEqual(llm.requests[1]!.messages.slice(2), [
      { role: 'assistant', content: 'Hello Ana!' },
      { role: 'user', content: 'Who is this?' },
    ]);
    assert.equal(flow.record.transcription[0]!.content, 'Hello Ana!');
  });

  it('does not stall on a hook that never answers, and retries a 5xx once', async () => {
    hookBehaviour = 'hang';
    const { flow, signal } = session([{ text: ['Hi.'] }, { tools: [{ name: 'confirm_order', arguments: { confirmed: true } }] }], 0.3);
    await collect(flow.start(signal));
    const started = Date.now();
    const actions = await collect(flow.userTurn('Yes', signal));
    assert.ok(Date.now() - started < 3000);
    assert.deepEqual(actions.at(-1), { type: 'end', outcome: 'confirmed' });
    assert.match(flow.record.function_calls[0]!.hooks[0]!.error!, /timed out/);
    assert.match(flow.record.errors.join(' '), /hook crm of confirm_order failed/);

    hookBehaviour = 'fail-once';
    failures = 0;
    received.length = 0;
    const again = session([{ text: ['Hi.'] }, { tools: [{ name: 'confirm_order', arguments: { confirmed: false } }] }]);
    await collect(again.flow.start(again.signal));
    await collect(again.flow.userTurn('No', again.signal));
    assert.equal(received.length, 2, 'retried once');
    assert.equal(again.flow.record.function_calls[0]!.hooks[0]!.status, 200);
  });

  it('apologises when the LLM fails and carries on; speaks the idle prompt or asks the LLM', async () => {
    const { flow, signal } = session([{ fail: 'upstream 503' }, { text: ['Are you still there?'] }]);
    const first = await collect(flow.start(signal));
    assert.equal(said(first), 'Sorry, I am having trouble right now.');
    assert.match(flow.record.errors[0]!, /LLM failed/);
    const idle = await collect(flow.idle(signal));
    assert.equal(said(idle), 'Are you still there?');
  });

  it("gives the pipeline the current node's turn-taking settings", async () => {
    const llm = new ScriptedLLM([{ text: ['Hi.'] }]);
    const flow = createFlowSession(
      { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'x' }], idle_timeout_seconds: 5, vad: { stop_secs: 1.2 } }] },
      { llm, variables: {} },
    );
    await collect(flow.start(new AbortController().signal));
    assert.deepEqual(flow.nodeSettings, { idleMs: 5000, endOfSpeechMs: 1200 });
  });

  it('stops when its signal aborts', async () => {
    const controller = new AbortController();
    const { flow } = session([{ text: ['a', 'b', 'c', 'd'] }]);
    const out: AgentAction[] = [];
    for await (const a of flow.start(controller.signal)) {
      out.push(a);
      controller.abort();
    }
    assert.equal(out.length, 1);
  });
});

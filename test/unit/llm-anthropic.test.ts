/**
 * Anthropic's Messages API client against a local server speaking its streaming wire format: text
 * and tool calls assembled from their deltas, the request's shape (system, tools, tool results),
 * errors, and the booking flow run on it as on the OpenAI-compatible client.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { voiceSettings } from '../../src/config/voice.js';
import { AnthropicLLM, CALL_CONNECTED } from '../../src/providers/llm/anthropic.js';
import { createVoiceServices } from '../../src/providers/index.js';
import { createFlowSession, type AgentAction } from '../../src/voice/flow/index.js';
import { ServiceError, type LlmEvent } from '../../src/voice/services.js';
import { FLOW } from '../fixtures/booking.js';
import { startAnthropicServer, type AnthropicServer } from '../helpers/anthropic-server.js';

let server: AnthropicServer;
before(async () => {
  server = await startAnthropicServer();
});
after(async () => {
  await server.close();
});

const llm = () => new AnthropicLLM({ provider: 'anthropic', baseUrl: server.url, apiKey: 'sk-ant-test', model: 'claude-sonnet-4-5', timeoutMs: 2000 });
async function collect(events: AsyncIterable<LlmEvent>): Promise<LlmEvent[]> {
  const out: LlmEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

describe("Anthropic's Messages API", () => {
  it('streams text, assembles tool calls from input_json_delta pieces, reports usage, and sends the wire shape', async () => {
    server.replies.push({ text: 'Hello there, Ana.', tools: [{ name: 'confirm', input: { ok: true, note: 'a "quoted" word' } }] });
    const events = await collect(
      llm().chat({
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'system', content: 'You call Ana.' },
          { role: 'assistant', content: 'Hello, is this Ana?' },
          { role: 'user', content: 'Yes.' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_a', name: 'lookup', arguments: '{"id":7}' }] },
          { role: 'tool', tool_call_id: 'toolu_a', content: '{"order":"A-42"}' },
          { role: 'system', content: 'Now confirm the order.' },
        ],
        tools: [{ name: 'confirm', description: 'Confirms', parameters: { type: 'object', properties: { ok: { type: 'boolean' } } } }],
        temperature: 1.4,
        signal: new AbortController().signal,
      }),
    );
    assert.equal(events.filter((e) => e.type === 'text').map((e) => (e as { text: string }).text).join(''), 'Hello there, Ana.');
    const calls = events.filter((e) => e.type === 'tool_call').map((e) => (e as Extract<LlmEvent, { type: 'tool_call' }>).call);
    assert.equal(calls.length, 1);
    assert.equal(calls[0]!.name, 'confirm');
    assert.match(calls[0]!.id, /^toolu_/);
    assert.deepEqual(JSON.parse(calls[0]!.arguments), { ok: true, note: 'a "quoted" word' });
    assert.deepEqual(events.at(-1), { type: 'done', finishReason: 'tool_calls', usage: { promptTokens: 120, completionTokens: 25 } });

    const sent = server.requests.at(-1)!;
    assert.equal(sent.headers['x-api-key'], 'sk-ant-test');
    assert.equal(sent.headers['anthropic-version'], '2023-06-01');
    assert.equal(sent.body.model, 'claude-sonnet-4-5');
    assert.equal(sent.body.stream, true);
    assert.ok(sent.body.max_tokens > 0);
    assert.equal(sent.body.temperature, 1, 'above the API\'s ceiling of 1');
    assert.equal(sent.body.system, 'Be brief.\n\nYou call Ana.');
    assert.deepEqual(sent.body.tools, [{ name: 'confirm', description: 'Confirms', input_schema: { type: 'object', properties: { ok: { type: 'boolean' } } } }]);
    assert.deepEqual(sent.body.messages, [
      // The agent spoke first: the API wants the user's turn first.
      { role: 'user', content: [{ type: 'text', text: CALL_CONNECTED }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Hello, is this Ana?' }] },
      { role: 'user', content: [{ type: 'text', text: 'Yes.' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_a', name: 'lookup', input: { id: 7 } }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_a', content: '{"order":"A-42"}' },
          { type: 'text', text: '[Instructions] Now confirm the order.' },
        ],
      },
    ]);
  });

  it('refuses with the API\'s message: 401 is final; 529, an overloaded_error in the stream and a cut stream may be retried', async () => {
    const request = () => ({ messages: [{ role: 'user' as const, content: 'Hi' }], signal: new AbortController().signal });
    server.replies.push({ status: 401, type: 'authentication_error', message: 'invalid x-api-key' });
    await assert.rejects(collect(llm().chat(request())), (err: ServiceError) => err.retryable === false && err.status === 401 && /invalid x-api-key/.test(err.message));
    server.replies.push({ status: 529, type: 'overloaded_error', message: 'Overloaded' });
    await assert.rejects(collect(llm().chat(request())), (err: ServiceError) => err.retryable === true && err.status === 529);
    server.replies.push({ streamError: 'overloaded_error', message: 'Overloaded' });
    await assert.rejects(collect(llm().chat(request())), (err: ServiceError) => err.retryable === true && /overloaded_error: Overloaded/.test(err.message));
    server.replies.push({ cut: true });
    await assert.rejects(collect(llm().chat(request())), (err: ServiceError) => err.retryable === true && /before message_stop/.test(err.message));
  });

  it('LLM_PROVIDER=anthropic carries the booking flow: the greeting, the function with its arguments, the transition and the outcome', async () => {
    const settings = voiceSettings({ LLM_PROVIDER: 'anthropic', LLM_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-ant-env', STT_BASE_URL: 'http://127.0.0.1:9' });
    const built = createVoiceServices(settings);
    assert.ok('services' in built, JSON.stringify(built));
    if (!('services' in built)) return;
    server.replies.push({ text: 'Hello Ana, this is Acme Clinic. Would Tuesday suit you for a visit?' }, { tools: [{ name: 'book_visit', input: { day: 'Tuesday' } }] });
    const before = server.requests.length;
    const session = createFlowSession(FLOW as never, { llm: built.services.llm, variables: { customer_name: 'Ana' } });
    const said: string[] = [];
    const drain = async (actions: AsyncIterable<AgentAction>) => {
      for await (const a of actions) if (a.type === 'say') said.push(a.text);
    };
    const signal = new AbortController().signal;
    await drain(session.start(signal));
    await drain(session.userTurn('Yes, Tuesday works.', signal));
    assert.deepEqual(session.record.node_traversal, ['greet', 'booked']);
    assert.equal(session.record.outcome, 'booked');
    assert.deepEqual(session.record.function_calls.map((f) => [f.name, f.arguments]), [['book_visit', { day: 'Tuesday' }]]);
    assert.ok(said.join(' ').includes('Your visit is booked for Tuesday.'), said.join(' | '));
    // The key from ANTHROPIC_API_KEY; the second request carries the caller's words after the greeting.
    const second = server.requests[before + 1]!;
    assert.equal(second.headers['x-api-key'], 'sk-ant-env');
    assert.deepEqual(second.body.messages.slice(-2), [
      { role: 'assistant', content: [{ type: 'text', text: 'Hello Ana, this is Acme Clinic. Would Tuesday suit you for a visit?' }] },
      { role: 'user', content: [{ type: 'text', text: 'Yes, Tuesday works.' }] },
    ]);
    assert.match(second.body.system, /Acme Clinic/);
  });
});

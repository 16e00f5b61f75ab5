/**
 * The OpenAI-compatible client against a local server speaking the streaming wire format, and the
 * retries/fallback written once around it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { OpenAICompatibleLLM } from '../../src/providers/llm/openai.js';
import { FallbackLLM } from '../../src/providers/resilience.js';
import { registry } from '../../src/metrics/index.js';
import { ServiceError, type LlmEvent } from '../../src/voice/services.js';
import { startOpenAIServer, type OpenAIServer } from '../helpers/openai-server.js';

let primary: OpenAIServer;
let secondary: OpenAIServer;
before(async () => {
  primary = await startOpenAIServer();
  secondary = await startOpenAIServer();
});
after(async () => {
  await primary.close();
  await secondary.close();
});

const llm = (server: OpenAIServer, model = 'm1') => new OpenAICompatibleLLM({ baseUrl: server.url, apiKey: 'sk-test', model, timeoutMs: 2000 });
async function collect(events: AsyncIterable<LlmEvent>): Promise<LlmEvent[]> {
  const out: LlmEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}
const request = (signal = new AbortController().signal) => ({
  messages: [{ role: 'system' as const, content: 'Be brief.' }, { role: 'user' as const, content: 'Hi' }],
  tools: [{ name: 'confirm', parameters: { type: 'object', properties: { ok: { type: 'boolean' } } } }],
  signal,
});

describe('OpenAI-compatible LLM', () => {
  it('streams text in order, assembles tool calls from deltas, reports usage, and sends the wire shape', async () => {
    primary.chat.push({ text: 'Hello there, Ana.', tools: [{ name: 'confirm', arguments: { ok: true } }, { name: 'confirm', arguments: { ok: false } }] });
    const events = await collect(llm(primary).chat(request()));
    assert.equal(events.filter((e) => e.type === 'text').map((e) => (e as { text: string }).text).join(''), 'Hello there, Ana.');
    const calls = events.filter((e) => e.type === 'tool_call').map((e) => (e as any).call);
    assert.deepEqual(calls.map((c: any) => [c.name, JSON.parse(c.arguments)]), [['confirm', { ok: true }], ['confirm', { ok: false }]]);
    assert.ok(calls[0].id && calls[0].id !== calls[1].id);
    assert.deepEqual(events.at(-1), { type: 'done', finishReason: 'tool_calls', usage: { promptTokens: 100, completionTokens: 20 } });
    const sent = primary.chatRequests.at(-1)!;
    assert.equal(sent.headers.authorization, 'Bearer sk-test');
    assert.equal(sent.body.stream, true);
    assert.deepEqual(sent.body.stream_options, { include_usage: true });
    assert.deepEqual(sent.body.tools[0], { type: 'function', function: { name: 'confirm', parameters: { type: 'object', properties: { ok: { type: 'boolean' } } } } });
  });

  it('refuses with the provider message: 401 is final, 503 may be retried', async () => {
    primary.chat.push({ status: 401, error: 'Incorrect API key provided' });
    await assert.rejects(collect(llm(primary).chat(request())), (err: ServiceError) => err.retryable === false && /Incorrect API key/.test(err.message));
    primary.chat.push({ status: 503, error: 'overloaded' });
    await assert.rejects(collect(llm(primary).chat(request())), (err: ServiceError) => err.retryable === true && err.status === 503);
  });
});

describe('OpenAI-compatible LLM, misbehaving servers', () => {
  it('a stall before any answer times out (retryable)', async () => {
    primary.chat.push({ stallMs: 5000 });
    const slow = new OpenAICompatibleLLM({ baseUrl: primary.url, apiKey: 'k', model: 'm', timeoutMs: 200 });
    const started = Date.now();
    await assert.rejects(collect(slow.chat(request())), (err: ServiceError) => err instanceof ServiceError && err.retryable && /no answer within 200 ms/.test(err.message));
    assert.ok(Date.now() - started < 2000, 'gave up on the stalled provider');
  });

  it('a stream that goes quiet mid-answer is given up after the timeout, as a retryable error', async () => {
    primary.chat.push({ hangAfterFirstMs: 10_000 });
    const slow = new OpenAICompatibleLLM({ baseUrl: primary.url, apiKey: 'k', model: 'm', timeoutMs: 300 });
    const started = Date.now();
    await assert.rejects(collect(slow.chat(request())), (err: ServiceError) => err instanceof ServiceError && err.retryable && /nothing more of the answer within 300 ms/.test(err.message));
    assert.ok(Date.now() - started < 5000, 'gave up on the quiet stream');
  });

  it('the timeout is for the answer to start: a stream that started in time is read to its end', async () => {
    // Words 60 ms apart: the whole answer takes about 0.7 s, the timeout is 300 ms.
    const paced = await startOpenAIServer({ wordIntervalMs: 60 });
    try {
      const text = 'one two three four five six seven eight nine ten eleven twelve';
      paced.chat.push({ text });
      const slow = new OpenAICompatibleLLM({ baseUrl: paced.url, apiKey: 'k', model: 'm', timeoutMs: 300 });
      const events = await collect(slow.chat(request()));
      assert.equal(events.filter((e) => e.type === 'text').map((e) => (e as { text: string }).text).join(''), text);
      assert.equal(events.at(-1)?.type, 'done');
    } finally {
      await paced.close();
    }
  });

  it('a malformed or broken stream is an error, not a hang', async () => {
    secondary.chat.push({ malformed: true });
    await assert.rejects(collect(llm(secondary).chat(request())), (err: ServiceError) => !err.retryable && /malformed stream chunk/.test(err.message));
    secondary.chat.push({ cut: true });
    const seen: LlmEvent[] = [];
    await assert.rejects(
      (async () => {
        for await (const e of llm(secondary).chat(request())) seen.push(e);
      })(),
      (err: ServiceError) => err.retryable && /stream broke/.test(err.message),
    );
    assert.deepEqual(seen, [{ type: 'text', text: 'Hel' }]);
  });

  it('stops at once when the caller aborts', async () => {
    primary.chat.push({ stallMs: 5000 });
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 50);
    await assert.rejects(collect(llm(primary).chat(request(controller.signal))));
    assert.ok(Date.now() - started < 2000);
  });
});

describe('retries and fallback', () => {
  it('retries a retryable failure, then falls back to the next provider; a final error is not retried', async () => {
    primary.chat.push({ status: 503 }, { status: 429 });
    secondary.chat.push({ text: 'From the second one.' });
    const both = new FallbackLLM([llm(primary), llm(secondary, 'm2')], { attempts: 2, baseDelayMs: 5 });
    const errorsOf = async (retryable: string) =>
      (await registry.getSingleMetric('dialer_provider_errors_total')!.get()).values
        .filter((v) => v.labels.service === 'llm' && v.labels.retryable === retryable)
        .reduce((n, v) => n + v.value, 0);
    const retryableBefore = await errorsOf('true');
    const events = await collect(both.chat(request()));
    assert.equal((await errorsOf('true')) - retryableBefore, 2, 'both failures of the first provider are counted for /metrics');
    assert.equal(events.filter((e) => e.type === 'text').map((e) => (e as { text: string }).text).join(''), 'From the second one.');
    assert.match(both.label, /^fallback\(/);

    primary.chat.push({ status: 400, error: 'bad request' });
    const before = secondary.chatRequests.length;
    await assert.rejects(collect(both.chat(request())), /bad request/);
    assert.equal(secondary.chatRequests.length, before, 'no fallback on a final error');
  });
});

/**
 * The expectations of template tests, judged against a call's evidence: each kind's verdict and
 * the evidence it gives, and the problems of an expectation as written. A persona callee's lines
 * (an LLM that streams scripted text) and its script's turns.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { expectationErrors, judgeCall, type CallEvidence } from '../../src/template-tests/expectations.js';
import { llmPersona } from '../../src/template-tests/persona.js';
import { calleeScript } from '../../src/template-tests/callee.js';
import type { ChatRequest, LLM, LlmEvent } from '../../src/voice/services.js';
import type { CalleeStep } from '../../src/emulator/index.js';

const CALL: CallEvidence = {
  outcome: 'booked',
  transcript: [
    { role: 'assistant', content: 'Hi Ana! Shall I book Tuesday?' },
    { role: 'user', content: 'Yes please.' },
    { role: 'assistant', content: 'Your visit is booked. Goodbye!' },
  ],
  nodePath: ['greet', 'check', 'booked'],
  functionCalls: [
    { name: 'book_visit', node: 'check', arguments: { day: 'Tuesday', slot: 2 }, hooks: [{ name: 'crm', ok: true, status: 200, request: { method: 'POST', url: 'https://crm.example.com/visits/A-1', body: { day: 'Tuesday' } } }] },
  ],
  analysisFields: { interested: true, day: 'Tuesday' },
  turnLatencyMs: [640, 910],
};

describe('template test expectations', () => {
  it('judges each kind with its evidence', async () => {
    const results = await judgeCall(
      [
        { kind: 'outcome', equals: 'booked' },
        { kind: 'nodes', nodes: ['greet', 'booked'] },
        { kind: 'nodes', nodes: ['greet', 'booked'], match: 'exact' },
        { kind: 'nodes', nodes: ['booked', 'greet'], match: 'set' },
        { kind: 'function_called', name: 'book_visit', arguments: { slot: '2' } },
        { kind: 'function_called', name: 'book_visit', arguments: { day: 'Monday' } },
        { kind: 'function_called', name: 'transfer', called: false },
        { kind: 'hook_request', function: 'book_visit', url_contains: '/visits/A-1', body: { day: 'Tuesday' } },
        { kind: 'analysis_field', field: 'interested', equals: false },
        { kind: 'says', text: 'your VISIT is booked' },
        { kind: 'never_says', text: 'goodbye' },
        { kind: 'turn_latency', max_ms: 900 },
        { kind: 'judge', criteria: 'Books the visit' },
      ],
      CALL,
      async (criteria) => ({ passed: true, reason: `met: ${criteria}` }),
    );
    assert.deepEqual(
      results.map((r) => [r.kind, r.passed]),
      [
        ['outcome', true],
        ['nodes', true],
        ['nodes', false],
        ['nodes', true],
        ['function_called', true],
        ['function_called', false],
        ['function_called', true],
        ['hook_request', true],
        ['analysis_field', false],
        ['says', true],
        ['never_says', false],
        ['turn_latency', false],
        ['judge', true],
      ],
    );
    assert.equal(results[2]!.detail, 'nodes expected exact greet > booked, visited greet > check > booked');
    assert.equal(results[5]!.detail, 'book_visit was called, but not with {"day":"Monday"}: {"day":"Tuesday","slot":2}');
    assert.equal(results[8]!.detail, 'analysis field interested expected false, was true');
    assert.equal(results[11]!.detail, 'slowest turn 910 ms (ceiling 900 ms; turns: 640, 910)');
  });

  it('leaves judged criteria unjudged without an LLM, and names unknown kinds and missing fields', async () => {
    const [judged] = await judgeCall([{ kind: 'judge', criteria: 'x' }], CALL, undefined);
    assert.equal(judged!.passed, null);
    assert.match(judged!.detail, /no LLM is configured/);
    assert.deepEqual(expectationErrors([{ kind: 'vibes' }, { kind: 'outcome' }, { kind: 'says', text: 'hi', field: 'x' }], '/expectations'), [
      { path: '/expectations/0/kind', message: 'unknown expectation kind "vibes"; known kinds: outcome, nodes, function_called, hook_request, analysis_field, says, never_says, turn_latency, judge' },
      { path: '/expectations/1/equals', message: 'is required for an expectation of kind outcome' },
      { path: '/expectations/2/field', message: 'is not a field of an expectation of kind says' },
    ]);
  });
});

describe('a persona callee', () => {
  /** An LLM that streams the given answers in order, word by word, and keeps what it was asked. */
  function scripted(answers: string[]): LLM & { asked: ChatRequest[] } {
    const asked: ChatRequest[] = [];
    return {
      label: 'scripted',
      model: 'scripted',
      asked,
      async *chat(request: ChatRequest): AsyncIterable<LlmEvent> {
        asked.push(request);
        for (const word of (answers.shift() ?? '').split(/(?<= )/)) yield { type: 'text', text: word };
        yield { type: 'done', finishReason: 'stop' };
      },
    };
  }

  it('is asked as the customer (the agent is the other party) and hangs up when it says [hang up]', async () => {
    const llm = scripted(['Hello?', 'Friday suits me. Goodbye! [hang up]']);
    const play = llmPersona(llm);
    const spec = { persona: 'Ana, busy', goal: 'move the visit to Friday' };
    assert.deepEqual(await play(spec, []), { line: 'Hello?', hangUp: false });
    const second = await play(spec, [
      { role: 'assistant', content: 'Hi Ana, when suits you?' },
      { role: 'user', content: 'Hello?' },
    ]);
    assert.deepEqual(second, { line: 'Friday suits me. Goodbye!', hangUp: true });
    const messages = llm.asked[1]!.messages;
    assert.match(messages[0]!.content as string, /Who you are: Ana, busy\nYour goal on this call: move the visit to Friday/);
    assert.deepEqual(messages.slice(1).map((m) => m.role), ['user', 'assistant']);
  });

  it('speaks at most max_turns times, each after the agent, then hangs up', async () => {
    let asked = 0;
    const script = calleeScript({ steps: [], persona: 'Ana', goal: 'talk', max_turns: 2 }, async () => ({ line: `line ${++asked}`, hangUp: false }));
    const played: string[] = [];
    const run = async (steps: CalleeStep[]): Promise<void> => {
      for (const step of steps) {
        if ('decide' in step) await run(await step.decide());
        else played.push('say' in step ? `say ${step.say}` : 'waitForAudio' in step ? 'wait' : 'hangup' in step ? 'hangup' : JSON.stringify(step));
      }
    };
    await run(script.steps!);
    assert.deepEqual(played, ['wait', 'say line 1', 'wait', 'say line 2', 'wait', 'hangup']);
  });
});

/**
 * Post-call analysis with a scripted LLM: the request carries the transcript and the schema as a
 * function; an answer is validated (formats included); a wrong answer, a failing LLM or a slow one
 * give an error, never a throw.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { analyseCall, analysisSchema, type AnalysisSpec } from '../../src/voice/analysis.js';
import type { ChatRequest, LLM, LlmEvent } from '../../src/voice/services.js';
import { ScriptedLLM } from '../helpers/scripted-llm.js';

const SPEC: AnalysisSpec = {
  summary: true,
  fields: {
    delivery_date: { type: 'string', format: 'date', description: 'The delivery date agreed' },
    interested: { type: 'boolean', description: 'Whether they want the offer' },
  },
  success_criteria: 'A delivery date was agreed.',
};
const TRANSCRIPT = [
  { role: 'assistant', content: 'When shall we deliver?' },
  { role: 'user', content: 'The fourteenth of March, please.' },
];
const GOOD = { summary: 'Ana chose 14 March.', fields: { delivery_date: '2026-03-14', interested: null }, success: true, reason: 'A date was agreed.' };

describe('post-call analysis', () => {
  it('asks once, with the transcript and the schema as the function record_analysis, and keeps a valid answer', async () => {
    const llm = new ScriptedLLM([{ tools: [{ name: 'record_analysis', arguments: GOOD }] }]);
    const done = await analyseCall(llm, SPEC, TRANSCRIPT, { timeoutMs: 5000 });
    assert.deepEqual(done, { analysis: GOOD });
    assert.equal(llm.requests.length, 1);
    const [system, user] = llm.requests[0]!.messages;
    assert.match((system as { content: string }).content, /delivery_date/);
    assert.equal((user as { content: string }).content, 'Transcript:\nAgent: When shall we deliver?\nCallee: The fourteenth of March, please.');
    assert.deepEqual(llm.requests[0]!.tools![0]!.parameters, analysisSchema(SPEC));
  });

  it('takes a JSON answer given as text too', async () => {
    const llm = new ScriptedLLM([{ text: ['```json\n', JSON.stringify(GOOD), '\n```'] }]);
    assert.deepEqual(await analyseCall(llm, SPEC, TRANSCRIPT, { timeoutMs: 5000 }), { analysis: GOOD });
  });

  it('refuses an answer that does not match the schema, saying where', async () => {
    const bad = { ...GOOD, fields: { delivery_date: 'next friday', interested: true } };
    const done = await analyseCall(new ScriptedLLM([{ tools: [{ name: 'record_analysis', arguments: bad }] }]), SPEC, TRANSCRIPT, { timeoutMs: 5000 });
    assert.equal(done.analysis, undefined);
    assert.match(done.error!, /did not match the schema: .*\/fields\/delivery_date/);
    const missing = await analyseCall(new ScriptedLLM([{ tools: [{ name: 'record_analysis', arguments: { summary: 'x' } }] }]), SPEC, TRANSCRIPT, { timeoutMs: 5000 });
    assert.match(missing.error!, /must have required property 'fields'/);
    const notJson = await analyseCall(new ScriptedLLM([{ text: ['I think it went well.'] }]), SPEC, TRANSCRIPT, { timeoutMs: 5000 });
    assert.match(notJson.error!, /not JSON/);
  });

  it('reports a failing LLM and one that does not answer in time', async () => {
    const failing = await analyseCall(new ScriptedLLM([{ fail: 'HTTP 500' }]), SPEC, TRANSCRIPT, { timeoutMs: 5000 });
    assert.match(failing.error!, /the LLM failed: .*HTTP 500/);
    const stalled: LLM = {
      label: 'stalled',
      model: 'stall',
      async *chat(request: ChatRequest): AsyncIterable<LlmEvent> {
        await new Promise((_, reject) => request.signal.addEventListener('abort', () => reject(new Error('aborted'))));
      },
    };
    const slow = await analyseCall(stalled, SPEC, TRANSCRIPT, { timeoutMs: 50 });
    assert.equal(slow.error, 'the LLM did not answer within 50 ms');
  });
});

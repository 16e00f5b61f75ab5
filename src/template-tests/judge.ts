/**
 * The judge of free-text criteria: the template's post-call analysis (one bounded LLM request over
 * the transcript, answered as `record_analysis`) asked only whether the call met the criteria and why.
 */
import { analyseCall, type LLM } from '../voice/index.js';
import type { Judge } from './expectations.js';

export function llmJudge(llm: LLM, timeoutMs = 20_000): Judge {
  return async (criteria, transcript) => {
    if (transcript.length === 0) return { error: 'nothing was said on the call' };
    const done = await analyseCall(llm, { success_criteria: criteria }, transcript, { timeoutMs });
    if (done.error || done.analysis?.success === undefined) return { error: `the LLM gave no verdict: ${done.error ?? 'its answer had none'}` };
    return { passed: done.analysis.success, reason: done.analysis.reason ?? (done.analysis.success ? 'met' : 'not met') };
  };
}

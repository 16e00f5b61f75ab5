/** What makes a test case well formed beyond its schema: its callee (a script or a persona) and its expectations. */
import { unprocessable, type FieldError } from '../lib/errors.js';
import { expectationErrors } from './expectations.js';
import type { CaseResult, TestCaseBody } from './schema.js';

/** Why a persona case is not played where no LLM is configured. */
export const NO_PERSONA_PLAYER = 'a persona callee is played by the LLM, and no LLM is configured here (LLM_BASE_URL or LLM_API_KEY); scripted cases run without one';

/** A callee is a script or a persona with its goal, not both. */
function calleeErrors(callee: TestCaseBody['callee'], at: string): FieldError[] {
  const persona = callee.persona !== undefined;
  if (persona && callee.goal === undefined) return [{ path: `${at}/goal`, message: 'is required with persona: what the persona wants from the call' }];
  if (!persona && callee.goal !== undefined) return [{ path: `${at}/persona`, message: 'is required with goal: who the LLM plays' }];
  if (!persona && callee.max_turns !== undefined) return [{ path: `${at}/max_turns`, message: 'is a persona\'s limit; a script has its own steps' }];
  if (persona && (callee.steps ?? []).length > 0) return [{ path: `${at}/steps`, message: 'must be empty with a persona: the callee is a script or a persona, not both' }];
  return [];
}

export function assertCase(body: Pick<TestCaseBody, 'expectations' | 'callee'>, at = ''): void {
  const errors: FieldError[] = [...calleeErrors(body.callee, `${at}/callee`), ...expectationErrors(body.expectations, `${at}/expectations`)];
  if (errors.length > 0) {
    throw unprocessable(`Invalid test case: ${errors[0]!.path} ${errors[0]!.message}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}`, errors, errors[0]!.path.includes('/callee') ? 'invalid_callee' : 'invalid_expectation');
  }
}

/** A case's result before its call. */
export function emptyResult(testId: string | null, body: TestCaseBody): CaseResult {
  return {
    test_id: testId,
    name: body.name,
    status: 'queued',
    error: null,
    lead_id: null,
    call_id: null,
    outcome: null,
    expectations: [],
    transcript: [],
    node_path: [],
    function_calls: [],
    turn_latency_ms: [],
    duration_seconds: null,
    cost: null,
    recording_url: null,
    case: body,
  };
}

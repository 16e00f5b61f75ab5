/**
 * Expectations: the checks of a case, written once. `expectationErrors` says what is wrong with
 * one as written (an unknown kind, a missing field); `judgeCall` decides each against the evidence
 * of the case's call, saying what it expected and what the call showed.
 */
import { isDeepStrictEqual } from 'node:util';
import type { FieldError } from '../lib/errors.js';
import { EXPECTATION_KINDS, type Expectation, type ExpectationKind, type ExpectationResult } from './schema.js';

/** The fields each kind needs, and those it may have besides `kind`. */
const FIELDS: Record<ExpectationKind, { required: string[]; optional: string[] }> = {
  outcome: { required: ['equals'], optional: [] },
  nodes: { required: ['nodes'], optional: ['match'] },
  function_called: { required: ['name'], optional: ['arguments', 'called'] },
  hook_request: { required: [], optional: ['function', 'hook', 'url_contains', 'body'] },
  analysis_field: { required: ['field', 'equals'], optional: [] },
  says: { required: ['text'], optional: [] },
  never_says: { required: ['text'], optional: [] },
  turn_latency: { required: ['max_ms'], optional: [] },
  judge: { required: ['criteria'], optional: [] },
};

export function isExpectationKind(kind: string): kind is ExpectationKind {
  return Object.hasOwn(EXPECTATION_KINDS, kind);
}

/** What is wrong with `list` as written, each problem at its JSON pointer under `at`. */
export function expectationErrors(list: readonly Expectation[], at: string): FieldError[] {
  const errors: FieldError[] = [];
  list.forEach((e, i) => {
    const path = `${at}/${i}`;
    if (!isExpectationKind(e.kind)) {
      errors.push({ path: `${path}/kind`, message: `unknown expectation kind ${JSON.stringify(e.kind)}; known kinds: ${Object.keys(EXPECTATION_KINDS).join(', ')}` });
      return;
    }
    const { required, optional } = FIELDS[e.kind];
    for (const field of required) if ((e as Record<string, unknown>)[field] === undefined) errors.push({ path: `${path}/${field}`, message: `is required for an expectation of kind ${e.kind}` });
    for (const field of Object.keys(e)) {
      if (field !== 'kind' && !required.includes(field) && !optional.includes(field)) errors.push({ path: `${path}/${field}`, message: `is not a field of an expectation of kind ${e.kind}` });
    }
    if (e.kind === 'outcome' && e.equals !== undefined && typeof e.equals !== 'string') errors.push({ path: `${path}/equals`, message: 'must be an outcome (a string)' });
  });
  return errors;
}

/** What a case's call left: the lead's end and its metaData's record of the conversation. */
export interface CallEvidence {
  outcome: string | null;
  transcript: Array<{ role: string; content: string }>;
  nodePath: string[];
  functionCalls: Array<{ name: string; node: string; arguments: Record<string, unknown>; hooks: Array<{ name: string; ok: boolean; status?: number; request?: { method: string; url: string; body?: unknown } }> }>;
  analysisFields: Record<string, unknown> | undefined;
  turnLatencyMs: number[];
}

/** The LLM's verdict on free-text criteria; undefined when no LLM is configured. */
export type Judge = (criteria: string, transcript: CallEvidence['transcript']) => Promise<{ passed: boolean; reason: string } | { error: string }>;

const show = (v: unknown) => JSON.stringify(v);
/** Words only: case, punctuation and spacing are not the agent's meaning. */
const words = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();

/** Whether `actual` holds every field of `expected` (deeply: objects by their fields, the rest equal; numbers and their strings alike). */
export function contains(actual: unknown, expected: unknown): boolean {
  if (expected !== null && typeof expected === 'object' && !Array.isArray(expected)) {
    if (actual === null || typeof actual !== 'object') return false;
    return Object.entries(expected).every(([k, v]) => contains((actual as Record<string, unknown>)[k], v));
  }
  if (isDeepStrictEqual(actual, expected)) return true;
  return (typeof actual === 'number' || typeof actual === 'string') && (typeof expected === 'number' || typeof expected === 'string') && String(actual) === String(expected);
}

/** Whether `want` appears in `path` in order (other nodes may come between). */
function inOrder(path: string[], want: string[]): boolean {
  let at = 0;
  for (const node of path) if (node === want[at]) at++;
  return at === want.length;
}

/** Judges every expectation of a case against its call. */
export async function judgeCall(expectations: readonly Expectation[], call: CallEvidence, judge: Judge | undefined): Promise<ExpectationResult[]> {
  const results: ExpectationResult[] = [];
  for (const e of expectations) {
    const verdict = await judgeOne(e, call, judge);
    results.push({ kind: e.kind, expectation: e, ...verdict });
  }
  return results;
}

async function judgeOne(e: Expectation, call: CallEvidence, judge: Judge | undefined): Promise<{ passed: boolean | null; detail: string }> {
  const agentLines = call.transcript.filter((t) => t.role === 'assistant').map((t) => t.content);
  const called = call.functionCalls.map((f) => f.name);
  switch (e.kind as ExpectationKind) {
    case 'outcome':
      return { passed: call.outcome === e.equals, detail: `outcome expected ${show(e.equals)}, was ${show(call.outcome)}` };
    case 'nodes': {
      const want = e.nodes ?? [];
      const match = e.match ?? 'in_order';
      const passed = match === 'exact' ? isDeepStrictEqual(call.nodePath, want) : match === 'set' ? want.every((n) => call.nodePath.includes(n)) : inOrder(call.nodePath, want);
      const missing = want.filter((n) => !call.nodePath.includes(n));
      return {
        passed,
        detail: `nodes expected ${match.replace('_', ' ')} ${want.join(' > ')}, visited ${call.nodePath.join(' > ') || '(none)'}${missing.length ? `; never visited: ${missing.join(', ')}` : ''}`,
      };
    }
    case 'function_called': {
      const calls = call.functionCalls.filter((f) => f.name === e.name);
      const others = `functions called: ${called.length ? called.join(', ') : 'none'}`;
      if (e.called === false) return { passed: calls.length === 0, detail: calls.length ? `${e.name} was called (${calls.length} time(s)) but must not be` : `${e.name} was not called (${others})` };
      if (calls.length === 0) return { passed: false, detail: `${e.name} was not called (${others})` };
      if (e.arguments === undefined) return { passed: true, detail: `${e.name} was called with ${show(calls[0]!.arguments)}` };
      const hit = calls.find((f) => contains(f.arguments, e.arguments));
      return hit
        ? { passed: true, detail: `${e.name} was called with ${show(hit.arguments)}` }
        : { passed: false, detail: `${e.name} was called, but not with ${show(e.arguments)}: ${calls.map((f) => show(f.arguments)).join(', ')}` };
    }
    case 'hook_request': {
      const made = call.functionCalls.flatMap((f) => f.hooks.map((h) => ({ fn: f.name, ...h })));
      const want = [e.function && `of ${e.function}`, e.hook && `named ${e.hook}`, e.url_contains && `to a URL with ${show(e.url_contains)}`, e.body && `with body ${show(e.body)}`].filter(Boolean).join(' ');
      const hit = made.find(
        (h) =>
          (!e.function || h.fn === e.function) &&
          (!e.hook || h.name === e.hook) &&
          (!e.url_contains || (h.request?.url ?? '').includes(e.url_contains)) &&
          (!e.body || contains(h.request?.body, e.body)),
      );
      if (!hit) return { passed: false, detail: `no hook request ${want || ''} was made (requests made: ${made.length ? made.map((h) => `${h.fn}/${h.name} ${h.request?.method ?? ''} ${h.request?.url ?? ''}`).join(', ') : 'none'})` };
      return { passed: hit.ok, detail: `${hit.fn}/${hit.name} ${hit.request?.method ?? ''} ${hit.request?.url ?? ''} answered ${hit.status ?? 'nothing'}${hit.ok ? '' : ' (not a success)'}` };
    }
    case 'analysis_field': {
      if (!call.analysisFields) return { passed: false, detail: `the call has no post-call analysis (the template's post_call_analysis asks for fields)` };
      const value = call.analysisFields[e.field!];
      return { passed: contains(value, e.equals), detail: `analysis field ${e.field} expected ${show(e.equals)}, was ${show(value ?? null)}` };
    }
    case 'says': {
      const line = agentLines.find((l) => ` ${words(l)} `.includes(` ${words(e.text!)} `));
      return line !== undefined ? { passed: true, detail: `the agent said ${show(line)}` } : { passed: false, detail: `the agent never said ${show(e.text)}` };
    }
    case 'never_says': {
      const line = agentLines.find((l) => ` ${words(l)} `.includes(` ${words(e.text!)} `));
      return line === undefined ? { passed: true, detail: `the agent never said ${show(e.text)}` } : { passed: false, detail: `the agent said ${show(line)}` };
    }
    case 'turn_latency': {
      const worst = call.turnLatencyMs.length ? Math.max(...call.turnLatencyMs) : undefined;
      if (worst === undefined) return { passed: true, detail: 'no turn of the agent followed the callee\'s speech' };
      return { passed: worst <= e.max_ms!, detail: `slowest turn ${Math.round(worst)} ms (ceiling ${e.max_ms} ms; turns: ${call.turnLatencyMs.map(Math.round).join(', ')})` };
    }
    case 'judge': {
      if (!judge) return { passed: null, detail: 'not judged: no LLM is configured to judge criteria (set LLM_BASE_URL or LLM_API_KEY)' };
      const verdict = await judge(e.criteria!, call.transcript);
      if ('error' in verdict) return { passed: null, detail: `not judged: ${verdict.error}` };
      return { passed: verdict.passed, detail: verdict.reason };
    }
  }
}

/**
 * Running a template's own function (not a built-in) once the LLM (or a `function` action) called
 * it: its hooks, each bounded by its timeout and not cut by the turn's signal (a barge-in does not
 * lose a side effect the caller asked for), its record, and what follows (a transition, a transfer,
 * a warm transfer).
 */
import { strictOutbound } from '../../lib/outbound/index.js';
import { isE164 } from '../../lib/phone.js';
import { runHook } from './hooks.js';
import type { FlowFunction } from './schema.js';
import type { FlowDeps, FunctionCallRecord } from './types.js';
import type { WarmCall } from './warm.js';

/** What a function call leaves for the engine: the tool result, and where the conversation goes. */
export interface FunctionOutcome {
  result: Record<string, unknown>;
  transition?: string;
  transfer?: string;
  /** The transfer is warm (the function's `warm_transfer`). */
  warm?: Omit<WarmCall, 'result'>;
}

export interface FunctionRun {
  deps: FlowDeps;
  /** A placeholder without a value (reported once by the engine). */
  missing(name: string): void;
  /** `{variable}` substitution with the call's arguments over the call's variables. */
  fill(text: string): string;
  /** The call's record of errors. */
  errors: string[];
}

export async function runFunction(fn: FlowFunction, args: Record<string, unknown>, record: FunctionCallRecord, run: FunctionRun): Promise<FunctionOutcome> {
  const { deps } = run;
  const vars = { ...deps.variables, ...args };
  for (const hook of fn.hooks ?? []) {
    const result = await runHook(hook, vars, {
      fetch: deps.fetch ?? strictOutbound().fetch,
      defaultTimeoutMs: deps.hookTimeoutMs ?? 10_000,
      missing: run.missing,
      traceParent: deps.traceParent?.(),
      functionName: fn.name,
    });
    record.hooks.push(result);
    if (!result.ok) run.errors.push(`hook ${hook.name} of ${fn.name} failed: ${result.error ?? `HTTP ${result.status}`}`);
  }
  const result: Record<string, unknown> = { ok: true, hooks: record.hooks.map((h) => ({ name: h.name, status: h.status, response: h.response })) };
  if (fn.transfer_to_number) {
    const to = run.fill(fn.transfer_to_number);
    if (isE164(to)) record.transfer_to = to;
    else {
      record.error = `transfer number ${JSON.stringify(to)} is not an E.164 number`;
      run.errors.push(`${fn.name}: ${record.error}`);
      Object.assign(result, { ok: false, error: 'the transfer is not possible' });
    }
  }
  if (fn.transition_to) record.transition_to = fn.transition_to;
  return {
    result,
    ...(fn.transition_to ? { transition: fn.transition_to } : {}),
    ...(record.transfer_to ? { transfer: record.transfer_to } : {}),
    ...(record.transfer_to && fn.warm_transfer ? { warm: { settings: fn.warm_transfer, fn, args } } : {}),
  };
}

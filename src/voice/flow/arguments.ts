/** Checks a function call's arguments (JSON text from the LLM) against the function's properties and required list. */
import type { FlowFunction } from './schema.js';

type Checked = { ok: true; value: Record<string, unknown> } | { ok: false; error: string };

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function fits(value: unknown, type: string | string[]): boolean {
  const actual = typeOf(value);
  const wanted = Array.isArray(type) ? type : [type];
  return wanted.some((t) => t === actual || (t === 'number' && actual === 'integer'));
}

export function validateArguments(fn: FlowFunction, text: string): Checked {
  let value: unknown;
  try {
    value = text.trim() ? JSON.parse(text) : {};
  } catch {
    return { ok: false, error: 'the arguments are not valid JSON' };
  }
  if (typeOf(value) !== 'object') return { ok: false, error: 'the arguments must be a JSON object' };
  const args = value as Record<string, unknown>;
  const problems: string[] = [];
  for (const name of fn.required ?? []) if (args[name] === undefined) problems.push(`missing required argument "${name}"`);
  for (const [name, arg] of Object.entries(args)) {
    const spec = fn.properties?.[name];
    if (!spec) continue;
    if (!fits(arg, spec.type)) problems.push(`argument "${name}" must be ${Array.isArray(spec.type) ? spec.type.join(' or ') : spec.type}, got ${JSON.stringify(arg)}`);
    else if (spec.enum && !spec.enum.some((e) => JSON.stringify(e) === JSON.stringify(arg))) problems.push(`argument "${name}" must be one of ${JSON.stringify(spec.enum)}, got ${JSON.stringify(arg)}`);
  }
  return problems.length ? { ok: false, error: problems.join('; ') } : { ok: true, value: args };
}

/**
 * Post-call analysis: after a conversation, one LLM request over its transcript fills what the
 * template asks for (a summary, named fields described as JSON-schema properties, whether the call
 * met its success criteria), answered as a call of the function `record_analysis` (or a JSON
 * object in text), and checked against the schema with ajv. It is bounded in time; a failure is
 * reported, never thrown, and changes nothing else about the call.
 */
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FieldError } from '../lib/errors.js';
import type { ChatMessage, LLM } from './services.js';

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** What a template's `post_call_analysis` asks for. */
export interface AnalysisSpec {
  summary?: boolean;
  /** JSON-schema properties, each with a description, e.g. {"interested": {"type": "boolean", "description": "..."}}. */
  fields?: Record<string, Record<string, unknown>>;
  success_criteria?: string;
}

/** What lands in metaData.analysis. */
export interface Analysis {
  summary?: string;
  fields?: Record<string, unknown>;
  success?: boolean;
  reason?: string;
}

export const ANALYSIS_FUNCTION = 'record_analysis';

const ajv = new Ajv({ allErrors: true, strict: false });
addFormats(ajv);

/** The JSON schema the answer must match. */
export function analysisSchema(spec: AnalysisSpec): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  if (spec.summary) {
    properties.summary = { type: 'string', description: 'What happened on the call, in two or three sentences' };
    required.push('summary');
  }
  if (spec.fields && Object.keys(spec.fields).length > 0) {
    // Every field is asked for; one the call did not tell is null.
    const fields = Object.fromEntries(Object.entries(spec.fields).map(([name, schema]) => [name, { anyOf: [schema, { type: 'null' }], description: schema.description }]));
    properties.fields = { type: 'object', properties: fields, required: Object.keys(fields), additionalProperties: false };
    required.push('fields');
  }
  if (spec.success_criteria) {
    properties.success = { type: 'boolean', description: `Whether the call met the success criteria: ${spec.success_criteria}` };
    properties.reason = { type: 'string', description: 'Why it did or did not, in one sentence' };
    required.push('success', 'reason');
  }
  return { type: 'object', properties, required, additionalProperties: false };
}

/** Checks a schema of fields at write time: the errors ajv reports compiling it, with their field. */
export function fieldSchemaErrors(fields: Record<string, unknown>): Array<{ field: string; message: string }> {
  const errors: Array<{ field: string; message: string }> = [];
  for (const [field, schema] of Object.entries(fields)) {
    try {
      ajv.compile(schema as object);
    } catch (err) {
      errors.push({ field, message: (err as Error).message });
    }
  }
  return errors;
}

const ANALYSIS_KEYS = ['summary', 'fields', 'success_criteria'];
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Checks a template's `post_call_analysis` (at `path`): each problem with its JSON pointer. */
export function validateAnalysisSpec(value: unknown, path: string): FieldError[] {
  const errors: FieldError[] = [];
  if (!isObject(value)) return [{ path, message: 'must be an object with summary, fields and/or success_criteria' }];
  for (const key of Object.keys(value)) if (!ANALYSIS_KEYS.includes(key)) errors.push({ path: `${path}/${key}`, message: `is not a known field (known: ${ANALYSIS_KEYS.join(', ')})` });
  if (value.summary !== undefined && typeof value.summary !== 'boolean') errors.push({ path: `${path}/summary`, message: 'must be a boolean' });
  if (value.success_criteria !== undefined && (typeof value.success_criteria !== 'string' || value.success_criteria.trim() === '')) {
    errors.push({ path: `${path}/success_criteria`, message: 'must be a text that is not blank' });
  }
  if (value.fields !== undefined) {
    if (!isObject(value.fields) || Object.keys(value.fields).length === 0) errors.push({ path: `${path}/fields`, message: 'must be an object of at least one JSON-schema property' });
    else {
      for (const [name, schema] of Object.entries(value.fields)) {
        const at = `${path}/fields/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;
        if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(name)) errors.push({ path: at, message: 'must be a name of letters, digits and _ (starting with a letter or _)' });
        if (!isObject(schema) || typeof schema.type !== 'string') errors.push({ path: at, message: 'must be a JSON-schema object with a type, e.g. {"type": "string", "description": "..."}' });
        else if (typeof schema.description !== 'string' || schema.description.trim() === '') errors.push({ path: `${at}/description`, message: 'is required: it tells the LLM what to fill in' });
      }
      for (const e of fieldSchemaErrors(value.fields)) errors.push({ path: `${path}/fields/${e.field}`, message: `is not a valid JSON schema: ${e.message}` });
    }
  }
  if (errors.length === 0 && value.summary !== true && value.fields === undefined && value.success_criteria === undefined) {
    errors.push({ path, message: 'asks for nothing: set summary: true, fields, or success_criteria' });
  }
  return errors;
}

function prompt(spec: AnalysisSpec, transcript: Array<{ role: string; content: string }>): ChatMessage[] {
  const lines = transcript.map((t) => `${t.role === 'user' ? 'Callee' : 'Agent'}: ${t.content}`).join('\n');
  const asks = [
    spec.summary ? '- summary: what happened on the call, in two or three sentences' : undefined,
    spec.fields ? `- fields: ${Object.entries(spec.fields).map(([name, s]) => `${name} (${String(s.description ?? s.type)})`).join('; ')}; null for what the call did not tell` : undefined,
    spec.success_criteria ? `- success (true or false) and reason: did the call meet these criteria? ${spec.success_criteria}` : undefined,
  ].filter(Boolean);
  return [
    {
      role: 'system',
      content: `You analyse a finished phone call between an agent and a callee. Call the function ${ANALYSIS_FUNCTION} once with:\n${asks.join('\n')}\nUse only what the transcript says.`,
    },
    { role: 'user', content: `Transcript:\n${lines || '(nothing was said)'}` },
  ];
}

/** A JSON object from the LLM's text: as it is, or inside a ``` fence. */
function jsonIn(text: string): unknown {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(text)?.[1] ?? text;
  return JSON.parse(fenced.trim());
}

const where = (e: ErrorObject) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`;

/**
 * Runs the analysis. Resolves within `timeoutMs` with the analysis, or with `error` saying why there
 * is none (the LLM failed or was slow, its answer was not JSON or did not match the schema).
 */
export async function analyseCall(
  llm: LLM,
  spec: AnalysisSpec,
  transcript: Array<{ role: string; content: string }>,
  options: { timeoutMs: number },
): Promise<{ analysis?: Analysis; error?: string }> {
  const schema = analysisSchema(spec);
  // A timer of our own, not AbortSignal.timeout(): that one is unref'd, so the wait it bounds
  // would not keep the process alive by itself.
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), options.timeoutMs);
  const signal = deadline.signal;
  let text = '';
  let args: string | undefined;
  try {
    for await (const event of llm.chat({ messages: prompt(spec, transcript), tools: [{ name: ANALYSIS_FUNCTION, description: 'Records the analysis of the call', parameters: schema }], temperature: 0, signal })) {
      if (event.type === 'text') text += event.text;
      else if (event.type === 'tool_call' && event.call.name === ANALYSIS_FUNCTION) args ??= event.call.arguments;
    }
  } catch (err) {
    return { error: signal.aborted ? `the LLM did not answer within ${options.timeoutMs} ms` : `the LLM failed: ${(err as Error).message}` };
  } finally {
    clearTimeout(timer);
  }
  let answer: unknown;
  try {
    answer = args !== undefined ? JSON.parse(args) : jsonIn(text);
  } catch {
    return { error: `the answer was not JSON: ${(args ?? text).slice(0, 120)}` };
  }
  const validate = ajv.compile(schema);
  if (!validate(answer)) return { error: `the answer did not match the schema: ${(validate.errors ?? []).map(where).join('; ')}` };
  return { analysis: answer as Analysis };
}

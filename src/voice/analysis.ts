/**
 * Post-call analysis: after a conversation, one LLM request over its transcript fills what the
 * template asks for (a summary, named fields described as JSON-schema properties, whether the call
 * met its success criteria), answered as a call of the function `record_analysis` (or a JSON
 * object in text), and checked against the schema with ajv. It is bounded in time; a failure is
 * reported, never thrown, and changes nothing else about the call.
 */
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
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
  const signal = AbortSignal.timeout(options.timeoutMs);
  let text = '';
  let args: string | undefined;
  try {
    for await (const event of llm.chat({ messages: prompt(spec, transcript), tools: [{ name: ANALYSIS_FUNCTION, description: 'Records the analysis of the call', parameters: schema }], temperature: 0, signal })) {
      if (event.type === 'text') text += event.text;
      else if (event.type === 'tool_call' && event.call.name === ANALYSIS_FUNCTION) args ??= event.call.arguments;
    }
  } catch (err) {
    return { error: signal.aborted ? `the LLM did not answer within ${options.timeoutMs} ms` : `the LLM failed: ${(err as Error).message}` };
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

import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import type { FieldError } from '../lib/errors.js';

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function makeAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
  });
  addFormats(ajv);
  return ajv;
}

// Bodies are validated as sent: a string where a number belongs is an error, never coerced.
const bodyAjv = makeAjv(false);
// Query strings and path parameters arrive as text, so they are coerced to the declared types.
const paramAjv = makeAjv(true);

const cache = new WeakMap<object, ValidateFunction>();

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : paramAjv;
  const key = schema as object;
  let validate = httpPart === 'body' ? cache.get(key) : undefined;
  if (!validate) {
    validate = ajv.compile(schema as object);
    if (httpPart === 'body') cache.set(key, validate);
  }
  const compiled = validate;
  return (data: unknown) => (compiled(data) ? { value: data } : { error: Object.assign(new Error('validation'), { validation: compiled.errors ?? [] }) });
};

export function addSharedSchema(schema: object & { $id: string }): void {
  for (const ajv of [bodyAjv, paramAjv]) if (!ajv.getSchema(schema.$id)) ajv.addSchema(schema);
}

/** A field path for humans: `/payload/customer_mobile_number`, `/leads/0/lead_id`. */
function fieldPath(part: string, error: ErrorObject): string {
  let p = error.instancePath;
  if (error.keyword === 'required') p += `/${(error.params as { missingProperty: string }).missingProperty}`;
  if (error.keyword === 'additionalProperties') p += `/${(error.params as { additionalProperty: string }).additionalProperty}`;
  return p || (part === 'body' ? '/' : `/${part}`);
}

function fieldMessage(error: ErrorObject): string {
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not a known field';
    case 'enum':
      return `must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'type':
      return `must be ${(error.params as { type: string }).type}`;
    default:
      return error.message ?? 'is invalid';
  }
}

export interface ValidationFailure {
  part: string;
  errors: FieldError[];
  raw: ErrorObject[];
}

/** Turns ajv errors into field errors, dropping the noise that `anyOf` branches produce. */
export function toFieldErrors(part: string, raw: ErrorObject[]): FieldError[] {
  const hasSpecific = raw.some((e) => e.keyword !== 'anyOf' && e.keyword !== 'oneOf');
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const error of raw) {
    if (hasSpecific && (error.keyword === 'anyOf' || error.keyword === 'oneOf')) continue;
    const item = { path: fieldPath(part, error), message: fieldMessage(error) };
    const key = `${item.path} ${item.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(item);
  }
  return out;
}

/**
 * A body validator for code that validates outside a route (one item of a batch): the same ajv
 * settings as request bodies. Returns undefined when valid, else the raw and field errors.
 */
export function compileBodyValidator(schema: object): (data: unknown) => { raw: ErrorObject[]; errors: FieldError[] } | undefined {
  const validate = bodyAjv.compile(schema);
  return (data) => (validate(data) ? undefined : { raw: validate.errors ?? [], errors: toFieldErrors('body', validate.errors ?? []) });
}

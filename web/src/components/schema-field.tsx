/**
 * Form inputs made from the API's own JSON schemas (TypeBox objects are JSON Schema): the input
 * kind, bounds, pattern, options and default come from the schema the server validates with, so
 * the browser refuses as you type what the API would refuse, and the API's answer names the rest.
 */
import type { JSX } from 'preact';
import { Field } from './ui.js';

export interface JsonSchema {
  type?: string;
  anyOf?: JsonSchema[];
  const?: unknown;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  default?: unknown;
  description?: string;
  items?: JsonSchema;
}

export interface FieldShape {
  kind: 'boolean' | 'integer' | 'number' | 'string' | 'enum' | 'array' | 'other';
  nullable: boolean;
  options: string[];
  schema: JsonSchema;
}

/** What input a schema calls for: a nullable union is its non-null member; a union of constants is a choice. */
export function shapeOf(schema: JsonSchema): FieldShape {
  const members = schema.anyOf ?? [schema];
  const nullable = members.some((m) => m.type === 'null');
  const rest = members.filter((m) => m.type !== 'null');
  if (rest.length > 0 && rest.every((m) => m.const !== undefined)) return { kind: 'enum', nullable, options: rest.map((m) => String(m.const)), schema };
  const one = rest[0] ?? {};
  if (one.enum) return { kind: 'enum', nullable, options: one.enum.map(String), schema };
  const merged = { ...one, description: schema.description ?? one.description, default: schema.default ?? one.default };
  const kind = one.type === 'boolean' || one.type === 'integer' || one.type === 'number' || one.type === 'string' || one.type === 'array' ? one.type : 'other';
  return { kind, nullable, options: [], schema: merged };
}

/** Turns what an input holds into the value the API expects for that schema. */
export function valueFor(shape: FieldShape, raw: string | boolean): unknown {
  if (shape.kind === 'boolean') return raw === true || raw === 'true';
  const text = String(raw).trim();
  if (text === '') return shape.nullable ? null : shape.kind === 'array' ? [] : undefined;
  if (shape.kind === 'integer' || shape.kind === 'number') return Number(text);
  if (shape.kind === 'array') return text.split(/[\s,]+/).filter(Boolean);
  return text;
}

export function SchemaField(props: {
  name: string;
  label: string;
  schema: JsonSchema;
  value: unknown;
  onChange: (value: unknown) => void;
  error?: string | undefined;
  wide?: boolean;
  hint?: string;
  list?: string;
}) {
  const shape = shapeOf(props.schema);
  const s = shape.schema;
  // A time picker shows the time in the viewer's own format: the API's "(HH:MM, 24-hour)" would only confuse.
  const hint = props.hint ?? s.description?.replace(' (HH:MM, 24-hour)', '');
  const common = { name: props.name, id: `f-${props.name}` };
  let input: JSX.Element;
  if (shape.kind === 'boolean') {
    return (
      <label class={`field check ${props.error ? 'field-error' : ''}`}>
        <input type="checkbox" {...common} checked={props.value === true} onChange={(e) => props.onChange(e.currentTarget.checked)} />
        <span>{props.label}</span>
        {props.error && <span class="field-message">{props.error}</span>}
      </label>
    );
  } else if (shape.kind === 'enum') {
    input = (
      <select {...common} value={props.value === null || props.value === undefined ? '' : String(props.value)} onChange={(e) => props.onChange(valueFor(shape, e.currentTarget.value))} required={!shape.nullable}>
        {shape.nullable && <option value="">—</option>}
        {shape.options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    );
  } else if (shape.kind === 'integer' || shape.kind === 'number') {
    input = (
      <input
        type="number"
        {...common}
        step={shape.kind === 'integer' ? 1 : 'any'}
        min={s.minimum}
        max={s.maximum}
        required={!shape.nullable}
        value={props.value === null || props.value === undefined ? '' : String(props.value)}
        onInput={(e) => props.onChange(valueFor(shape, e.currentTarget.value))}
      />
    );
  } else if (shape.kind === 'array') {
    input = (
      <textarea
        {...common}
        rows={2}
        placeholder="One per line"
        value={Array.isArray(props.value) ? props.value.join('\n') : ''}
        onInput={(e) => props.onChange(valueFor(shape, e.currentTarget.value))}
      />
    );
  } else {
    input = (
      <input
        {...common}
        type={s.pattern === '^([01][0-9]|2[0-3]):[0-5][0-9]$' ? 'time' : 'text'}
        pattern={s.pattern && !s.pattern.includes('\\s') ? s.pattern.replace(/^\^|\$$/g, '') : undefined}
        minLength={s.minLength}
        maxLength={s.maxLength}
        list={props.list}
        required={!shape.nullable && s.minLength !== undefined && s.minLength > 0}
        value={props.value === null || props.value === undefined ? '' : String(props.value)}
        onInput={(e) => props.onChange(valueFor(shape, e.currentTarget.value))}
      />
    );
  }
  return (
    <Field label={props.label} hint={hint} error={props.error} wide={props.wide ?? false}>
      {input}
    </Field>
  );
}

/** The small parts the node forms of the flow editor share. */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { Json } from '../lib/flow-edit.js';

/** Changes the node being edited: `mutate` changes a copy of it; `key` names the field (undo merges typing in one field). */
export type NodeChange = (mutate: (node: Json) => void, key?: string) => void;
/** The validator's message for a path inside the node (`/functions/0/name`), if any. */
export type ProblemAt = (path: string) => string | undefined;

export const str = (v: unknown): string => (typeof v === 'string' ? v : '');
export const list = (v: unknown): Json[] => (Array.isArray(v) ? (v as Json[]) : []);

/**
 * A text input whose value is written when it is committed (Enter or leaving it), not at each key:
 * for names that other parts of the flow refer to, which must not pass through half-typed values.
 */
export function CommitInput({ value, onCommit, ...rest }: { value: string; onCommit: (value: string) => void; name?: string; 'aria-label'?: string; placeholder?: string; disabled?: boolean }) {
  const [draft, setDraft] = useState(value);
  useEffect(() => setDraft(value), [value]);
  const commit = () => draft !== value && onCommit(draft);
  return (
    <input
      {...rest}
      value={draft}
      onInput={(e) => setDraft(e.currentTarget.value)}
      onBlur={commit}
      onKeyDown={(e) => {
        if (e.key === 'Enter') {
          e.preventDefault();
          commit();
        }
        if (e.key === 'Escape') setDraft(value);
      }}
    />
  );
}

/** A labelled control with the validator's message under it. */
export function Labelled({ label, problem, children, wide }: { label: string; problem?: string | undefined; children: ComponentChildren; wide?: boolean }) {
  return (
    <label class={`field ${wide ? 'field-wide' : ''} ${problem ? 'field-error' : ''}`}>
      <span class="field-label">{label}</span>
      {children}
      {problem && <span class="field-message">{problem}</span>}
    </label>
  );
}

/** A titled group of repeated items with an add button. */
export function Group({ title, onAdd, addLabel, children, hint, extra }: { title: string; onAdd?: () => void; addLabel?: string; children: ComponentChildren; hint?: ComponentChildren; extra?: ComponentChildren }) {
  return (
    <fieldset class="flow-group">
      <legend>{title}</legend>
      {hint && <p class="hint">{hint}</p>}
      {children}
      <div class="flow-group-actions">
        {onAdd && (
          <button type="button" class="small" onClick={onAdd}>
            {addLabel ?? 'Add'}
          </button>
        )}
        {extra}
      </div>
    </fieldset>
  );
}

export function RemoveButton({ label, onClick }: { label: string; onClick: () => void }) {
  return (
    <button type="button" class="small danger remove" aria-label={label} title={label} onClick={onClick}>
      ✕
    </button>
  );
}

/** Small building blocks every screen uses. */
import type { ComponentChildren, TargetedEvent } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api/client.js';
import { BASE } from '../session.js';

export function PageHeader({ title, children, subtitle }: { title: string; subtitle?: ComponentChildren; children?: ComponentChildren }) {
  useEffect(() => {
    document.title = `${title} · Dialer`;
  }, [title]);
  return (
    <header class="page-header">
      <div>
        <h1>{title}</h1>
        {subtitle && <p class="subtitle">{subtitle}</p>}
      </div>
      {children && <div class="actions">{children}</div>}
    </header>
  );
}

export function Card({ title, children, actions, class: cls, id }: { title?: ComponentChildren; children: ComponentChildren; actions?: ComponentChildren; class?: string; id?: string }) {
  return (
    <section class={`card ${cls ?? ''}`} id={id}>
      {(title || actions) && (
        <div class="card-head">
          {title && <h2>{title}</h2>}
          {actions && <div class="actions">{actions}</div>}
        </div>
      )}
      {children}
    </section>
  );
}

export function Stat({ label, value, hint, id }: { label: string; value: ComponentChildren; hint?: ComponentChildren; id?: string }) {
  return (
    <div class="stat" id={id} data-stat={id}>
      <div class="stat-label">{label}</div>
      <div class="stat-value">{value}</div>
      {hint && <div class="stat-hint">{hint}</div>}
    </div>
  );
}

const STATUS_TONE: Record<string, string> = {
  BACKLOG: 'neutral',
  PROCESSING: 'live',
  RETRY: 'warn',
  FINISHED: 'done',
  AVAILABLE: 'ok',
  IN_USE: 'live',
  DISABLED: 'neutral',
  delivered: 'ok',
  pending: 'neutral',
  failed: 'bad',
};
const BAD_OUTCOMES = new Set(['error', 'PRECHECK_FAILED', 'failed', 'worker_lost', 'BLACKLISTED']);
const MEH_OUTCOMES = new Set(['no_answer', 'busy', 'voicemail', 'aborted', 'no_response']);

export function Badge({ value, kind = 'status', tone: given }: { value: string | null | undefined; kind?: 'status' | 'outcome' | 'plain'; tone?: 'ok' | 'warn' | 'bad' | 'neutral' }) {
  if (!value) return <span class="muted">—</span>;
  const tone = given ?? (kind === 'status' ? (STATUS_TONE[value] ?? 'neutral') : kind === 'outcome' ? (BAD_OUTCOMES.has(value) ? 'bad' : MEH_OUTCOMES.has(value) ? 'warn' : 'ok') : 'neutral');
  return <span class={`badge badge-${tone}`}>{value}</span>;
}

export function Banner({ tone = 'info', children, id }: { tone?: 'info' | 'warn' | 'bad' | 'sandbox'; children: ComponentChildren; id?: string }) {
  return (
    <div class={`banner banner-${tone}`} role={tone === 'bad' ? 'alert' : 'status'} id={id}>
      {children}
    </div>
  );
}

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const e = error as Error;
  const problem = e instanceof ApiError ? e.problem : undefined;
  return (
    <div class="error-note" role="alert">
      <strong>{problem ? `${problem.title}: ` : ''}</strong>
      {e.message}
      {problem?.errors && problem.errors.length > 0 && (
        <ul>
          {problem.errors.map((f) => (
            <li key={f.path}>
              <code>{f.path || '/'}</code> {f.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <div class="empty">{children}</div>;
}

export function Spinner({ label = 'Loading…' }: { label?: string }) {
  return (
    <div class="spinner" role="status">
      <span class="spin" aria-hidden="true" />
      {label}
    </div>
  );
}

export function NotFound() {
  return (
    <div>
      <PageHeader title="Not found" />
      <Empty>
        There is nothing here. <a href={`${BASE}/`}>Back to the overview</a>.
      </Empty>
    </div>
  );
}

type FieldProps = { label: string; hint?: ComponentChildren; error?: string | undefined; children: ComponentChildren; wide?: boolean; class?: string };

export function Field({ label, hint, error, children, wide, class: cls }: FieldProps) {
  return (
    <label class={`field ${wide ? 'field-wide' : ''} ${error ? 'field-error' : ''} ${cls ?? ''}`}>
      <span class="field-label">{label}</span>
      {children}
      {hint && !error && <span class="field-hint">{hint}</span>}
      {error && <span class="field-message">{error}</span>}
    </label>
  );
}

/** A modal dialog (the native <dialog>): Escape and the close button close it. */
export function Modal({ title, open, onClose, children, wide }: { title: string; open: boolean; onClose: () => void; children: ComponentChildren; wide?: boolean }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog ref={ref} class={`modal ${wide ? 'modal-wide' : ''}`} onClose={onClose} aria-label={title}>
      <div class="modal-head">
        <h2>{title}</h2>
        <button type="button" class="icon-button" aria-label="Close" onClick={onClose}>
          ×
        </button>
      </div>
      {open && children}
    </dialog>
  );
}

export type SortOrder = 'asc' | 'desc';
export interface Column<T> {
  key: string;
  label: string;
  render: (row: T) => ComponentChildren;
  sortable?: boolean;
  class?: string;
}

/** A table whose rows scroll sideways on a narrow screen; sortable headers tell the caller. */
export function Table<T>(props: {
  columns: Column<T>[];
  rows: T[];
  rowKey: (row: T) => string;
  sort?: { key: string; order: SortOrder };
  onSort?: (key: string, order: SortOrder) => void;
  selected?: Set<string>;
  onSelect?: (next: Set<string>) => void;
  selectable?: (row: T) => boolean;
  empty?: ComponentChildren;
  caption?: string;
}) {
  const { columns, rows, rowKey, sort, onSort, selected, onSelect, selectable } = props;
  const selectableRows = selectable ? rows.filter(selectable) : rows;
  const allSelected = selected && selectableRows.length > 0 && selectableRows.every((r) => selected.has(rowKey(r)));
  return (
    <div class="table-wrap">
      <table>
        {props.caption && <caption class="visually-hidden">{props.caption}</caption>}
        <thead>
          <tr>
            {onSelect && selected && (
              <th class="select">
                <input
                  type="checkbox"
                  aria-label="Select all on this page"
                  checked={allSelected}
                  onChange={() => onSelect(allSelected ? new Set() : new Set(selectableRows.map(rowKey)))}
                />
              </th>
            )}
            {columns.map((c) => {
              const active = sort?.key === c.key;
              const next: SortOrder = active && sort?.order === 'desc' ? 'asc' : 'desc';
              return (
                <th key={c.key} class={c.class} aria-sort={active ? (sort?.order === 'asc' ? 'ascending' : 'descending') : undefined}>
                  {c.sortable && onSort ? (
                    <button type="button" class="sort" onClick={() => onSort(c.key, next)}>
                      {c.label}
                      <span class="sort-mark" aria-hidden="true">
                        {active ? (sort?.order === 'asc' ? '▲' : '▼') : '↕'}
                      </span>
                    </button>
                  ) : (
                    c.label
                  )}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => {
            const key = rowKey(row);
            return (
              <tr key={key} data-key={key}>
                {onSelect && selected && (
                  <td class="select">
                    {(!selectable || selectable(row)) && (
                      <input
                        type="checkbox"
                        aria-label={`Select ${key}`}
                        checked={selected.has(key)}
                        onChange={() => {
                          const next = new Set(selected);
                          if (next.has(key)) next.delete(key);
                          else next.add(key);
                          onSelect(next);
                        }}
                      />
                    )}
                  </td>
                )}
                {columns.map((c) => (
                  <td key={c.key} class={c.class} data-label={c.label}>
                    {c.render(row)}
                  </td>
                ))}
              </tr>
            );
          })}
        </tbody>
      </table>
      {rows.length === 0 && <Empty>{props.empty ?? 'Nothing to show.'}</Empty>}
    </div>
  );
}

export function Pager({ page, pageSize, total, capped, onPage }: { page: number; pageSize: number; total: number; capped?: boolean; onPage: (page: number) => void }) {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  const from = total === 0 ? 0 : (page - 1) * pageSize + 1;
  const to = Math.min(total, page * pageSize);
  return (
    <nav class="pager" aria-label="Pages">
      <span>
        {from}–{to} of {total.toLocaleString()}
        {capped ? '+' : ''}
      </span>
      <button type="button" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        ‹ Previous
      </button>
      <span class="pager-page">
        Page {page} of {pages.toLocaleString()}
        {capped ? '+' : ''}
      </span>
      <button type="button" disabled={page >= pages && !capped} onClick={() => onPage(page + 1)}>
        Next ›
      </button>
    </nav>
  );
}

/** Short-lived messages at the corner of the screen. */
const toastListeners = new Set<(t: { id: number; text: string; tone: string }) => void>();
let toastId = 0;
export function toast(text: string, tone: 'ok' | 'bad' | 'info' = 'ok'): void {
  const t = { id: ++toastId, text, tone };
  for (const l of toastListeners) l(t);
}

export function Toasts() {
  const [items, setItems] = useState<{ id: number; text: string; tone: string }[]>([]);
  useEffect(() => {
    const add = (t: { id: number; text: string; tone: string }) => {
      setItems((xs) => [...xs, t]);
      setTimeout(() => setItems((xs) => xs.filter((x) => x.id !== t.id)), 5000);
    };
    toastListeners.add(add);
    return () => toastListeners.delete(add);
  }, []);
  return (
    <div class="toasts" aria-live="polite">
      {items.map((t) => (
        <div key={t.id} class={`toast toast-${t.tone}`}>
          {t.text}
        </div>
      ))}
    </div>
  );
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
        } catch {
          // Clipboard refused (no permission, not a secure context): select-and-copy still works.
          const area = Object.assign(document.createElement('textarea'), { value: text });
          document.body.append(area);
          area.select();
          document.execCommand('copy');
          area.remove();
        }
        setDone(true);
        setTimeout(() => setDone(false), 2000);
      }}
    >
      {done ? 'Copied' : label}
    </button>
  );
}

export function Json({ value }: { value: unknown }) {
  return <pre class="json">{JSON.stringify(value, null, 2)}</pre>;
}

export type InputEvent = TargetedEvent<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement, Event>;
export const valueOf = (e: InputEvent) => e.currentTarget.value;

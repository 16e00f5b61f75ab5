/**
 * What every list screen is made of, written once: the header with its main action, a card with the
 * list's error and its table (and whatever goes above or below it), the dialogs with one form each,
 * and the row actions that ask, act, say so and reload.
 */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError } from '../api/client.js';
import type { Loaded } from '../lib/use.js';
import { ErrorNote, Modal, PageHeader, Table, toast, type Column } from './ui.js';

export interface ListPageProps<T> {
  title: string;
  subtitle?: ComponentChildren;
  /** The screen's main action (a primary button in the header); left out when the role may not. */
  action?: { label: string; onClick: () => void } | false;
  /** Other header content (links, badges). */
  actions?: ComponentChildren;
  /** The list as loaded: its error is shown above the table, its `data` are the rows unless `rows` says otherwise. */
  list: Loaded<{ data: T[] }>;
  rows?: T[];
  caption: string;
  columns: Column<T>[];
  rowKey: (row: T) => string;
  empty?: ComponentChildren;
  /** Inside the card, above the table (filters, a selection bar). */
  toolbar?: ComponentChildren;
  /** Inside the card, below the table (a pager). */
  footer?: ComponentChildren;
  /** Extra props for the table (sorting, selection). */
  table?: Partial<Parameters<typeof Table<T>>[0]>;
  /** Cards before the list's card (a quick-create form). */
  before?: ComponentChildren;
  /** After the card: the dialogs the screen opens. */
  children?: ComponentChildren;
}

export function ListPage<T>(p: ListPageProps<T>) {
  return (
    <div>
      <PageHeader title={p.title} subtitle={p.subtitle}>
        {p.actions}
        {p.action && (
          <button type="button" class="primary" onClick={p.action.onClick}>
            {p.action.label}
          </button>
        )}
      </PageHeader>
      {p.before}
      <section class="card">
        {p.toolbar}
        <ErrorNote error={p.list.error} />
        <Table<T> caption={p.caption} rows={p.rows ?? p.list.data?.data ?? []} rowKey={p.rowKey} columns={p.columns} empty={p.empty} {...p.table} />
        {p.footer}
      </section>
      {p.children}
    </div>
  );
}

/**
 * A row action: asks first when `question` is given, runs, says `done` (or the error) in a toast,
 * then reloads the list.
 */
export function useRowAction(reload: () => void) {
  return async (run: () => Promise<unknown>, done: string, question?: string): Promise<void> => {
    if (question && !confirm(question)) return;
    try {
      await run();
      toast(done);
      reload();
    } catch (err) {
      toast((err as Error).message, 'bad');
    }
  };
}

/** The message of the field at a JSON pointer in the API's last refusal, if it named that field. */
export type FieldErrorAt = (path: string) => string | undefined;

/** The end of every form in a dialog: the refusal, then Cancel and the submit button. */
export function FormFooter({ error, onCancel, submit, busy, disabled }: { error: unknown; onCancel: () => void; submit: string; busy?: string | false; disabled?: boolean }) {
  return (
    <>
      <div class="field-wide">
        <ErrorNote error={error} />
      </div>
      <div class="form-actions field-wide">
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" class="primary" disabled={disabled || !!busy}>
          {busy || submit}
        </button>
      </div>
    </>
  );
}

/**
 * A dialog with one form. Submitting runs `onSubmit` with the form's data; when it throws, the
 * refusal is shown below the form and at the fields it names (`at`). It closes itself after a
 * success unless `onSubmit` returns `'stay'` (a dialog that shows a result next).
 */
export function FormModal(props: {
  title: string;
  submit: string;
  onClose: () => void;
  onSubmit: (form: FormData) => Promise<void | 'stay'>;
  children: (at: FieldErrorAt) => ComponentChildren;
  wide?: boolean;
}) {
  const [error, setError] = useState<Error>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      const next = await props.onSubmit(new FormData(event.currentTarget as HTMLFormElement));
      setError(undefined);
      if (next !== 'stay') props.onClose();
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  };
  const at: FieldErrorAt = (path) => (error instanceof ApiError ? error.at(path) : undefined);
  return (
    <Modal title={props.title} open onClose={props.onClose} wide={props.wide}>
      <form onSubmit={submit} class="form-grid">
        {props.children(at)}
        <FormFooter error={error} onCancel={props.onClose} submit={props.submit} busy={busy && `${props.submit}…`} />
      </form>
    </Modal>
  );
}

/** Choosing one of a list of named things (templates, resellers, merchants) by id; `none` labels the choice of none (''). */
export function NamedSelect(props: { name?: string; items: readonly { id: string; name: string }[] | undefined; value: string; onChange: (id: string) => void; none?: string; required?: boolean }) {
  return (
    <select name={props.name} required={props.required} value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)}>
      {props.none !== undefined && <option value="">{props.none}</option>}
      {/* `selected` as well as the select's value: items that arrive after the value still show it. */}
      {(props.items ?? []).map((t) => (
        <option key={t.id} value={t.id} selected={t.id === props.value}>
          {t.name}
        </option>
      ))}
    </select>
  );
}

/**
 * Do-not-call lists: the lists in scope with their size and version, a new list, a CSV import
 * streamed to the server with its progress, and "is this number on a list?".
 */
import { useState } from 'preact/hooks';
import { dncLists, type DncList, type ImportResult } from '../api/compliance.js';
import { ErrorNote, Field, Modal } from '../components/ui.js';
import { FormFooter, FormModal, ListPage, useRowAction } from '../components/list-page.js';
import { when } from '../lib/format.js';
import { useLoad } from '../lib/use.js';
import { can, session } from '../session.js';

export default function DncListsPage() {
  const me = session.get()!.me;
  const lists = useLoad((signal) => dncLists.list(signal), []);
  const [creating, setCreating] = useState(false);
  const [importing, setImporting] = useState<DncList>();
  const [found, setFound] = useState<{ phone: string; on: DncList[] } | { error: unknown }>();
  const writable = can('dnc_lists', 'write');
  const act = useRowAction(lists.reload);
  const mine = (l: DncList) => me.role === 'admin' || l.reseller_id === me.reseller_id;
  const search = async (event: Event) => {
    event.preventDefault();
    const phone = String(new FormData(event.currentTarget as HTMLFormElement).get('q') ?? '').trim();
    if (!phone) return;
    try {
      const all = lists.data?.data ?? [];
      const hits = await Promise.all(all.map((l) => dncLists.lookup(l.id, phone)));
      setFound({ phone, on: all.filter((_, i) => hits[i]!.listed) });
    } catch (error) {
      setFound({ error });
    }
  };
  return (
    <ListPage<DncList>
      title="Do-not-call lists"
      subtitle="Numbers a configuration that honours a list never calls: refused at push and checked again at dial time."
      action={writable && { label: 'New list', onClick: () => setCreating(true) }}
      toolbar={
        <>
          <form class="toolbar" role="search" onSubmit={search}>
            <Field label="Is a number on a list?" class="grow">
              <input name="q" type="search" placeholder="+14155550123" />
            </Field>
            <button type="submit">Search</button>
          </form>
          {found && 'error' in found && <ErrorNote error={found.error} />}
          {found && 'phone' in found && (
            <p id="dnc-search-result" role="status" class={found.on.length ? 'error-text' : ''}>
              {found.on.length ? `${found.phone} is on ${found.on.map((l) => l.name).join(', ')}.` : `${found.phone} is on none of these lists.`}
            </p>
          )}
        </>
      }
      list={lists}
      caption="Do-not-call lists"
      rowKey={(l) => l.id}
      empty="No do-not-call list yet."
      columns={[
        { key: 'name', label: 'Name', render: (l) => <strong>{l.name}</strong> },
        { key: 'scope', label: 'Scope', render: (l) => (l.reseller_id ? 'reseller' : 'platform-wide') },
        { key: 'source', label: 'Source', render: (l) => l.source ?? '—' },
        { key: 'version', label: 'Version', render: (l) => l.version ?? '—' },
        { key: 'count', label: 'Numbers', class: 'num', render: (l) => l.number_count.toLocaleString() },
        { key: 'imported', label: 'Imported', render: (l) => (l.imported_at ? when(l.imported_at) : 'never') },
        {
          key: 'actions',
          label: '',
          render: (l) =>
            writable && mine(l) ? (
              <div class="row-actions">
                <button type="button" onClick={() => setImporting(l)}>
                  Import CSV
                </button>
                <button type="button" class="danger" onClick={() => act(() => dncLists.remove(l.id), `${l.name} deleted.`, `Delete ${l.name} and its ${l.number_count} numbers?`)}>
                  Delete
                </button>
              </div>
            ) : null,
        },
      ]}
    >
      {creating && (
        <FormModal
          title="New do-not-call list"
          submit="Create"
          onClose={() => setCreating(false)}
          onSubmit={async (form) => {
            const text = (k: string) => String(form.get(k) ?? '').trim() || undefined;
            await dncLists.create({ name: text('name') ?? '', ...(text('source') ? { source: text('source') } : {}), ...(text('version') ? { version: text('version') } : {}) });
            lists.reload();
          }}
        >
          {(at) => (
            <>
              <Field label="Name" error={at('/name')}>
                <input name="name" required maxLength={200} placeholder="National registry" />
              </Field>
              <Field label="Source" hint="Where the numbers come from">
                <input name="source" maxLength={200} placeholder="FTC National DNC Registry" />
              </Field>
              <Field label="Version">
                <input name="version" maxLength={100} placeholder="2025-01" />
              </Field>
            </>
          )}
        </FormModal>
      )}
      {importing && <ImportCsv list={importing} onClose={() => setImporting(undefined)} onDone={lists.reload} />}
    </ListPage>
  );
}

function ImportCsv({ list, onClose, onDone }: { list: DncList; onClose: () => void; onDone: () => void }) {
  const [progress, setProgress] = useState<{ sent: number; total: number }>();
  const [result, setResult] = useState<ImportResult>();
  const [error, setError] = useState<unknown>();
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const file = form.get('file') as File | null;
    if (!file || file.size === 0) return setError(new Error('Choose a CSV file.'));
    const version = String(form.get('version') ?? '').trim();
    setError(undefined);
    setProgress({ sent: 0, total: file.size });
    try {
      const done = await dncLists.import(list.id, file, { ...(version ? { version } : {}), mode: form.get('replace') ? 'replace' : 'append' }, (sent, total) => setProgress({ sent, total }));
      setResult(done);
      onDone();
    } catch (err) {
      setError(err);
      setProgress(undefined);
    }
  };
  return (
    <Modal title={`Import numbers into ${list.name}`} open onClose={onClose}>
      {result ? (
        <div id="dnc-import-result" role="status">
          <p>
            <strong>{result.imported.toLocaleString()}</strong> imported, {result.already_listed.toLocaleString()} already listed, <strong>{result.malformed.toLocaleString()}</strong> malformed
            line(s). The list holds {result.number_count.toLocaleString()} numbers{result.version ? ` (version ${result.version})` : ''}.
          </p>
          {result.errors.length > 0 && (
            <ul class="scroll-box">
              {result.errors.slice(0, 50).map((e) => (
                <li key={e.line}>
                  Line {e.line}: {JSON.stringify(e.value)} {e.message}
                </li>
              ))}
            </ul>
          )}
          <div class="form-actions">
            <button type="button" class="primary" onClick={onClose}>
              Close
            </button>
          </div>
        </div>
      ) : (
        <form onSubmit={submit} class="form-grid">
          <Field label="CSV file" wide hint="One E.164 number a line in the first column; a header line is allowed. Sent as it is read, millions of lines included.">
            <input type="file" name="file" accept=".csv,text/csv,text/plain" required />
          </Field>
          <Field label="Version" hint="Recorded on the list">
            <input name="version" maxLength={100} placeholder={list.version ?? '2025-02'} />
          </Field>
          <label class="check">
            <input type="checkbox" name="replace" /> Replace the list's numbers (otherwise added to them)
          </label>
          {progress && (
            <div class="import-progress field-wide">
              <label class="field">
                <span class="field-label">
                  {progress.sent < progress.total ? 'Uploading' : 'Importing'}: {Math.round((100 * progress.sent) / Math.max(progress.total, 1))}% of {(progress.total / 1024).toFixed(0)} KB
                </span>
                <progress id="dnc-import-progress" max={progress.total} value={progress.sent} />
              </label>
            </div>
          )}
          <FormFooter error={error} onCancel={onClose} submit="Import" busy={progress && 'Importing…'} />
        </form>
      )}
    </Modal>
  );
}

/** The blacklist: numbers that are never called (when a configuration enforces it). Find, add, remove, import a CSV. */
import { useState } from 'preact/hooks';
import { parse } from 'csv-parse/browser/esm/sync';
import { ApiError } from '../api/client.js';
import { blacklist, tenants } from '../api/endpoints.js';
import type { BlacklistEntry } from '../api/types.js';
import { Field, Modal, Pager, toast } from '../components/ui.js';
import { FormFooter, ListPage, NamedSelect } from '../components/list-page.js';
import { when } from '../lib/format.js';
import { useLoad } from '../lib/use.js';
import { can, session } from '../session.js';

const CHUNK = 5000;

/** The phone numbers of a CSV: its phone_number (or customer_mobile_number) column, or its first column. */
export function numbersOfCsv(text: string): string[] {
  const rows = parse(text, { bom: true, skip_empty_lines: true, trim: true, relax_column_count: true }) as string[][];
  if (rows.length === 0) return [];
  const header = rows[0]!.map((h) => h.toLowerCase());
  const col = Math.max(header.indexOf('phone_number'), header.indexOf('customer_mobile_number'));
  const hasHeader = col >= 0 || !/^\+?\d/.test(rows[0]![0] ?? '');
  return rows.slice(hasHeader ? 1 : 0).map((r) => r[Math.max(col, 0)] ?? '').filter(Boolean);
}

export default function BlacklistPage() {
  const me = session.get()!.me;
  const [page, setPage] = useState(1);
  const [search, setSearch] = useState('');
  const [listOf, setListOf] = useState<string>(me.reseller_id ?? '');
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [adding, setAdding] = useState(false);
  const resellers = useLoad((signal) => (me.role === 'admin' ? tenants.resellers(signal) : Promise.resolve(undefined)), []);
  const list = useLoad(
    (signal) => blacklist.list({ page, ...(search ? { phone_number: search } : {}), ...(me.role === 'admin' && listOf ? { reseller_id: listOf } : {}) }, signal),
    [page, search, listOf],
  );
  const writable = can('blacklist', 'write');
  // What a write targets: an admin picks a reseller's list or the platform list (null); a reseller writes its own.
  const target = me.role === 'admin' ? listOf || null : undefined;
  const remove = async () => {
    const rows = (list.data?.data ?? []).filter((e) => selected.has(e.id));
    try {
      const byList = new Map<string | null, string[]>();
      for (const r of rows) byList.set(r.reseller_id, [...(byList.get(r.reseller_id) ?? []), r.phone_number]);
      for (const [reseller, nums] of byList) await blacklist.remove(nums, me.role === 'admin' ? reseller : undefined);
      toast(`${rows.length} number(s) removed.`);
      setSelected(new Set());
      list.reload();
    } catch (err) {
      toast((err as Error).message, 'bad');
    }
  };
  return (
    <ListPage<BlacklistEntry>
      title="Blacklist"
      subtitle="Numbers that are never called when a configuration enforces the blacklist."
      action={writable && { label: 'Add or import numbers', onClick: () => setAdding(true) }}
      toolbar={
        <>
          <form
            class="toolbar"
            role="search"
            onSubmit={(e) => {
              e.preventDefault();
              setPage(1);
              setSearch(String(new FormData(e.currentTarget).get('q') ?? '').trim());
            }}
          >
            <Field label="Find a number" class="grow">
              <input name="q" type="search" placeholder="+14155550123" />
            </Field>
            {me.role === 'admin' && (
              <Field label="List">
                <NamedSelect none="Platform-wide (every reseller)" items={resellers.data?.data} value={listOf} onChange={(v) => (setListOf(v), setPage(1))} />
              </Field>
            )}
            <button type="submit">Find</button>
          </form>
          {writable && selected.size > 0 && (
            <div class="selection-bar">
              {selected.size} selected
              <button type="button" class="danger" onClick={remove}>
                Remove from the blacklist
              </button>
            </div>
          )}
        </>
      }
      list={list}
      caption="Blacklisted numbers"
      rowKey={(e) => e.id}
      table={writable ? { selected, onSelect: setSelected } : {}}
      empty={search ? `${search} is not on the blacklist.` : 'The blacklist is empty.'}
      columns={[
        { key: 'phone', label: 'Number', render: (e) => e.phone_number },
        { key: 'list', label: 'List', render: (e) => (e.reseller_id ? (resellers.data?.data.find((r) => r.id === e.reseller_id)?.name ?? 'reseller') : 'platform-wide') },
        { key: 'added', label: 'Added', render: (e) => when(e.created_at) },
      ]}
      footer={list.data && list.data.total > 0 && <Pager page={list.data.page} pageSize={list.data.page_size} total={list.data.total} onPage={setPage} />}
    >
      {adding && <AddNumbers target={target} onClose={() => setAdding(false)} onDone={list.reload} />}
    </ListPage>
  );
}

function AddNumbers({ target, onClose, onDone }: { target: string | null | undefined; onClose: () => void; onDone: () => void }) {
  const [error, setError] = useState<ApiError | Error>();
  const [summary, setSummary] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const typed = String(form.get('numbers') ?? '').split(/[\s,;]+/).filter(Boolean);
    const file = form.get('file') as File | null;
    setBusy(true);
    setError(undefined);
    try {
      const all = [...typed, ...(file && file.size > 0 ? numbersOfCsv(await file.text()) : [])];
      if (all.length === 0) throw new Error('Type numbers or choose a CSV file.');
      let added = 0;
      let present = 0;
      for (let i = 0; i < all.length; i += CHUNK) {
        const res = await blacklist.add(all.slice(i, i + CHUNK), target);
        added += res.added.length;
        present += res.already_present.length;
      }
      setSummary(`${added} added, ${present} already on the list.`);
      onDone();
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal title="Add numbers to the blacklist" open onClose={onClose}>
      {summary ? (
        <div>
          <p role="status">{summary}</p>
          <div class="form-actions">
            <button type="button" class="primary" onClick={onClose}>
              Close
            </button>
          </div>
        </div>
      ) : (
        <form onSubmit={submit} class="form-grid">
          <Field label="Numbers" wide hint="E.164, one per line (or separated by commas)">
            <textarea name="numbers" rows={4} placeholder={'+14155550123\n+442071838750'} />
          </Field>
          <Field label="…or import a CSV" wide hint="A phone_number (or customer_mobile_number) column, or numbers in the first column">
            <input type="file" name="file" accept=".csv,text/csv,text/plain" />
          </Field>
          <FormFooter error={error} onCancel={onClose} submit="Add" busy={busy && 'Adding…'} />
        </form>
      )}
    </Modal>
  );
}

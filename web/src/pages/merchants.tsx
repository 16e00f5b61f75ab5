/** Merchants: the businesses inside a reseller. */
import { useState } from 'preact/hooks';
import { ApiError } from '../api/client.js';
import { tenants } from '../api/endpoints.js';
import type { Merchant } from '../api/types.js';
import { ErrorNote, Field, Modal, PageHeader, Table, toast } from '../components/ui.js';
import { when } from '../lib/format.js';
import { useLoad } from '../lib/use.js';
import { can, session } from '../session.js';

export default function MerchantsPage() {
  const list = useLoad((signal) => tenants.merchants(signal), []);
  const resellers = useLoad((signal) => (can('resellers', 'read') ? tenants.resellers(signal) : Promise.resolve(undefined)), []);
  const [editing, setEditing] = useState<Partial<Merchant>>();
  const writable = can('merchants', 'write');
  const resellerName = (id: string) => resellers.data?.data.find((r) => r.id === id)?.name ?? id;
  const remove = async (m: Merchant) => {
    if (!confirm(`Delete the merchant ${m.name}?`)) return;
    try {
      await tenants.deleteMerchant(m.id);
      toast('Merchant deleted.');
      list.reload();
    } catch (err) {
      toast((err as Error).message, 'bad');
    }
  };
  return (
    <div>
      <PageHeader title="Merchants" subtitle="The businesses a reseller calls for; templates, leads and tokens can belong to one.">
        {writable && (
          <button type="button" class="primary" onClick={() => setEditing({})}>
            New merchant
          </button>
        )}
      </PageHeader>
      <section class="card">
        <ErrorNote error={list.error} />
        <Table<Merchant>
          caption="Merchants"
          rows={list.data?.data ?? []}
          rowKey={(m) => m.id}
          empty="No merchants yet."
          columns={[
            { key: 'name', label: 'Name', render: (m) => m.name },
            { key: 'email', label: 'Contact', render: (m) => m.contact_email },
            { key: 'reseller', label: 'Reseller', render: (m) => resellerName(m.reseller_id) },
            { key: 'id', label: 'Id', render: (m) => <code>{m.id}</code> },
            { key: 'created', label: 'Created', render: (m) => when(m.created_at) },
            ...(writable
              ? [
                  {
                    key: 'actions',
                    label: '',
                    render: (m: Merchant) => (
                      <div class="row-actions">
                        <button type="button" onClick={() => setEditing(m)}>
                          Edit
                        </button>
                        <button type="button" class="danger" onClick={() => remove(m)}>
                          Delete
                        </button>
                      </div>
                    ),
                  },
                ]
              : []),
          ]}
        />
      </section>
      {editing && (
        <MerchantForm
          merchant={editing}
          resellers={resellers.data?.data ?? []}
          onClose={() => setEditing(undefined)}
          onSaved={() => {
            setEditing(undefined);
            list.reload();
          }}
        />
      )}
    </div>
  );
}

function MerchantForm({ merchant, resellers, onClose, onSaved }: { merchant: Partial<Merchant>; resellers: { id: string; name: string }[]; onClose: () => void; onSaved: () => void }) {
  const me = session.get()!.me;
  const [error, setError] = useState<ApiError | Error>();
  const submit = async (event: Event) => {
    event.preventDefault();
    const f = new FormData(event.currentTarget as HTMLFormElement);
    const body = { name: String(f.get('name')).trim(), contact_email: String(f.get('contact_email')).trim(), reseller_id: merchant.reseller_id ?? (String(f.get('reseller_id') ?? '') || me.reseller_id || '') };
    try {
      if (merchant.id) await tenants.updateMerchant(merchant.id, body);
      else await tenants.createMerchant(body);
      toast('Merchant saved.');
      onSaved();
    } catch (err) {
      setError(err as Error);
    }
  };
  const at = (p: string) => (error instanceof ApiError ? error.at(p) : undefined);
  return (
    <Modal title={merchant.id ? 'Edit merchant' : 'New merchant'} open onClose={onClose}>
      <form onSubmit={submit} class="form-grid">
        <Field label="Name" error={at('/name')}>
          <input name="name" required defaultValue={merchant.name ?? ''} />
        </Field>
        <Field label="Contact email" error={at('/contact_email')}>
          <input name="contact_email" type="email" required defaultValue={merchant.contact_email ?? ''} />
        </Field>
        {me.role === 'admin' && !merchant.id && (
          <Field label="Reseller" error={at('/reseller_id')}>
            <select name="reseller_id" required>
              {resellers.map((r) => (
                <option key={r.id} value={r.id}>
                  {r.name}
                </option>
              ))}
            </select>
          </Field>
        )}
        <div class="field-wide">
          <ErrorNote error={error} />
        </div>
        <div class="form-actions field-wide">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="primary">
            Save
          </button>
        </div>
      </form>
    </Modal>
  );
}

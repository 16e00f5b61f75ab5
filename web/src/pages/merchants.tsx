/** Merchants: the businesses inside a reseller. */
import { useState } from 'preact/hooks';
import { tenants } from '../api/endpoints.js';
import type { Merchant } from '../api/types.js';
import { FormModal, ListPage, useRowAction } from '../components/list-page.js';
import { Field, toast } from '../components/ui.js';
import { when } from '../lib/format.js';
import { useLoad } from '../lib/use.js';
import { can, session } from '../session.js';

export default function MerchantsPage() {
  const list = useLoad((signal) => tenants.merchants(signal), []);
  const resellers = useLoad((signal) => (can('resellers', 'read') ? tenants.resellers(signal) : Promise.resolve(undefined)), []);
  const act = useRowAction(list.reload);
  const [editing, setEditing] = useState<Partial<Merchant>>();
  const writable = can('merchants', 'write');
  const resellerName = (id: string) => resellers.data?.data.find((r) => r.id === id)?.name ?? id;
  return (
    <ListPage<Merchant>
      title="Merchants"
      subtitle="The businesses a reseller calls for; templates, leads and tokens can belong to one."
      action={writable && { label: 'New merchant', onClick: () => setEditing({}) }}
      list={list}
      caption="Merchants"
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
                    <button type="button" class="danger" onClick={() => act(() => tenants.deleteMerchant(m.id), 'Merchant deleted.', `Delete the merchant ${m.name}?`)}>
                      Delete
                    </button>
                  </div>
                ),
              },
            ]
          : []),
      ]}
    >
      {editing && <MerchantForm merchant={editing} resellers={resellers.data?.data ?? []} onClose={() => setEditing(undefined)} onSaved={list.reload} />}
    </ListPage>
  );
}

function MerchantForm({ merchant, resellers, onClose, onSaved }: { merchant: Partial<Merchant>; resellers: { id: string; name: string }[]; onClose: () => void; onSaved: () => void }) {
  const me = session.get()!.me;
  return (
    <FormModal
      title={merchant.id ? 'Edit merchant' : 'New merchant'}
      submit="Save"
      onClose={onClose}
      onSubmit={async (f) => {
        const body = { name: String(f.get('name')).trim(), contact_email: String(f.get('contact_email')).trim(), reseller_id: merchant.reseller_id ?? (String(f.get('reseller_id') ?? '') || me.reseller_id || '') };
        if (merchant.id) await tenants.updateMerchant(merchant.id, body);
        else await tenants.createMerchant(body);
        toast('Merchant saved.');
        onSaved();
      }}
    >
      {(at) => (
        <>
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
        </>
      )}
    </FormModal>
  );
}

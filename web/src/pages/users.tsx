/** Users: who logs in to the dashboard, with which role, in which reseller and merchant. */
import { useState } from 'preact/hooks';
import { ApiError } from '../api/client.js';
import { tenants } from '../api/endpoints.js';
import type { User } from '../api/types.js';
import { ScopeFields } from '../components/scope-fields.js';
import { useTenantNames } from '../components/tenant-names.js';
import { Badge, ErrorNote, Field, Modal, PageHeader, Table, toast } from '../components/ui.js';
import { when } from '../lib/format.js';
import { useLoad } from '../lib/use.js';
import { session } from '../session.js';

export default function UsersPage() {
  const me = session.get()!.me;
  const list = useLoad((signal) => tenants.users(signal), []);
  const names = useTenantNames();
  const [adding, setAdding] = useState(false);
  const creatable = me.create_user_roles;
  const remove = async (u: User) => {
    if (!confirm(`Delete the user ${u.email}?`)) return;
    try {
      await tenants.deleteUser(u.id);
      toast('User deleted.');
      list.reload();
    } catch (err) {
      toast((err as Error).message, 'bad');
    }
  };
  return (
    <div>
      <PageHeader title="Users" subtitle="People who log in. A role decides what they may do; a reseller and merchant decide what they see.">
        {creatable.length > 0 && (
          <button type="button" class="primary" onClick={() => setAdding(true)}>
            New user
          </button>
        )}
      </PageHeader>
      <section class="card">
        <ErrorNote error={list.error} />
        <Table<User>
          caption="Users"
          rows={list.data?.data ?? []}
          rowKey={(u) => u.id}
          columns={[
            { key: 'email', label: 'Email', render: (u) => u.email },
            { key: 'role', label: 'Role', render: (u) => <Badge kind="plain" value={u.role} /> },
            { key: 'reseller', label: 'Reseller', render: (u) => names.reseller(u.reseller_id) },
            { key: 'merchant', label: 'Merchant', render: (u) => names.merchant(u.merchant_id) },
            { key: 'created', label: 'Created', render: (u) => when(u.created_at) },
            {
              key: 'actions',
              label: '',
              render: (u) =>
                u.id !== me.id && creatable.includes(u.role as never) ? (
                  <button type="button" class="danger" onClick={() => remove(u)}>
                    Delete
                  </button>
                ) : null,
            },
          ]}
        />
      </section>
      {adding && <NewUser roles={creatable} onClose={() => setAdding(false)} onSaved={list.reload} />}
    </div>
  );
}

function NewUser({ roles, onClose, onSaved }: { roles: readonly string[]; onClose: () => void; onSaved: () => void }) {
  const [role, setRole] = useState(roles.includes('merchant') ? 'merchant' : roles[0]!);
  const [resellerId, setResellerId] = useState(session.get()!.me.reseller_id ?? '');
  const [error, setError] = useState<ApiError | Error>();
  const submit = async (event: Event) => {
    event.preventDefault();
    const f = new FormData(event.currentTarget as HTMLFormElement);
    try {
      await tenants.createUser({
        email: String(f.get('email')).trim(),
        password: String(f.get('password')),
        role,
        reseller_id: role === 'admin' ? null : String(f.get('reseller_id') ?? '') || null,
        merchant_id: role === 'merchant' || role === 'user' ? String(f.get('merchant_id') ?? '') || null : null,
      });
      toast('User created.');
      onSaved();
      onClose();
    } catch (err) {
      setError(err as Error);
    }
  };
  const at = (p: string) => (error instanceof ApiError ? error.at(p) : undefined);
  return (
    <Modal title="New user" open onClose={onClose}>
      <form onSubmit={submit} class="form-grid">
        <Field label="Email" error={at('/email')}>
          <input name="email" type="email" required autocomplete="off" />
        </Field>
        <Field label="Password" hint="At least 8 characters" error={at('/password')}>
          <input name="password" type="password" required minLength={8} autocomplete="new-password" />
        </Field>
        <Field label="Role" error={at('/role')}>
          <select value={role} onChange={(e) => setRole(e.currentTarget.value)}>
            {roles.map((r) => (
              <option key={r}>{r}</option>
            ))}
          </select>
        </Field>
        {role !== 'admin' && <ScopeFields needsMerchant={role === 'merchant' || role === 'user'} resellerId={resellerId} onReseller={setResellerId} errorAt={at} />}
        <div class="field-wide">
          <ErrorNote error={error} />
        </div>
        <div class="form-actions field-wide">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="primary">
            Create
          </button>
        </div>
      </form>
    </Modal>
  );
}

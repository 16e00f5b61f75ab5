/** Users: who logs in to the dashboard, with which role, in which reseller and merchant; edit, reset a password, delete. */
import { useState } from 'preact/hooks';
import { tenants } from '../api/endpoints.js';
import type { User } from '../api/types.js';
import { FormModal, ListPage, useRowAction } from '../components/list-page.js';
import { ScopeFields } from '../components/scope-fields.js';
import { useTenantNames } from '../components/tenant-names.js';
import { Badge, CopyButton, Field, toast } from '../components/ui.js';
import { when } from '../lib/format.js';
import { useLoad } from '../lib/use.js';
import { session } from '../session.js';

type Dialog = { kind: 'new' } | { kind: 'edit'; user: User } | { kind: 'password'; user: User };

export default function UsersPage() {
  const me = session.get()!.me;
  const list = useLoad((signal) => tenants.users(signal), []);
  const act = useRowAction(list.reload);
  const names = useTenantNames();
  const [dialog, setDialog] = useState<Dialog>();
  const creatable = me.create_user_roles;
  const manages = (u: User) => creatable.includes(u.role as never);
  const close = () => setDialog(undefined);
  return (
    <ListPage<User>
      title="Users"
      subtitle="People who log in. A role decides what they may do; a reseller and merchant decide what they see."
      action={creatable.length > 0 && { label: 'New user', onClick: () => setDialog({ kind: 'new' }) }}
      list={list}
      caption="Users"
      rowKey={(u) => u.id}
      columns={[
        { key: 'email', label: 'Email', render: (u) => (u.id === me.id ? <span>{u.email} <span class="muted nowrap">(you)</span></span> : u.email) },
        { key: 'role', label: 'Role', render: (u) => <Badge kind="plain" value={u.role} /> },
        { key: 'reseller', label: 'Reseller', render: (u) => names.reseller(u.reseller_id) },
        { key: 'merchant', label: 'Merchant', render: (u) => names.merchant(u.merchant_id) },
        { key: 'created', label: 'Created', render: (u) => when(u.created_at) },
        {
          key: 'actions',
          label: '',
          render: (u) =>
            (manages(u) || u.id === me.id) && creatable.length > 0 ? (
              <div class="row-actions">
                <button type="button" onClick={() => setDialog({ kind: 'edit', user: u })}>
                  Edit
                </button>
                {u.id !== me.id && (
                  <>
                    <button type="button" onClick={() => setDialog({ kind: 'password', user: u })}>
                      Reset password
                    </button>
                    <button type="button" class="danger" onClick={() => act(() => tenants.deleteUser(u.id), 'User deleted.', `Delete the user ${u.email}?`)}>
                      Delete
                    </button>
                  </>
                )}
              </div>
            ) : null,
        },
      ]}
    >
      {dialog?.kind === 'new' && <UserForm roles={creatable} onClose={close} onSaved={list.reload} />}
      {dialog?.kind === 'edit' && <UserForm user={dialog.user} roles={creatable} onClose={close} onSaved={list.reload} />}
      {dialog?.kind === 'password' && <ResetPassword user={dialog.user} onClose={close} />}
    </ListPage>
  );
}

/** A new user, or a user's email, role and place (one's own role stays as it is). */
function UserForm({ user, roles, onClose, onSaved }: { user?: User; roles: readonly string[]; onClose: () => void; onSaved: () => void }) {
  const me = session.get()!.me;
  const self = user?.id === me.id;
  const [role, setRole] = useState(user?.role ?? (roles.includes('merchant') ? 'merchant' : roles[0]!));
  const [resellerId, setResellerId] = useState(user?.reseller_id ?? me.reseller_id ?? '');
  const choices = user && !roles.includes(user.role) ? [user.role, ...roles] : roles;
  return (
    <FormModal
      title={user ? `Edit ${user.email}` : 'New user'}
      submit={user ? 'Save' : 'Create'}
      onClose={onClose}
      onSubmit={async (f) => {
        const body = {
          email: String(f.get('email')).trim(),
          role,
          reseller_id: role === 'admin' ? null : String(f.get('reseller_id') ?? '') || null,
          merchant_id: role === 'merchant' || role === 'user' ? String(f.get('merchant_id') ?? '') || null : null,
        };
        if (user) await tenants.updateUser(user.id, body);
        else await tenants.createUser({ ...body, password: String(f.get('password')) });
        toast(user ? 'User saved.' : 'User created.');
        onSaved();
      }}
    >
      {(at) => (
        <>
          <Field label="Email" error={at('/email')}>
            <input name="email" type="email" required autocomplete="off" defaultValue={user?.email ?? ''} />
          </Field>
          {!user && (
            <Field label="Password" hint="At least 8 characters" error={at('/password')}>
              <input name="password" type="password" required minLength={8} autocomplete="new-password" />
            </Field>
          )}
          <Field label="Role" hint={self ? 'You cannot change your own role' : undefined} error={at('/role')}>
            <select name="role" value={role} disabled={self} onChange={(e) => setRole(e.currentTarget.value)}>
              {choices.map((r) => (
                <option key={r}>{r}</option>
              ))}
            </select>
          </Field>
          {role !== 'admin' && <ScopeFields needsMerchant={role === 'merchant' || role === 'user'} resellerId={resellerId} onReseller={setResellerId} merchantId={user?.merchant_id ?? null} errorAt={at} />}
        </>
      )}
    </FormModal>
  );
}

/** Sets a new password: typed, or made here at random and shown to be passed on. The user's open sessions end. */
function ResetPassword({ user, onClose }: { user: User; onClose: () => void }) {
  const [password, setPassword] = useState('');
  const generate = () => {
    const bytes = crypto.getRandomValues(new Uint8Array(12));
    setPassword(btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_'));
  };
  return (
    <FormModal
      title={`Reset the password of ${user.email}`}
      submit="Reset password"
      onClose={onClose}
      onSubmit={async () => {
        await tenants.resetPassword(user.id, password);
        toast(`Password reset. ${user.email} must log in again with the new one.`);
      }}
    >
      {(at) => (
        <>
          <Field label="New password" wide hint="At least 8 characters. Pass it on to the user: it is not shown again." error={at('/password')}>
            <div class="input-with-button">
              <input name="password" type="text" required minLength={8} autocomplete="new-password" value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
              <button type="button" onClick={generate}>
                Generate
              </button>
              {password && <CopyButton text={password} />}
            </div>
          </Field>
          <p class="hint field-wide">Their open sessions end: they log in again with the new password.</p>
        </>
      )}
    </FormModal>
  );
}

/** Server-to-server tokens: for backends that push leads; the secret is shown once, with a copy button. */
import { useState } from 'preact/hooks';
import { tokens } from '../api/endpoints.js';
import type { IssuedToken, TokenRecord } from '../api/types.js';
import { FormModal, ListPage, useRowAction } from '../components/list-page.js';
import { ScopeFields } from '../components/scope-fields.js';
import { useTenantNames } from '../components/tenant-names.js';
import { Badge, CopyButton, Field, Modal } from '../components/ui.js';
import { ago, when } from '../lib/format.js';
import { useLoad } from '../lib/use.js';
import { session } from '../session.js';

export default function TokensPage() {
  const names = useTenantNames();
  const list = useLoad((signal) => tokens.list(signal), []);
  const act = useRowAction(list.reload);
  const [issuing, setIssuing] = useState(false);
  const roles = session.get()!.me.issue_token_roles;
  return (
    <ListPage<TokenRecord>
      title="API tokens"
      subtitle="Long-lived tokens for your backend (Authorization: Bearer s2s_…). Each acts with its role, inside its reseller and merchant."
      action={roles.length > 0 && { label: 'New token', onClick: () => setIssuing(true) }}
      list={list}
      caption="Tokens"
      rowKey={(t) => t.id}
      empty="No tokens yet."
      columns={[
        { key: 'name', label: 'Name', render: (t) => t.name },
        { key: 'role', label: 'Role', render: (t) => <Badge kind="plain" value={t.role} /> },
        { key: 'hint', label: 'Starts with', render: (t) => <code>{t.token_hint}…</code> },
        { key: 'scope', label: 'Scope', render: (t) => (t.merchant_id ? <>merchant {names.merchant(t.merchant_id)}</> : <>reseller {names.reseller(t.reseller_id)}</>) },
        { key: 'created', label: 'Created', render: (t) => when(t.created_at) },
        { key: 'used', label: 'Last used', render: (t) => (t.last_used_at ? ago(t.last_used_at) : 'never') },
        {
          key: 'state',
          label: '',
          render: (t) =>
            t.revoked_at ? (
              <span class="muted">revoked {ago(t.revoked_at)}</span>
            ) : roles.length > 0 ? (
              <button type="button" class="danger" onClick={() => act(() => tokens.revoke(t.id), 'Token revoked.', `Revoke the token ${t.name}? Whatever uses it stops working at once.`)}>
                Revoke
              </button>
            ) : null,
        },
      ]}
    >
      {issuing && <IssueToken roles={roles} onClose={() => setIssuing(false)} onIssued={list.reload} />}
    </ListPage>
  );
}

function IssueToken({ roles, onClose, onIssued }: { roles: readonly string[]; onClose: () => void; onIssued: () => void }) {
  const [role, setRole] = useState(roles.includes('merchant') ? 'merchant' : roles[0]!);
  const [resellerId, setResellerId] = useState(session.get()!.me.reseller_id ?? '');
  const [issued, setIssued] = useState<IssuedToken>();
  if (issued) {
    return (
      <Modal title="Your new token" open onClose={onClose}>
        <div class="issued">
          <p>
            <strong>Copy it now: it is shown only once.</strong> Dialer keeps only a hash of it.
          </p>
          <div class="secret">
            <code id="issued-token">{issued.token}</code>
            <CopyButton text={issued.token} />
          </div>
          <p class="hint">Use it as <code>Authorization: Bearer {issued.token.slice(0, 10)}…</code></p>
          <div class="form-actions">
            <button type="button" class="primary" onClick={onClose}>
              I have copied it
            </button>
          </div>
        </div>
      </Modal>
    );
  }
  return (
    <FormModal
      title="New token"
      submit="Issue token"
      onClose={onClose}
      onSubmit={async (f) => {
        setIssued(
          await tokens.issue({
            name: String(f.get('name')).trim(),
            role,
            reseller_id: String(f.get('reseller_id') ?? ''),
            ...(role !== 'reseller' ? { merchant_id: String(f.get('merchant_id') ?? '') || null } : {}),
          }),
        );
        onIssued();
        return 'stay';
      }}
    >
      {(at) => (
        <>
          <Field label="Name" hint="Where it is used, e.g. crm-backend" error={at('/name')}>
            <input name="name" required />
          </Field>
          <Field label="Role" error={at('/role')}>
            <select value={role} onChange={(e) => setRole(e.currentTarget.value)}>
              {roles.map((r) => (
                <option key={r}>{r}</option>
              ))}
            </select>
          </Field>
          <ScopeFields needsMerchant={role !== 'reseller'} resellerId={resellerId} onReseller={setResellerId} errorAt={at} />
        </>
      )}
    </FormModal>
  );
}

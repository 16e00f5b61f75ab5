/** Server-to-server tokens: for backends that push leads; the secret is shown once, with a copy button. */
import { useState } from 'preact/hooks';
import { ApiError } from '../api/client.js';
import { tokens } from '../api/endpoints.js';
import type { IssuedToken, TokenRecord } from '../api/types.js';
import { ScopeFields } from '../components/scope-fields.js';
import { useTenantNames } from '../components/tenant-names.js';
import { Badge, CopyButton, ErrorNote, Field, Modal, PageHeader, Table, toast } from '../components/ui.js';
import { ago, when } from '../lib/format.js';
import { useLoad } from '../lib/use.js';
import { session } from '../session.js';

export default function TokensPage() {
  const names = useTenantNames();
  const me = session.get()!.me;
  const list = useLoad((signal) => tokens.list(signal), []);
  const [issuing, setIssuing] = useState(false);
  const roles = me.issue_token_roles;
  const revoke = async (t: TokenRecord) => {
    if (!confirm(`Revoke the token ${t.name}? Whatever uses it stops working at once.`)) return;
    try {
      await tokens.revoke(t.id);
      toast('Token revoked.');
      list.reload();
    } catch (err) {
      toast((err as Error).message, 'bad');
    }
  };
  return (
    <div>
      <PageHeader title="API tokens" subtitle="Long-lived tokens for your backend (Authorization: Bearer s2s_…). Each acts with its role, inside its reseller and merchant.">
        {roles.length > 0 && (
          <button type="button" class="primary" onClick={() => setIssuing(true)}>
            New token
          </button>
        )}
      </PageHeader>
      <section class="card">
        <ErrorNote error={list.error} />
        <Table<TokenRecord>
          caption="Tokens"
          rows={list.data?.data ?? []}
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
                  <button type="button" class="danger" onClick={() => revoke(t)}>
                    Revoke
                  </button>
                ) : null,
            },
          ]}
        />
      </section>
      {issuing && <IssueToken roles={roles} onClose={() => setIssuing(false)} onIssued={list.reload} />}
    </div>
  );
}

function IssueToken({ roles, onClose, onIssued }: { roles: readonly string[]; onClose: () => void; onIssued: () => void }) {
  const [role, setRole] = useState(roles.includes('merchant') ? 'merchant' : roles[0]!);
  const [resellerId, setResellerId] = useState(session.get()!.me.reseller_id ?? '');
  const [issued, setIssued] = useState<IssuedToken>();
  const [error, setError] = useState<ApiError | Error>();
  const submit = async (event: Event) => {
    event.preventDefault();
    const f = new FormData(event.currentTarget as HTMLFormElement);
    try {
      const res = await tokens.issue({
        name: String(f.get('name')).trim(),
        role,
        reseller_id: String(f.get('reseller_id') ?? ''),
        ...(role !== 'reseller' ? { merchant_id: String(f.get('merchant_id') ?? '') || null } : {}),
      });
      setIssued(res);
      onIssued();
    } catch (err) {
      setError(err as Error);
    }
  };
  const at = (p: string) => (error instanceof ApiError ? error.at(p) : undefined);
  return (
    <Modal title={issued ? 'Your new token' : 'New token'} open onClose={onClose}>
      {issued ? (
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
      ) : (
        <form onSubmit={submit} class="form-grid">
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
          <div class="field-wide">
            <ErrorNote error={error} />
          </div>
          <div class="form-actions field-wide">
            <button type="button" onClick={onClose}>
              Cancel
            </button>
            <button type="submit" class="primary">
              Issue token
            </button>
          </div>
        </form>
      )}
    </Modal>
  );
}

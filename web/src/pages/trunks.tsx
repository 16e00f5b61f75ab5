/**
 * SIP trunks: a reseller's own carriers (or PBXs) that calls go out through, with their live
 * channels and calls per second (kept live), caps and failover trunk, and a trunk's recent SIP
 * failures (status code and reason). The password is write-only: the form never shows it, and an
 * edit that leaves it empty keeps the stored one. The sandbox line's trunk is shown, never edited.
 */
import { useState } from 'preact/hooks';
import { tenants, trunks } from '../api/endpoints.js';
import type { Trunk, TrunkBody } from '../api/types.js';
import { FormModal, ListPage, useRowAction } from '../components/list-page.js';
import { TrunkFailures } from '../components/trunk-failures.js';
import { Field, toast } from '../components/ui.js';
import { useInterval, useLoad } from '../lib/use.js';
import { can, session } from '../session.js';

const CODECS = ['PCMU', 'PCMA'] as const;

export default function TrunksPage() {
  const list = useLoad((signal) => trunks.list(signal), []);
  useInterval(list.reload, 3000);
  const resellers = useLoad((signal) => (can('resellers', 'read') ? tenants.resellers(signal) : Promise.resolve(undefined)), []);
  const act = useRowAction(list.reload);
  const [editing, setEditing] = useState<Partial<Trunk>>();
  const [watched, setWatched] = useState<string>();
  const writable = can('trunks', 'write');
  const rows = list.data?.data ?? [];
  const nameOf = (id: string | null) => (id ? (rows.find((t) => t.id === id)?.name ?? id) : '—');
  const resellerName = (id: string) => resellers.data?.data.find((r) => r.id === id)?.name ?? id;
  const live = rows.reduce((n, t) => n + t.channels_in_use, 0);
  return (
    <ListPage<Trunk>
      title="SIP trunks"
      subtitle={`${rows.length} trunk${rows.length === 1 ? '' : 's'} · ${live} call${live === 1 ? '' : 's'} live. A configuration whose provider is SIP calls through its trunk; outbound numbers of provider SIP are the caller IDs.`}
      action={writable && { label: 'Add a trunk', onClick: () => setEditing({}) }}
      list={list}
      caption="SIP trunks"
      rowKey={(t) => t.id}
      empty="No SIP trunks yet: add your carrier's (or your PBX's) SIP address to call through it."
      columns={[
        {
          key: 'name',
          label: 'Name',
          render: (t) => (
            <>
              <strong>{t.name}</strong>
              {t.sandbox && (
                <>
                  {' '}
                  <span class="badge badge-sandbox" title="Its far side is the simulated customer inside Dialer: no phone rings">
                    sandbox
                  </span>
                </>
              )}
              <div>
                <button type="button" class="link-button" aria-pressed={watched === t.id} onClick={() => setWatched(watched === t.id ? undefined : t.id)}>
                  {watched === t.id ? 'Hide failures' : 'Recent failures'}
                </button>
              </div>
            </>
          ),
        },
        {
          key: 'address',
          label: 'Address',
          render: (t) => (
            <>
              <code>{t.sandbox ? 'inside Dialer' : t.address}</code> <span class="muted">{t.transport.toUpperCase()}</span>
            </>
          ),
        },
        { key: 'codecs', label: 'Codecs', render: (t) => t.codecs.join(', ') },
        {
          key: 'channels',
          label: 'Channels in use',
          render: (t) => <span class={t.max_channels !== null && t.channels_in_use >= t.max_channels ? 'badge badge-warn' : ''}>{`${t.channels_in_use} / ${t.max_channels ?? '∞'}`}</span>,
        },
        {
          key: 'cps',
          label: 'Calls per second',
          render: (t) => (
            <span title="Calls started in the last 10 seconds, per second, against the trunk's limit">
              {`${t.calls_per_second} / `}
              {t.max_calls_per_second === null ? <span class="muted">no limit</span> : String(t.max_calls_per_second)}
            </span>
          ),
        },
        { key: 'failover', label: 'Failover', render: (t) => nameOf(t.failover_trunk_id) },
        { key: 'auth', label: 'Authentication', render: (t) => (t.username ? `${t.username} · ${t.has_password ? 'password stored' : 'no password'}` : <span class="muted">none</span>) },
        ...(session.get()?.me.role === 'admin' ? [{ key: 'reseller', label: 'Reseller', render: (t: Trunk) => resellerName(t.reseller_id) }] : []),
        ...(writable
          ? [
              {
                key: 'actions',
                label: '',
                render: (t: Trunk) =>
                  t.sandbox ? (
                    <span class="muted">the service's</span>
                  ) : (
                    <div class="row-actions">
                      <button type="button" onClick={() => setEditing(t)}>
                        Edit
                      </button>
                      <button type="button" class="danger" onClick={() => act(() => trunks.delete(t.id), 'Trunk deleted.', `Delete the trunk ${t.name}?`)}>
                        Delete
                      </button>
                    </div>
                  ),
              },
            ]
          : []),
      ]}
    >
      {watched && rows.some((t) => t.id === watched) && <TrunkFailures trunk={rows.find((t) => t.id === watched)!} nameOf={nameOf} onClose={() => setWatched(undefined)} />}
      {editing && <TrunkForm trunk={editing} all={rows} resellers={resellers.data?.data ?? []} onClose={() => setEditing(undefined)} onSaved={list.reload} />}
    </ListPage>
  );
}

const text = (f: FormData, name: string) => String(f.get(name) ?? '').trim();
const orNull = (v: string) => (v === '' ? null : v);
/** A number field: empty is "no limit" (null); what is not a number goes to the API as typed, which says what is wrong with it. */
const numberOrNull = (v: string): number | null => (v === '' ? null : Number.isFinite(Number(v)) ? Number(v) : (v as never));

function TrunkForm({ trunk, all, resellers, onClose, onSaved }: { trunk: Partial<Trunk>; all: Trunk[]; resellers: { id: string; name: string }[]; onClose: () => void; onSaved: () => void }) {
  const me = session.get()!.me;
  const [chosen, setResellerId] = useState(trunk.reseller_id ?? me.reseller_id ?? '');
  // An admin's resellers may arrive after the dialog opened: the first is chosen until one is picked.
  const resellerId = chosen || resellers[0]?.id || '';
  const others = all.filter((t) => t.reseller_id === resellerId && t.id !== trunk.id && !t.sandbox);
  return (
    <FormModal
      title={trunk.id ? `Edit ${trunk.name}` : 'Add a SIP trunk'}
      submit="Save"
      wide
      onClose={onClose}
      onSubmit={async (f) => {
        const password = String(f.get('password') ?? '');
        const body: TrunkBody = {
          reseller_id: resellerId,
          name: text(f, 'name'),
          address: text(f, 'address'),
          transport: text(f, 'transport') as TrunkBody['transport'],
          username: orNull(text(f, 'username')),
          from_domain: orNull(text(f, 'from_domain')),
          codecs: CODECS.filter((c) => f.get(`codec_${c}`) === 'on'),
          max_channels: numberOrNull(text(f, 'max_channels')),
          max_calls_per_second: numberOrNull(text(f, 'max_calls_per_second')),
          failover_trunk_id: orNull(text(f, 'failover_trunk_id')),
          transfer_method: text(f, 'transfer_method') as NonNullable<TrunkBody['transfer_method']>,
          // Left out: the stored password is kept (it is never shown).
          ...(password !== '' ? { password } : f.get('forget_password') === 'on' ? { password: null } : {}),
        };
        if (trunk.id) await trunks.replace(trunk.id, body);
        else await trunks.create(body);
        toast('Trunk saved.');
        onSaved();
      }}
    >
      {(at) => (
        <>
          <Field label="Name" error={at('/name')}>
            <input name="name" required maxLength={100} defaultValue={trunk.name ?? ''} />
          </Field>
          {me.role === 'admin' && !trunk.id && (
            <Field label="Reseller" error={at('/reseller_id')}>
              <select name="reseller_id" required value={resellerId} onChange={(e) => setResellerId(e.currentTarget.value)}>
                {resellers.map((r) => (
                  <option key={r.id} value={r.id}>
                    {r.name}
                  </option>
                ))}
              </select>
            </Field>
          )}
          <Field label="Address" hint="host or host:port (5060 when absent, 5061 for TLS)" error={at('/address')}>
            <input name="address" required placeholder="sip.carrier.example:5060" defaultValue={trunk.address ?? ''} />
          </Field>
          <Field label="Transport" hint="How SIP reaches the trunk (TLS: its certificate is verified); RTP is UDP" error={at('/transport')}>
            <select name="transport" defaultValue={trunk.transport ?? 'udp'}>
              <option value="udp">UDP</option>
              <option value="tcp">TCP</option>
              <option value="tls">TLS</option>
            </select>
          </Field>
          <Field label="Username" hint="For digest authentication, with the password" error={at('/username')}>
            <input name="username" autoComplete="off" defaultValue={trunk.username ?? ''} />
          </Field>
          <Field label="Password" hint={trunk.has_password ? 'A password is stored; leave empty to keep it' : 'Never shown again once saved'} error={at('/password')}>
            <input name="password" type="password" autoComplete="new-password" placeholder={trunk.has_password ? '(stored)' : ''} />
          </Field>
          {trunk.has_password && (
            <label class="field check">
              <input type="checkbox" name="forget_password" /> Remove the stored password
            </label>
          )}
          <Field label="From domain" hint="Default: the trunk's host" error={at('/from_domain')}>
            <input name="from_domain" defaultValue={trunk.from_domain ?? ''} />
          </Field>
          <Field label="Codecs" hint="Offered in this order" error={at('/codecs') ?? at('/codecs/0')}>
            <span class="toolbar">
              {CODECS.map((c) => (
                <label key={c} class="check">
                  <input type="checkbox" name={`codec_${c}`} defaultChecked={(trunk.codecs ?? CODECS).includes(c)} /> {c}
                </label>
              ))}
            </span>
          </Field>
          <Field label="Max channels" hint="Concurrent calls, across all workers; empty: no limit" error={at('/max_channels')}>
            <input name="max_channels" inputMode="numeric" defaultValue={trunk.max_channels?.toString() ?? ''} />
          </Field>
          <Field label="Max calls per second" hint="Empty: no limit" error={at('/max_calls_per_second')}>
            <input name="max_calls_per_second" inputMode="decimal" defaultValue={trunk.max_calls_per_second?.toString() ?? ''} />
          </Field>
          <Field label="Failover trunk" hint="Takes the calls this one is full for or fails (5xx, 408)" error={at('/failover_trunk_id')}>
            <select name="failover_trunk_id" defaultValue={trunk.failover_trunk_id ?? ''}>
              <option value="">None</option>
              {others.map((t) => (
                <option key={t.id} value={t.id} selected={t.id === trunk.failover_trunk_id}>
                  {t.name}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Transfers" hint="REFER: the carrier calls the person. Bridge: Dialer calls them on this trunk and joins the calls." error={at('/transfer_method')}>
            <select name="transfer_method" defaultValue={trunk.transfer_method ?? 'refer'}>
              <option value="refer">REFER (cold)</option>
              <option value="bridge">Bridge (warm)</option>
            </select>
          </Field>
        </>
      )}
    </FormModal>
  );
}

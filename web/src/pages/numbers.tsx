/** Outbound numbers: the caller IDs calls go out from, AVAILABLE or IN_USE as calls take and free them (kept live). */
import { useState } from 'preact/hooks';
import { numbers } from '../api/endpoints.js';
import type { OutboundNumber } from '../api/types.js';
import { FormModal, ListPage, useRowAction } from '../components/list-page.js';
import { Badge, Field, toast } from '../components/ui.js';
import { percent, when, whenShort } from '../lib/format.js';
import { useInterval, useLoad } from '../lib/use.js';
import { BASE, can } from '../session.js';

export default function NumbersPage() {
  const list = useLoad((signal) => numbers.list(signal), []);
  useInterval(list.reload, 3000);
  const act = useRowAction(list.reload);
  const [adding, setAdding] = useState(false);
  const writable = can('numbers', 'write');
  // By provider, then number: a steady order while statuses change live.
  const rows = [...(list.data?.data ?? [])].sort((a, b) => a.provider.localeCompare(b.provider) || a.phone_number.localeCompare(b.phone_number));
  const counts = (status: string) => rows.filter((n) => n.status === status).length;
  return (
    <ListPage<OutboundNumber>
      title="Numbers"
      subtitle={`${counts('AVAILABLE')} available · ${counts('IN_USE')} in use · ${counts('DISABLED')} disabled. Each call takes a free number of its provider as caller ID.`}
      action={writable && { label: 'Add a number', onClick: () => setAdding(true) }}
      list={list}
      rows={rows}
      caption="Outbound numbers"
      rowKey={(n) => n.id}
      empty="No numbers: calls wait until their provider has a free number."
      columns={[
        { key: 'phone', label: 'Number', render: (n) => n.phone_number },
        { key: 'provider', label: 'Provider', render: (n) => n.provider },
        { key: 'status', label: 'Status', render: (n) => <Badge value={n.status} /> },
        { key: 'lead', label: 'Call', render: (n) => (n.lead_id ? <a href={`${BASE}/leads/${n.lead_id}`}>the lead it calls</a> : '—') },
        { key: 'health', label: 'Answered · short calls', render: (n) => <Health number={n} /> },
        { key: 'channel', label: 'Channel', render: (n) => (n.channel === 'sandbox' ? <span class="badge badge-sandbox">sandbox</span> : n.channel) },
        { key: 'updated', label: 'Changed', render: (n) => when(n.updated_at) },
        ...(writable
          ? [
              {
                key: 'actions',
                label: '',
                render: (n: OutboundNumber) =>
                  n.status === 'IN_USE' ? (
                    <span class="muted">in a call</span>
                  ) : (
                    <div class="row-actions">
                      <button type="button" onClick={() => act(() => numbers.update(n, { status: n.status === 'DISABLED' ? 'AVAILABLE' : 'DISABLED' } as never), 'Number updated.')}>
                        {n.status === 'DISABLED' ? 'Enable' : 'Disable'}
                      </button>
                      <button type="button" class="danger" onClick={() => act(() => numbers.delete(n.id), 'Number deleted.', `Delete ${n.phone_number}?`)}>
                        Delete
                      </button>
                    </div>
                  ),
              },
            ]
          : []),
      ]}
    >
      {adding && <AddNumber onClose={() => setAdding(false)} onAdded={list.reload} />}
    </ListPage>
  );
}

/** The number's answer and short-call rates over its window, and its rest (docs/leads.md, "Outbound number"). */
function Health({ number: n }: { number: OutboundNumber }) {
  const h = n.health;
  if (!h) return <span class="muted">—</span>;
  return (
    <span title={`${h.calls} calls; the pool answers ${percent(h.pool_answer_rate)}`}>
      {h.calls === 0 ? <span class="muted">no calls yet</span> : `${percent(h.answer_rate)} · ${percent(h.short_call_rate)}`}
      {h.rested_until && (
        <>
          {' '}
          <span class="badge badge-warn" title={h.rest_reason ?? ''}>
            rested until {whenShort(h.rested_until)}
          </span>
        </>
      )}
    </span>
  );
}

function AddNumber({ onClose, onAdded }: { onClose: () => void; onAdded: () => void }) {
  return (
    <FormModal
      title="Add a number"
      submit="Add"
      onClose={onClose}
      onSubmit={async (f) => {
        await numbers.create({ phone_number: String(f.get('phone_number')).trim(), provider: String(f.get('provider')), status: 'AVAILABLE', channel: String(f.get('channel')) || 'voice' } as never);
        toast('Number added.');
        onAdded();
      }}
    >
      {(at) => (
        <>
          <Field label="Number" hint="E.164, e.g. +14155550123" error={at('/phone_number')}>
            <input name="phone_number" required pattern="\+[1-9][0-9]{1,14}" />
          </Field>
          <Field label="Provider" error={at('/provider')}>
            <select name="provider">
              <option>PROVIDER_A</option>
              <option>PROVIDER_B</option>
              <option>PROVIDER_C</option>
            </select>
          </Field>
          <Field label="Channel">
            <input name="channel" defaultValue="voice" />
          </Field>
        </>
      )}
    </FormModal>
  );
}

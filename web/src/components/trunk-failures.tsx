/**
 * A SIP trunk's recent failures (GET /trunks/{id}/failures), kept live: each refused INVITE with
 * its status code and reason, the lead it was for, and the trunk that took the call when this one
 * refused it before a failover.
 */
import { trunks } from '../api/endpoints.js';
import type { Trunk, TrunkFailure } from '../api/types.js';
import { when } from '../lib/format.js';
import { useInterval, useLoad } from '../lib/use.js';
import { BASE } from '../session.js';
import { Badge, Card, ErrorNote, Table } from './ui.js';

const tone = (status: number) => (status >= 500 || status === 408 ? 'bad' : 'warn');

export function TrunkFailures({ trunk, nameOf, onClose }: { trunk: Trunk; nameOf: (id: string | null) => string; onClose: () => void }) {
  const failures = useLoad((signal) => trunks.failures(trunk.id, signal), [trunk.id]);
  useInterval(failures.reload, 3000, [trunk.id]);
  return (
    <Card
      title={`Recent SIP failures · ${trunk.name}`}
      id="trunk-failures"
      actions={
        <button type="button" onClick={onClose}>
          Close
        </button>
      }
    >
      <ErrorNote error={failures.error} />
      <Table<TrunkFailure>
        caption={`Recent SIP failures of ${trunk.name}`}
        rows={failures.data?.data ?? []}
        rowKey={(f) => `${f.lead_id}:${f.attempt}:${f.failed_over_to ?? ''}`}
        empty={failures.data ? 'No failed calls through this trunk lately.' : 'Loading…'}
        columns={[
          { key: 'when', label: 'When', render: (f) => when(f.started_at) },
          { key: 'status', label: 'SIP status', render: (f) => <Badge kind="plain" tone={tone(f.sip_status)} value={String(f.sip_status)} /> },
          { key: 'reason', label: 'Reason', render: (f) => f.reason ?? <span class="muted">—</span> },
          {
            key: 'then',
            label: 'Then',
            render: (f) => (f.failed_over_to ? `failed over to ${nameOf(f.failed_over_to)}` : <Badge kind="outcome" value={f.outcome} />),
          },
          {
            key: 'lead',
            label: 'Lead',
            render: (f) => (
              <a href={`${BASE}/leads/${f.lead_id}`}>
                attempt {f.attempt}
              </a>
            ),
          },
        ]}
      />
    </Card>
  );
}

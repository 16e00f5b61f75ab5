/** Templates: the list, with a way to create one, edit, test in the browser, and push a lead. */
import { useState } from 'preact/hooks';
import { templates, tenants } from '../api/endpoints.js';
import type { Template } from '../api/types.js';
import { Badge } from '../components/ui.js';
import { ListPage } from '../components/list-page.js';
import { PushLead } from '../components/push-lead.js';
import { when } from '../lib/format.js';
import { useLoad } from '../lib/use.js';
import { BASE, can } from '../session.js';

export default function TemplatesPage() {
  const list = useLoad((signal) => templates.list({}, signal), []);
  const merchants = useLoad((signal) => (can('merchants', 'read') ? tenants.merchants(signal) : Promise.resolve(undefined)), []);
  const [pushFor, setPushFor] = useState<string>();
  const merchantName = (id: string | null) => (id ? (merchants.data?.data.find((m) => m.id === id)?.name ?? id) : undefined);
  return (
    <ListPage<Template>
      title="Templates"
      subtitle="A template is a conversation: nodes with what the agent is told, the functions it may call, and where each leads."
      actions={
        can('templates', 'write') && (
          <a class="button primary" href={`${BASE}/templates/new`}>
            New template
          </a>
        )
      }
      list={list}
      caption="Templates"
      rowKey={(t) => t.id}
      empty="No templates yet. Create one, or call the simulated customer from the overview: it makes a sandbox template."
      columns={[
        { key: 'name', label: 'Name', render: (t) => <a href={`${BASE}/templates/${t.id}`}>{t.name}</a> },
        { key: 'scope', label: 'Belongs to', render: (t) => (t.merchant_id ? <>merchant {merchantName(t.merchant_id)}</> : <Badge kind="plain" value="reseller level" />) },
        { key: 'nodes', label: 'Nodes', class: 'num', render: (t) => t.flow.nodes.length },
        { key: 'updated', label: 'Updated', render: (t) => when(t.updated_at) },
        {
          key: 'actions',
          label: '',
          render: (t) => (
            <div class="row-actions">
              <a class="button" href={`${BASE}/templates/${t.id}?test=1`}>
                Test in browser
              </a>
              {can('leads', 'write') && (
                <button type="button" onClick={() => setPushFor(t.id)}>
                  Push a lead
                </button>
              )}
            </div>
          ),
        },
      ]}
    >
      {pushFor && <PushLead templates={list.data?.data ?? []} templateId={pushFor} onClose={() => setPushFor(undefined)} onPushed={() => undefined} />}
    </ListPage>
  );
}

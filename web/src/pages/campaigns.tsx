/** Campaigns: each with its status and a progress bar (kept live); "New campaign" imports a CSV as one. */
import { useState } from 'preact/hooks';
import { campaigns, type Campaign, type CampaignSummary } from '../api/campaigns.js';
import { templates as templatesApi } from '../api/endpoints.js';
import { CampaignStatus, ProgressBar } from '../components/campaign-progress.js';
import { CampaignImport } from '../components/campaign-import.js';
import { ErrorNote, PageHeader, Pager, Table } from '../components/ui.js';
import { when } from '../lib/format.js';
import { useInterval, useLoad } from '../lib/use.js';
import { BASE, can } from '../session.js';
import { useLocation } from 'preact-iso';

const POLL_MS = 3000;

export default function CampaignsPage() {
  const [page, setPage] = useState(1);
  const [creating, setCreating] = useState(false);
  const { route } = useLocation();
  // The list carries no progress: each campaign of the page is read with it.
  const list = useLoad(async (signal) => {
    const summaries = await campaigns.list(page, signal);
    const full = await Promise.all(summaries.data.map((c) => campaigns.get(c.id, signal).catch(() => undefined)));
    return { ...summaries, progress: new Map(full.flatMap((c) => (c ? [[c.id, c.progress] as const] : []))) };
  }, [page]);
  useInterval(list.reload, POLL_MS);
  const tpls = useLoad((signal) => (creating ? templatesApi.list({}, signal) : Promise.resolve(undefined)), [creating]);
  const rows = list.data?.data ?? [];
  return (
    <div>
      <PageHeader title="Campaigns" subtitle="Named sets of leads run with a cap on live calls, a pace, dates and a breaker.">
        {can('campaigns', 'write') && can('leads', 'write') && (
          <button type="button" class="primary" id="new-campaign" onClick={() => setCreating(true)}>
            New campaign from a CSV
          </button>
        )}
      </PageHeader>
      <section class="card">
        <ErrorNote error={list.error} />
        <Table<CampaignSummary>
          caption="Campaigns"
          rows={rows}
          rowKey={(c) => c.id}
          empty={list.loading && !list.data ? 'Loading…' : 'No campaign yet: "New campaign from a CSV" creates one from a file of leads.'}
          columns={[
            { key: 'name', label: 'Name', render: (c) => <a href={`${BASE}/campaigns/${c.id}`}>{c.name}</a> },
            { key: 'status', label: 'Status', render: (c) => <CampaignStatus status={c.status} /> },
            { key: 'progress', label: 'Progress', class: 'progress-cell', render: (c) => <ProgressBar label={c.name} progress={list.data?.progress.get(c.id) as Campaign['progress'] | undefined} /> },
            { key: 'template', label: 'Template', render: (c) => c.template },
            { key: 'limits', label: 'Cap · pace', render: (c) => `${c.max_concurrent_calls ?? '—'} live · ${c.max_calls_per_second ?? '—'}/s` },
            { key: 'created', label: 'Created', render: (c) => when(c.created_at) },
          ]}
        />
        {list.data && list.data.total > list.data.page_size && <Pager page={page} pageSize={list.data.page_size} total={list.data.total} onPage={setPage} />}
      </section>
      {creating && tpls.data && (
        <CampaignImport
          templates={tpls.data.data}
          onClose={() => setCreating(false)}
          onCreated={(id) => {
            setCreating(false);
            route(`${BASE}/campaigns/${id}`);
          }}
        />
      )}
    </div>
  );
}

/** One campaign: its counters (read again every 2 s), pace, live calls and breaker; Pause, Resume, Stop; its results and their CSV. */
import { useState } from 'preact/hooks';
import { campaigns, type Campaign, type ResultList } from '../api/campaigns.js';
import { CampaignStatus, ProgressBar } from '../components/campaign-progress.js';
import { downloadCsv } from '../components/download.js';
import { Badge, Banner, Card, ErrorNote, Modal, PageHeader, Pager, Spinner, Stat, Table, toast } from '../components/ui.js';
import { count, money, percent, seconds, when } from '../lib/format.js';
import { useInterval, useLoad } from '../lib/use.js';
import { BASE, can } from '../session.js';

const POLL_MS = 2000;

export default function CampaignPage({ id }: { id: string }) {
  const c = useLoad((signal) => campaigns.get(id, signal), [id]);
  const [page, setPage] = useState(1);
  const results = useLoad((signal) => campaigns.results(id, page, signal), [id, page]);
  const live = c.data && c.data.status !== 'completed' && c.data.status !== 'stopped';
  useInterval(
    () => {
      c.reload();
      results.reload();
    },
    POLL_MS,
    [],
  );
  const [confirmStop, setConfirmStop] = useState(false);
  const [acting, setActing] = useState(false);
  if (!c.data) return c.error ? <ErrorNote error={c.error} /> : <Spinner />;
  const k = c.data;
  const writable = can('campaigns', 'write');
  const act = async (what: 'pause' | 'resume' | 'stop') => {
    setActing(true);
    try {
      await campaigns[what](id);
      toast(what === 'pause' ? 'Paused: no new call starts' : what === 'resume' ? 'Resumed' : 'Stopped: its queued leads are aborted');
      c.reload();
    } catch (err) {
      toast((err as Error).message, 'bad');
    } finally {
      setActing(false);
      setConfirmStop(false);
    }
  };
  const exportCsv = () => downloadCsv(campaigns.resultsPath(id), {}, `campaign-${id}-results.csv`, { accept: 'text/csv' }).catch((err: Error) => toast(err.message, 'bad'));
  const p = k.progress;
  return (
    <div>
      <PageHeader
        title={k.name}
        subtitle={
          <>
            <a href={`${BASE}/campaigns`}>Campaigns</a> · template <a href={`${BASE}/templates/${k.template_id}`}>{k.template}</a> · created {when(k.created_at)}
          </>
        }
      >
        <CampaignStatus status={k.status} />
        {writable && (k.status === 'running' || k.status === 'scheduled') && (
          <button type="button" id="pause" disabled={acting} onClick={() => act('pause')}>
            Pause
          </button>
        )}
        {writable && k.status === 'paused' && (
          <button type="button" id="resume" class="primary" disabled={acting} onClick={() => act('resume')}>
            Resume
          </button>
        )}
        {writable && live && (
          <button type="button" id="stop" class="danger" disabled={acting} onClick={() => setConfirmStop(true)}>
            Stop…
          </button>
        )}
      </PageHeader>
      {k.status === 'paused' && (
        <Banner tone="warn" id="paused-reason">
          {k.paused_reason ? k.paused_reason.charAt(0).toUpperCase() + k.paused_reason.slice(1) : 'Paused'}. No new call starts until it is resumed; calls in flight end normally.
        </Banner>
      )}
      {k.status === 'stopped' && <Banner tone="bad">Stopped {when(k.stopped_at)}: its queued leads were aborted.</Banner>}
      <Card title="Progress" id="campaign-progress">
        <ProgressBar label={k.name} progress={p} />
      </Card>
      <div class="stats" id="campaign-stats">
        <Stat id="stat-total" label="Leads" value={count(p.total)} hint={`${count(p.queued)} queued · ${count(p.in_progress)} in progress · ${count(p.finished)} finished`} />
        <Stat id="stat-live" label="Live calls" value={count(p.live_calls)} hint={k.max_concurrent_calls ? `at most ${k.max_concurrent_calls}` : 'no cap of its own'} />
        <Stat label="Pace" value={k.max_calls_per_second ? `${k.max_calls_per_second}/s` : '—'} hint={k.max_calls_per_second ? 'call starts, spread evenly' : 'no pace of its own'} />
        <Stat label="Answer rate" value={percent(p.answer_rate)} hint="of the finished calls" />
        <Stat label="Average duration" value={seconds(p.avg_duration)} />
        <Stat label="Cost" value={money(p.cost)} />
        <Stat label="Estimated finish" value={p.estimated_finish_at ? when(p.estimated_finish_at) : '—'} hint={p.queued === 0 ? 'nothing queued' : 'at the last ten minutes’ rate'} />
        <Stat
          id="stat-breaker"
          label="Breaker"
          value={!k.circuit_breaker ? 'off' : k.status === 'paused' && k.paused_reason?.includes('breaker') ? 'tripped' : 'armed'}
          hint={k.circuit_breaker ? `pauses above ${Math.round(k.circuit_breaker.failure_ratio * 100)} % failures over ${k.circuit_breaker.window_seconds} s (≥ ${k.circuit_breaker.min_calls} calls)` : 'no breaker set'}
        />
      </div>
      {Object.keys(p.by_outcome).length > 0 && (
        <Card title="Outcomes">
          <p class="outcomes">
            {Object.entries(p.by_outcome).map(([o, n]) => (
              <span key={o}>
                <Badge value={o} kind="outcome" /> {count(n)}{' '}
              </span>
            ))}
          </p>
        </Card>
      )}
      <Card
        title="Results"
        id="campaign-results"
        actions={
          <button type="button" id="export-csv" onClick={exportCsv}>
            Export CSV
          </button>
        }
      >
        <ErrorNote error={results.error} />
        <Table<ResultList['data'][number]>
          caption="Results"
          rows={results.data?.data ?? []}
          rowKey={(r) => r.lead_id}
          empty="No leads in this campaign."
          columns={[
            { key: 'lead', label: 'Lead', render: (r) => <a href={`${BASE}/leads/${r.lead_id}`}>{r.request_id}</a> },
            { key: 'number', label: 'Number', render: (r) => r.number ?? '—' },
            { key: 'status', label: 'Status', render: (r) => <Badge value={r.status} /> },
            { key: 'outcome', label: 'Outcome', render: (r) => <Badge value={r.outcome} kind="outcome" /> },
            { key: 'attempts', label: 'Attempts', class: 'num', render: (r) => r.attempts },
            { key: 'duration', label: 'Duration', class: 'num', render: (r) => seconds(r.duration_seconds) },
            { key: 'cost', label: 'Cost', class: 'num', render: (r) => money(r.cost) },
            { key: 'summary', label: 'Summary', render: (r) => (typeof r.analysis.summary === 'string' ? r.analysis.summary : <span class="muted">—</span>) },
          ]}
        />
        {results.data && results.data.total > results.data.page_size && <Pager page={page} pageSize={results.data.page_size} total={results.data.total} onPage={setPage} />}
      </Card>
      <Modal title="Stop the campaign?" open={confirmStop} onClose={() => setConfirmStop(false)}>
        <p>
          Its {count(p.queued)} queued leads finish as <code>aborted</code> ("campaign stopped") and it cannot be resumed. Calls in flight end normally.
        </p>
        <div class="form-actions">
          <button type="button" onClick={() => setConfirmStop(false)}>
            Keep it running
          </button>
          <button type="button" class="danger" id="confirm-stop" disabled={acting} onClick={() => act('stop')}>
            Stop the campaign
          </button>
        </div>
      </Modal>
    </div>
  );
}

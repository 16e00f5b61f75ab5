/**
 * The overview: calls now and today (the day's counts from POST /analytics, the cost and the
 * failures from GET /overview), calls over time, call outcomes, recent failures. Every figure
 * counts calls as docs/dashboard.md defines them ("What the figures count").
 */
import { useMemo, useState } from 'preact/hooks';
import { analytics, overview } from '../api/endpoints.js';
import { Chart, PALETTE } from '../components/chart.js';
import { Badge, Card, ErrorNote, PageHeader, Stat, Table } from '../components/ui.js';
import { SandboxCall } from '../components/sandbox.js';
import { CALLS, dayFigures, dayRequests, nothingIn, type DayFigures } from '../lib/figures.js';
import { count, daysAgo, isoDate, money, percent, seconds, viewerTimeZone, when, ago } from '../lib/format.js';
import { useInterval, useLoad } from '../lib/use.js';
import { BASE } from '../session.js';

type Duration = { avg: number | null; min: number | null; max: number | null; total: number };
type TimeCount = { date: string; count: number };
type Share = { key: string; count: number; percentage: number };

/** The day's figures (web/src/lib/figures.ts), asked of POST /analytics as any client would. */
export async function todayFigures(): Promise<DayFigures> {
  const r = dayRequests(isoDate(new Date()), viewerTimeZone);
  const [calls, statuses, connected, duration] = await Promise.all([
    analytics.query<{ count: number }>(r.calls),
    analytics.query<Share>(r.statuses),
    analytics.query<Share>(r.connected),
    analytics.query<Duration>(r.duration),
  ]);
  return dayFigures({ calls: calls.data, statuses: statuses.data, connected: connected.data, duration: duration.data });
}

export default function OverviewPage() {
  const [days, setDays] = useState<7 | 30>(7);
  const now = useLoad((signal) => overview.get(viewerTimeZone, signal), []);
  const today = useLoad(() => todayFigures(), []);
  const live = useLoad((signal) => overview.liveCalls(signal), []);
  const series = useLoad(
    () => analytics.query<TimeCount>({ query_type: 'calls_over_time', granularity: 'day', timezone: viewerTimeZone, ...CALLS, filters: { date_from: daysAgo(days - 1), date_to: isoDate(new Date()) }, page_size: 100 }),
    [days],
  );
  const outcomes = useLoad(
    () => analytics.query<Share>({ query_type: 'outcome_distribution', timezone: viewerTimeZone, ...CALLS, filters: { date_from: daysAgo(days - 1), date_to: isoDate(new Date()) }, page_size: 20 }),
    [days],
  );
  useInterval(() => {
    now.reload();
    live.reload();
    today.reload();
    // Today's bar counts the same calls as "Calls today": both move together.
    series.reload();
  }, 5000);

  const t = today.data;
  const seriesOption = useMemo(() => {
    const rows = series.data?.data ?? [];
    return {
      color: PALETTE,
      tooltip: { trigger: 'axis' },
      grid: { left: 40, right: 16, top: 16, bottom: 28 },
      xAxis: { type: 'category', data: rows.map((r) => r.date.slice(5)) },
      yAxis: { type: 'value', minInterval: 1 },
      series: [{ type: 'bar', name: 'Calls', data: rows.map((r) => r.count), barMaxWidth: 28 }],
    };
  }, [series.data]);
  const outcomeOption = useMemo(() => {
    const rows = outcomes.data?.data ?? [];
    // Bars, largest first, each named: a dozen outcomes read at a glance (a pie needs a legend to decode).
    const sorted = [...rows].sort((a, b) => a.count - b.count);
    return {
      color: PALETTE,
      tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' } },
      grid: { left: 8, right: 40, top: 8, bottom: 8, containLabel: true },
      xAxis: { type: 'value', minInterval: 1, axisLabel: { show: false }, splitLine: { show: false } },
      yAxis: { type: 'category', data: sorted.map((r) => r.key), axisTick: { show: false } },
      series: [{ type: 'bar', name: 'Calls', data: sorted.map((r) => r.count), barMaxWidth: 16, label: { show: true, position: 'right' } }],
    };
  }, [outcomes.data]);

  return (
    <div>
      <PageHeader title="Overview" subtitle={`Today since midnight (${viewerTimeZone}).`} />
      <SandboxCall />
      <div class="stats">
        <Stat id="live-calls" label="Live calls now" value={count(now.data?.live_calls)} />
        <Stat id="calls-today" label="Calls today" value={count(t?.calls)} hint={t ? `dialled since midnight, ${count(t.live)} live` : undefined} />
        <Stat
          id="answer-rate"
          label="Answer rate"
          value={t ? percent(t.answerRate) : '—'}
          hint={t ? (t.ended ? `${count(t.answered)} of ${count(t.ended)} ended calls answered` : 'no call has ended yet') : undefined}
        />
        <Stat id="avg-duration" label="Average duration" value={seconds(t?.avgDurationSeconds)} />
        <Stat id="cost-today" label="Cost today" value={money(now.data?.cost_since)} />
      </div>
      <ErrorNote error={now.error ?? today.error} />
      <div class="grid-2">
        <Card
          title="Calls over time"
          actions={
            <div class="segmented" role="group" aria-label="Period">
              <button type="button" aria-pressed={days === 7} onClick={() => setDays(7)}>
                7 days
              </button>
              <button type="button" aria-pressed={days === 30} onClick={() => setDays(30)}>
                30 days
              </button>
            </div>
          }
        >
          {nothingIn(series.data?.data) ? (
            <div class="empty chart-empty" id="chart-calls-empty">
              No calls in the last {days} days.
            </div>
          ) : (
            <Chart id="chart-calls" label={`Calls per day, last ${days} days`} option={seriesOption} />
          )}
        </Card>
        <Card title={`Call outcomes, last ${days} days`}>
          {outcomes.data && outcomes.data.data.length === 0 ? (
            <div class="empty chart-empty" id="chart-outcomes-empty">
              No call ended with an outcome in the last {days} days.
            </div>
          ) : (
            <Chart id="chart-outcomes" label="Call outcomes" option={outcomeOption} />
          )}
        </Card>
      </div>
      <Card title={`Live calls (${count(live.data?.total)})`}>
        <Table
          rows={live.data?.data ?? []}
          rowKey={(r) => r.lead_id}
          empty="No call is in progress."
          columns={[
            { key: 'request_id', label: 'Request', render: (r) => <a href={`${BASE}/leads/${r.lead_id}`}>{r.request_id}</a> },
            { key: 'template', label: 'Template', render: (r) => r.template },
            { key: 'to', label: 'To', render: (r) => r.to_number ?? '—' },
            { key: 'provider', label: 'Line', render: (r) => r.provider ?? '—' },
            { key: 'started', label: 'Started', render: (r) => ago(r.started_at) },
          ]}
        />
      </Card>
      <div class="grid-2 grid-top">
        <Card title="Recent failed webhooks">
          <Table
            rows={now.data?.failures.webhooks ?? []}
            rowKey={(r) => r.id}
            empty="No delivery has failed."
            columns={[
              { key: 'lead', label: 'Lead', render: (r) => <a href={`${BASE}/leads/${r.lead_id}#webhooks`}>{r.request_id}</a> },
              { key: 'url', label: 'URL', render: (r) => <span class="truncate" title={r.url}>{r.url}</span> },
              { key: 'error', label: 'Last error', render: (r) => r.error ?? (r.status_code ? `HTTP ${r.status_code}` : '—') },
              { key: 'at', label: 'Failed', render: (r) => ago(r.failed_at) },
            ]}
          />
        </Card>
        <Card title="Recent failed leads">
          <Table
            rows={now.data?.failures.leads ?? []}
            rowKey={(r) => r.id}
            empty="No lead ended in error or failed a pre-check."
            columns={[
              { key: 'lead', label: 'Lead', render: (r) => <a href={`${BASE}/leads/${r.id}`}>{r.request_id}</a> },
              { key: 'outcome', label: 'Outcome', render: (r) => <Badge kind="outcome" value={r.outcome} /> },
              // The reason, when any failure has one (a column of dashes says nothing).
              ...((now.data?.failures.leads ?? []).some((r) => r.error) ? [{ key: 'error', label: 'Why', render: (r: { error: string | null }) => <span class="truncate" title={r.error ?? ''}>{r.error ?? '—'}</span> }] : []),
              { key: 'at', label: 'When', render: (r) => <span title={when(r.at)}>{ago(r.at)}</span> },
            ]}
          />
        </Card>
      </div>
    </div>
  );
}

/**
 * Analytics: the twelve query types of POST /analytics, each as a chart (or a table), with every
 * filter the API takes (payload filters included), and a CSV of each. Asked with `calls_only`: the
 * counts are calls (dialled attempts), as on the overview; what each card counts is in
 * docs/dashboard.md ("What the figures count"). A card with nothing to draw says so.
 */
import { useMemo, useState } from 'preact/hooks';
import { analytics, templates, tenants } from '../api/endpoints.js';
import type { AnalyticsBody, AnalyticsFilters, QueryType } from '../api/types.js';
import { QUERY_TYPES } from '../../../src/analytics/schemas.js';
import { csvLine } from '../../../src/lib/csv.js';
import { Chart, PALETTE } from '../components/chart.js';
import { saveBlob } from '../components/download.js';
import { Card, ErrorNote, Field, PageHeader, Spinner, Table } from '../components/ui.js';
import { CALLS } from '../lib/figures.js';
import { count, daysAgo, isoDate, seconds, viewerTimeZone } from '../lib/format.js';
import { useLoad } from '../lib/use.js';
import { can, session } from '../session.js';
import { NamedSelect } from '../components/list-page.js';

type Row = Record<string, unknown>;
type Granularity = 'hour' | 'day' | 'week' | 'month';

const TITLES: Record<QueryType, string> = {
  call_count: 'Calls',
  call_duration: 'Call duration',
  outcome_distribution: 'Call outcomes',
  sentiment_distribution: 'Sentiment',
  status_distribution: 'Lead statuses',
  calls_over_time: 'Calls over time',
  avg_duration_over_time: 'Average duration over time',
  top_outcomes: 'Top call outcomes',
  retry_analysis: 'Retries',
  provider_breakdown: 'Providers',
  hourly_heatmap: 'Hour and weekday',
  conversion_funnel: 'Funnel (leads)',
};
const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
const SENTIMENT_COLORS: Record<string, string> = { negative: '#c0392b', neutral: '#95a5a6', positive: '#16a085' };

const num = (v: unknown) => (typeof v === 'number' ? v : Number(v ?? 0));
const str = (v: unknown) => String(v ?? '');

/** A key's share of all the rows' counts, as the legend shows it. */
function share(rows: Row[], key: string): string {
  const total = rows.reduce((sum, r) => sum + num(r.count), 0);
  const row = rows.find((r) => str(r.key) === key);
  return total && row ? `${((num(row.count) / total) * 100).toFixed(1)} %` : '';
}

const allZero = (rows: Row[], column: string) => rows.every((r) => num(r[column]) === 0);

/**
 * What a card says instead of a chart when its rows hold nothing to draw (a pie of zeros would
 * draw equal slices, a series of zeros a flat line); undefined when there is something.
 */
export function emptyFor(type: QueryType, rows: Row[]): string | undefined {
  switch (type) {
    case 'call_count':
      return undefined;
    case 'call_duration':
      return rows[0]?.avg === null || rows[0]?.avg === undefined ? 'No call with a duration matches the filters.' : undefined;
    case 'outcome_distribution':
    case 'top_outcomes':
      return rows.length === 0 ? 'No call matching the filters ended with an outcome.' : undefined;
    case 'sentiment_distribution':
      return allZero(rows, 'count') ? 'No call with a sentiment matches the filters.' : undefined;
    case 'status_distribution':
    case 'conversion_funnel':
      return allZero(rows, 'count') ? 'No lead matches the filters.' : undefined;
    case 'calls_over_time':
    case 'hourly_heatmap':
      return allZero(rows, 'count') ? 'No call matches the filters.' : undefined;
    case 'avg_duration_over_time':
      return allZero(rows, 'avg_duration') ? 'No call with a duration matches the filters.' : undefined;
    case 'retry_analysis':
      return rows.length === 0 ? 'No finished lead matching the filters was dialled.' : undefined;
    case 'provider_breakdown':
      return rows.length === 0 ? 'No call matches the filters.' : undefined;
  }
}

/** The ECharts option that draws a query type's rows; undefined for the ones shown as figures. */
export function optionFor(type: QueryType, rows: Row[]): Record<string, unknown> | undefined {
  const base = { color: PALETTE, tooltip: { trigger: 'item' }, grid: { left: 48, right: 24, top: 24, bottom: 32, containLabel: true } };
  switch (type) {
    case 'call_count':
      return undefined;
    case 'call_duration': {
      const r = rows[0] ?? {};
      return { ...base, tooltip: { trigger: 'axis' }, xAxis: { type: 'category', data: ['min', 'avg', 'max'] }, yAxis: { type: 'value', name: 's' }, series: [{ type: 'bar', barMaxWidth: 40, data: [num(r.min), num(r.avg), num(r.max)] }] };
    }
    case 'outcome_distribution':
    case 'sentiment_distribution':
      return {
        ...base,
        // Every slice named beside the ring (a legend paged under it hid most outcomes).
        legend: { type: 'scroll', orient: 'vertical', right: 8, top: 'middle', formatter: (name: string) => `${name}  ${share(rows, name)}` },
        series: [
          {
            type: 'pie',
            radius: ['38%', '66%'],
            center: ['30%', '50%'],
            label: { show: false },
            data: rows.map((r) => ({ name: str(r.key), value: num(r.count), ...(type === 'sentiment_distribution' ? { itemStyle: { color: SENTIMENT_COLORS[str(r.key)] } } : {}) })),
          },
        ],
      };
    case 'status_distribution':
      return { ...base, tooltip: { trigger: 'axis' }, xAxis: { type: 'category', axisLabel: { interval: 0 }, data: rows.map((r) => str(r.key)) }, yAxis: { type: 'value', minInterval: 1 }, series: [{ type: 'bar', barMaxWidth: 40, data: rows.map((r) => num(r.count)) }] };
    case 'top_outcomes':
      return { ...base, tooltip: { trigger: 'axis' }, xAxis: { type: 'value', minInterval: 1 }, yAxis: { type: 'category', inverse: true, data: rows.map((r) => str(r.key)) }, series: [{ type: 'bar', barMaxWidth: 22, data: rows.map((r) => num(r.count)) }] };
    case 'calls_over_time':
      return { ...base, tooltip: { trigger: 'axis' }, xAxis: { type: 'category', data: rows.map((r) => str(r.date)) }, yAxis: { type: 'value', minInterval: 1 }, series: [{ type: 'bar', name: 'Calls', barMaxWidth: 24, data: rows.map((r) => num(r.count)) }] };
    case 'avg_duration_over_time':
      return { ...base, tooltip: { trigger: 'axis' }, xAxis: { type: 'category', data: rows.map((r) => str(r.date)) }, yAxis: { type: 'value', name: 's' }, series: [{ type: 'line', name: 'Average duration (s)', smooth: true, data: rows.map((r) => num(r.avg_duration)) }] };
    case 'retry_analysis':
      return {
        ...base,
        tooltip: { trigger: 'axis' },
        legend: { bottom: 0 },
        xAxis: { type: 'category', data: rows.map((r) => `${str(r.attempts)} ${num(r.attempts) === 1 ? 'attempt' : 'attempts'}`) },
        yAxis: [{ type: 'value', minInterval: 1, name: 'leads' }, { type: 'value', min: 0, max: 100, name: '%' }],
        series: [
          { type: 'bar', name: 'Leads', barMaxWidth: 32, data: rows.map((r) => num(r.count)) },
          { type: 'line', name: 'Success rate (%)', yAxisIndex: 1, data: rows.map((r) => Math.round(num(r.success_rate) * 1000) / 10) },
        ],
      };
    case 'provider_breakdown':
      return {
        ...base,
        tooltip: { trigger: 'axis' },
        legend: { bottom: 0 },
        xAxis: { type: 'category', data: rows.map((r) => str(r.provider)) },
        yAxis: [{ type: 'value', minInterval: 1, name: 'calls' }, { type: 'value', name: 's' }],
        series: [
          { type: 'bar', name: 'Calls', barMaxWidth: 32, data: rows.map((r) => num(r.count)) },
          { type: 'line', name: 'Average duration (s)', yAxisIndex: 1, data: rows.map((r) => (r.avg_duration === null ? null : num(r.avg_duration))) },
        ],
      };
    case 'hourly_heatmap': {
      // The scale tops out at the 95th percentile of the busy cells: one burst (a bulk import)
      // would otherwise wash every other hour out to the same pale blue.
      const counts = rows.map((r) => num(r.count)).filter((n) => n > 0).sort((a, b) => a - b);
      const max = Math.max(1, counts[Math.floor(0.95 * (counts.length - 1))] ?? 1);
      return {
        ...base,
        tooltip: { position: 'top' },
        grid: { left: 48, right: 16, top: 16, bottom: 72, containLabel: true },
        xAxis: { type: 'category', data: Array.from({ length: 24 }, (_, h) => String(h)), splitArea: { show: true } },
        yAxis: { type: 'category', data: WEEKDAYS, inverse: true, splitArea: { show: true } },
        visualMap: { min: 0, max, orient: 'horizontal', left: 'center', bottom: 0, text: [`${max}+`, '0'], inRange: { color: ['#eef2fb', '#2457c5'] }, outOfRange: { color: '#163a8a' } },
        series: [{ type: 'heatmap', data: rows.map((r) => [num(r.hour), num(r.weekday ?? 1) - 1, num(r.count)]) }],
      };
    }
    case 'conversion_funnel':
      return { ...base, series: [{ type: 'funnel', sort: 'none', left: '10%', width: '80%', minSize: '24%', label: { show: true, position: 'inside', formatter: '{b}: {c}' }, data: rows.map((r) => ({ name: str(r.stage), value: num(r.count) })) }] };
  }
}

interface FilterState {
  date_from: string;
  date_to: string;
  template_id: string;
  merchant_id: string;
  reseller_id: string;
  min_duration: string;
  max_duration: string;
  sentiment_min: string;
  sentiment_max: string;
  payload: { key: string; value: string }[];
  granularity: Granularity;
  timezone: string;
}

/** The request body a query type is asked with: the filters as the API names them. */
export function bodyFor(type: QueryType, f: FilterState): AnalyticsBody {
  const filters: Record<string, unknown> = {};
  for (const k of ['date_from', 'date_to', 'template_id', 'merchant_id', 'reseller_id'] as const) if (f[k]) filters[k] = f[k];
  for (const k of ['min_duration', 'max_duration'] as const) if (f[k] !== '') filters[k] = Number(f[k]);
  for (const k of ['sentiment_min', 'sentiment_max'] as const) if (f[k] !== '') filters[k] = Number(f[k]);
  const payload = Object.fromEntries(f.payload.filter((p) => p.key.trim()).map((p) => [p.key.trim(), p.value]));
  if (Object.keys(payload).length) filters.payload_filters = payload;
  return {
    query_type: type,
    filters: filters as AnalyticsFilters,
    timezone: f.timezone,
    page_size: 1000,
    ...CALLS,
    ...(type === 'calls_over_time' || type === 'avg_duration_over_time' ? { granularity: f.granularity } : {}),
    ...(type === 'hourly_heatmap' ? { by_weekday: true } : {}),
  };
}

export default function AnalyticsPage() {
  const me = session.get()!.me;
  const [draft, setDraft] = useState<FilterState>({
    date_from: daysAgo(29),
    date_to: isoDate(new Date()),
    template_id: '',
    merchant_id: '',
    reseller_id: '',
    min_duration: '',
    max_duration: '',
    sentiment_min: '',
    sentiment_max: '',
    payload: [],
    granularity: 'day',
    timezone: viewerTimeZone,
  });
  const [applied, setApplied] = useState(draft);
  const tpls = useLoad((signal) => templates.list({}, signal), []);
  const merchants = useLoad((signal) => (can('merchants', 'read') ? tenants.merchants(signal) : Promise.resolve(undefined)), []);
  const resellers = useLoad((signal) => (me.role === 'admin' ? tenants.resellers(signal) : Promise.resolve(undefined)), []);
  const set = <K extends keyof FilterState>(k: K, v: FilterState[K]) => setDraft((d) => ({ ...d, [k]: v }));

  return (
    <div>
      <PageHeader
        title="Analytics"
        subtitle="A call is a dialled attempt (a lead never dialled is none); statuses and the funnel count leads. Test and playground calls are left out. Every chart has a table and a CSV."
      />
      <section class="card">
        <form
          class="toolbar analytics-filters"
          onSubmit={(e) => {
            e.preventDefault();
            setApplied(draft);
          }}
        >
          <Field label="From">
            <input type="date" name="date_from" value={draft.date_from} onInput={(e) => set('date_from', e.currentTarget.value)} />
          </Field>
          <Field label="To">
            <input type="date" name="date_to" value={draft.date_to} onInput={(e) => set('date_to', e.currentTarget.value)} />
          </Field>
          <Field label="Template">
            <NamedSelect name="template_id" none="All" items={tpls.data?.data} value={draft.template_id ?? ''} onChange={(v) => set('template_id', v)} />
          </Field>
          {merchants.data && (
            <Field label="Merchant">
              <select name="merchant_id" value={draft.merchant_id} onChange={(e) => set('merchant_id', e.currentTarget.value)}>
                <option value="">All</option>
                {merchants.data.data.map((m) => (
                  <option key={m.id} value={m.id}>
                    {m.name}
                  </option>
                ))}
              </select>
            </Field>
          )}
          {resellers.data && (
            <Field label="Reseller">
              <select name="reseller_id" value={draft.reseller_id} onChange={(e) => set('reseller_id', e.currentTarget.value)}>
                <option value="">All</option>
                {resellers.data.data.map((r) => (
                  <option key={r.id} value={r.id}>
                    {r.name}
                  </option>
                ))}
              </select>
            </Field>
          )}
          <Field label="Duration from (s)">
            <input type="number" min={0} step={1} name="min_duration" value={draft.min_duration} onInput={(e) => set('min_duration', e.currentTarget.value)} />
          </Field>
          <Field label="Duration to (s)">
            <input type="number" min={0} step={1} name="max_duration" value={draft.max_duration} onInput={(e) => set('max_duration', e.currentTarget.value)} />
          </Field>
          <Field label="Sentiment from">
            <input type="number" min={0} max={1} step={0.05} name="sentiment_min" value={draft.sentiment_min} onInput={(e) => set('sentiment_min', e.currentTarget.value)} />
          </Field>
          <Field label="Sentiment to">
            <input type="number" min={0} max={1} step={0.05} name="sentiment_max" value={draft.sentiment_max} onInput={(e) => set('sentiment_max', e.currentTarget.value)} />
          </Field>
          <Field label="Buckets">
            <select name="granularity" value={draft.granularity} onChange={(e) => set('granularity', e.currentTarget.value as Granularity)}>
              <option value="hour">hour</option>
              <option value="day">day</option>
              <option value="week">week</option>
              <option value="month">month</option>
            </select>
          </Field>
          <Field label="Time zone">
            <input name="timezone" value={draft.timezone} onInput={(e) => set('timezone', e.currentTarget.value)} />
          </Field>
          <div class="payload-filters field-wide">
            <span class="field-label">Payload filters</span>
            {draft.payload.map((p, i) => (
              <div key={i} class="payload-filter">
                <input aria-label="Payload key" placeholder="key, e.g. campaign" value={p.key} onInput={(e) => set('payload', draft.payload.map((q, j) => (j === i ? { ...q, key: e.currentTarget.value } : q)))} />
                <span>=</span>
                <input aria-label="Payload value" placeholder="value" value={p.value} onInput={(e) => set('payload', draft.payload.map((q, j) => (j === i ? { ...q, value: e.currentTarget.value } : q)))} />
                <button type="button" class="icon-button" aria-label="Remove this payload filter" onClick={() => set('payload', draft.payload.filter((_, j) => j !== i))}>
                  ×
                </button>
              </div>
            ))}
            <button type="button" class="link-button" onClick={() => set('payload', [...draft.payload, { key: '', value: '' }])}>
              + Add a payload filter
            </button>
          </div>
          <div class="form-actions field-wide">
            <button type="submit" class="primary">
              Apply
            </button>
          </div>
        </form>
      </section>
      <div class="analytics-grid">
        {QUERY_TYPES.map((type) => (
          <QueryCard key={type} type={type} filters={applied} />
        ))}
      </div>
    </div>
  );
}

function QueryCard({ type, filters }: { type: QueryType; filters: FilterState }) {
  const body = useMemo(() => bodyFor(type, filters), [type, filters]);
  const result = useLoad(() => analytics.query<Row>(body), [JSON.stringify(body)]);
  const [asTable, setAsTable] = useState(false);
  const rows = result.data?.data ?? [];
  const option = useMemo(() => optionFor(type, rows), [type, result.data]);
  const empty = result.data ? emptyFor(type, rows) : undefined;
  const columns = rows[0] ? Object.keys(rows[0]) : [];
  const download = () => saveBlob(new Blob([[csvLine(columns), ...rows.map((r) => csvLine(columns.map((c) => r[c])))].join('\r\n') + '\r\n'], { type: 'text/csv' }), `${type}.csv`);
  return (
    <Card
      title={TITLES[type]}
      class={`analytics-card card-${type}`}
      id={`q-${type}`}
      actions={
        <>
          <div class="segmented" role="group" aria-label="View">
            <button type="button" aria-pressed={!asTable} onClick={() => setAsTable(false)}>
              Chart
            </button>
            <button type="button" aria-pressed={asTable} onClick={() => setAsTable(true)}>
              Table
            </button>
          </div>
          <button type="button" onClick={download} disabled={rows.length === 0} aria-label={`Download ${TITLES[type]} as CSV`}>
            CSV
          </button>
        </>
      }
    >
      <ErrorNote error={result.error} />
      {result.loading && !result.data ? (
        <Spinner />
      ) : asTable ? (
        <div class="scroll-box">
          <Table<Row>
            caption={TITLES[type]}
            rows={rows}
            rowKey={(r) => JSON.stringify(r)}
            columns={columns.map((c) => ({ key: c, label: c, class: typeof rows[0]![c] === 'number' ? 'num' : '', render: (r: Row) => (r[c] === null ? '—' : String(r[c])) }))}
          />
        </div>
      ) : type === 'call_count' ? (
        <div class="figure" data-ready="true">
          <div class="figure-value">{count(num(rows[0]?.count))}</div>
          <div class="muted">calls (dialled leads) matching the filters</div>
        </div>
      ) : empty ? (
        <div class="empty chart-empty" data-ready="true">
          {empty}
        </div>
      ) : (
        <>
          {type === 'call_duration' && rows[0] && (
            <p class="muted">
              average {seconds(rows[0].avg as number | null)}, total {seconds(num(rows[0].total))}
            </p>
          )}
          <Chart option={option!} label={TITLES[type]} height={type === 'hourly_heatmap' ? 320 : 260} />
        </>
      )}
    </Card>
  );
}

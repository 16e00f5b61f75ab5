/**
 * Leads: filters, search, sort and paging done by the API (GET /leads), statuses kept live by
 * server-sent events (GET /events), bulk abort, push one lead, import and export CSV.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { leads, templates, tenants, type LeadList, type LeadListQuery } from '../api/endpoints.js';
import { subscribe } from '../api/events.js';
import type { Lead } from '../api/types.js';
import { Badge, ErrorNote, Field, PageHeader, Pager, Table, toast, type Column, type SortOrder } from '../components/ui.js';
import { PushLead } from '../components/push-lead.js';
import { CsvImport } from '../components/csv-import.js';
import { downloadCsv } from '../components/download.js';
import { count, when, whenShort } from '../lib/format.js';
import { useLoad, useQueryFilters } from '../lib/use.js';
import { BASE, can } from '../session.js';

const STATUSES = ['BACKLOG', 'PROCESSING', 'RETRY', 'FINISHED'];
const MODES = ['TELEPHONY', 'TELEPHONY_TEST', 'WEBRTC', 'WEBRTC_TEST', 'WEBRTC_STREAM'];
const OUTCOMES = ['confirmed', 'rescheduled', 'conversation_completed', 'no_response', 'no_answer', 'busy', 'failed', 'voicemail', 'PRECHECK_FAILED', 'BLACKLISTED', 'aborted', 'worker_lost', 'error'];
const FILTERS = ['q', 'status', 'outcome', 'template_id', 'merchant_id', 'execution_mode', 'created_from', 'created_to'] as const;
const PAGE_SIZE = 50;

type Filters = Partial<Record<(typeof FILTERS)[number] | 'sort' | 'order' | 'page', string>>;

export default function LeadsPage() {
  const [filters, setFilters] = useQueryFilters<keyof Filters>();
  const change = (key: keyof Filters, value: string) => setFilters({ ...filters, [key]: value, page: '' });

  const apiQuery: LeadListQuery = useMemo(() => {
    const q: LeadListQuery = { page: Number(filters.page ?? 1) || 1, page_size: PAGE_SIZE, count: 'capped' };
    for (const k of FILTERS) if (filters[k]) (q as Record<string, unknown>)[k] = filters[k];
    if (filters.sort) q.sort = filters.sort as LeadListQuery['sort'];
    if (filters.order) q.order = filters.order as LeadListQuery['order'];
    return q;
  }, [JSON.stringify(filters)]);

  const list = useLoad((signal) => leads.list(apiQuery, signal), [JSON.stringify(apiQuery)]);
  const tpls = useLoad((signal) => templates.list({}, signal), []);
  const merchants = useLoad((signal) => (can('merchants', 'read') ? tenants.merchants(signal) : Promise.resolve(undefined)), []);
  const [rows, setRows] = useState<Lead[]>([]);
  const [flash, setFlash] = useState<Set<string>>(new Set());
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [pushing, setPushing] = useState(false);
  const [importing, setImporting] = useState(false);
  const [exporting, setExporting] = useState(false);
  const [showFilters, setShowFilters] = useState(false);
  const mayWrite = can('leads', 'write');

  useEffect(() => {
    setRows(list.data?.data ?? []);
    setSelected(new Set());
  }, [list.data]);

  // Live: the API tells this page when a lead it shows changes.
  const ids = rows.map((r) => r.id).join(',');
  useEffect(() => {
    if (!ids) return;
    return subscribe('/events', { leads: ids }, (event, data) => {
      if (event !== 'lead') return;
      const change = data as Pick<Lead, 'id' | 'status' | 'outcome' | 'attempt_count' | 'call_id' | 'updated_at'>;
      setRows((rs) => rs.map((r) => (r.id === change.id ? { ...r, ...change } : r)));
      setFlash((f) => new Set(f).add(change.id));
      setTimeout(() => setFlash((f) => ((f = new Set(f)), f.delete(change.id), f)), 1500);
    });
  }, [ids]);

  const abort = async () => {
    const reason = prompt(`Abort ${selected.size} lead(s)? Give a reason (stored on each lead):`, 'aborted from the dashboard');
    if (!reason) return;
    try {
      const res = await leads.abort([...selected], reason);
      const ok = res.leads.filter((l) => l.status === 'success').length;
      toast(`${ok} of ${res.leads.length} aborted${ok < res.leads.length ? `; ${res.leads.length - ok} could not be (already finished or being called)` : ''}.`, ok === res.leads.length ? 'ok' : 'info');
      list.reload();
    } catch (err) {
      toast((err as Error).message, 'bad');
    }
  };

  const exportCsv = async () => {
    setExporting(true);
    try {
      const q: Record<string, string> = {};
      for (const k of FILTERS) if (filters[k]) q[k] = filters[k]!;
      await downloadCsv('/leads/export', q, 'leads.csv');
    } catch (err) {
      toast((err as Error).message, 'bad');
    } finally {
      setExporting(false);
    }
  };

  const templateName = (id: string) => tpls.data?.data.find((t) => t.id === id)?.name ?? id;
  const columns: Column<Lead>[] = [
    { key: 'request_id', label: 'Request id', sortable: true, render: (l) => <a href={`${BASE}/leads/${l.id}`}>{l.request_id}</a> },
    { key: 'phone', label: 'Phone number', render: (l) => String((l.payload as Record<string, unknown>).customer_mobile_number ?? '—') },
    { key: 'template', label: 'Template', render: (l) => <span class="truncate template-name" title={l.template}>{l.template}</span> },
    { key: 'status', label: 'Status', sortable: true, render: (l) => <Badge value={l.status} /> },
    { key: 'outcome', label: 'Outcome', sortable: true, render: (l) => <Badge kind="outcome" value={l.outcome} /> },
    { key: 'attempt_count', label: 'Attempts', sortable: true, class: 'num', render: (l) => l.attempt_count },
    { key: 'call_initiated_time', label: 'Last call', sortable: true, class: 'nowrap', render: (l) => <span title={when(l.call_initiated_time)}>{whenShort(l.call_initiated_time)}</span> },
    { key: 'created_at', label: 'Pushed', sortable: true, class: 'nowrap', render: (l) => <span title={when(l.created_at)}>{whenShort(l.created_at)}</span> },
  ];
  const data: LeadList | undefined = list.data;
  const hasFilters = FILTERS.some((k) => filters[k]);

  return (
    <div class="leads-page">
      <PageHeader title="Leads" subtitle={data ? `${count(data.total)}${data.total_capped ? '+' : ''} ${hasFilters ? 'matching' : 'in total'}` : undefined}>
        {mayWrite && (
          <>
            <button type="button" class="primary" onClick={() => setPushing(true)}>
              Push a lead
            </button>
            <button type="button" onClick={() => setImporting(true)}>
              Import CSV
            </button>
          </>
        )}
        <button type="button" onClick={exportCsv} disabled={exporting}>
          {exporting ? 'Exporting…' : 'Export CSV'}
        </button>
      </PageHeader>
      <section class="card">
        <form class={`toolbar ${showFilters ? '' : 'collapsed'}`} role="search" onSubmit={(e) => e.preventDefault()}>
          <Field label="Search" class="always grow">
            <input
              type="search"
              name="q"
              placeholder="Request id, lead id or +phone"
              value={filters.q ?? ''}
              onChange={(e) => change('q', e.currentTarget.value.trim())}
            />
          </Field>
          <Field label="Status">
            <select name="status" value={filters.status ?? ''} onChange={(e) => change('status', e.currentTarget.value)}>
              <option value="">Any</option>
              {STATUSES.map((s) => (
                <option key={s}>{s}</option>
              ))}
            </select>
          </Field>
          <Field label="Outcome">
            <input name="outcome" list="outcomes" value={filters.outcome ?? ''} placeholder="Any" onChange={(e) => change('outcome', e.currentTarget.value.trim())} />
            <datalist id="outcomes">
              {OUTCOMES.map((o) => (
                <option key={o} value={o} />
              ))}
            </datalist>
          </Field>
          <Field label="Template">
            <select name="template_id" value={filters.template_id ?? ''} onChange={(e) => change('template_id', e.currentTarget.value)}>
              <option value="">Any</option>
              {tpls.data?.data.map((t) => (
                <option key={t.id} value={t.id}>
                  {t.name}
                </option>
              ))}
              {filters.template_id && !tpls.data?.data.some((t) => t.id === filters.template_id) && <option value={filters.template_id}>{templateName(filters.template_id)}</option>}
            </select>
          </Field>
          {merchants.data && (
            <Field label="Merchant">
              <select name="merchant_id" value={filters.merchant_id ?? ''} onChange={(e) => change('merchant_id', e.currentTarget.value)}>
                <option value="">Any</option>
                {merchants.data.data.map((m) => (
                  <option key={m.id} value={m.id}>
                    {m.name}
                  </option>
                ))}
              </select>
            </Field>
          )}
          <Field label="Mode">
            <select name="execution_mode" value={filters.execution_mode ?? ''} onChange={(e) => change('execution_mode', e.currentTarget.value)}>
              <option value="">Any</option>
              {MODES.map((m) => (
                <option key={m}>{m}</option>
              ))}
            </select>
          </Field>
          <Field label="Pushed from">
            <input type="date" name="created_from" value={filters.created_from ?? ''} onChange={(e) => change('created_from', e.currentTarget.value)} />
          </Field>
          <Field label="Pushed until">
            <input type="date" name="created_to" value={filters.created_to ?? ''} onChange={(e) => change('created_to', e.currentTarget.value)} />
          </Field>
          <button type="button" class="filters-toggle" aria-expanded={showFilters} onClick={() => setShowFilters(!showFilters)}>
            {showFilters ? 'Fewer filters' : `Filters${hasFilters ? ' (on)' : ''}`}
          </button>
          {hasFilters && (
            <button type="button" class="link-button" onClick={() => setFilters({})}>
              Clear filters
            </button>
          )}
        </form>
        {mayWrite && selected.size > 0 && (
          <div class="selection-bar" role="status">
            {selected.size} selected
            <button type="button" class="danger" onClick={abort}>
              Abort selected
            </button>
            <button type="button" class="link-button" onClick={() => setSelected(new Set())}>
              Clear
            </button>
          </div>
        )}
        <ErrorNote error={list.error} />
        <div class={list.loading ? 'loading' : ''}>
          <div class="dense">
            <Table
              caption="Leads"
              columns={columns}
              rows={rows}
              rowKey={(l) => l.id}
              sort={{ key: filters.sort ?? 'created_at', order: (filters.order as SortOrder) ?? 'desc' }}
              onSort={(key, order) => setFilters({ ...filters, sort: key, order, page: '' })}
              {...(mayWrite ? { selected, onSelect: setSelected, selectable: (l: Lead) => l.status === 'BACKLOG' || l.status === 'RETRY' } : {})}
              empty={hasFilters ? 'No lead matches these filters.' : 'No leads yet. Push one, import a CSV, or call the simulated customer from the overview.'}
            />
          </div>
        </div>
        <FlashRows ids={flash} />
        {data && data.total > 0 && (
          <Pager page={data.page} pageSize={data.page_size} total={data.total} capped={data.total_capped === true} onPage={(p) => setFilters({ ...filters, page: String(p) })} />
        )}
      </section>
      {pushing && <PushLead onClose={() => setPushing(false)} onPushed={() => list.reload()} templates={tpls.data?.data ?? []} />}
      {importing && <CsvImport onClose={() => setImporting(false)} onDone={() => list.reload()} templates={tpls.data?.data ?? []} />}
    </div>
  );
}

/** Marks the rows that just changed (a short highlight) without re-rendering the table for it. */
function FlashRows({ ids }: { ids: Set<string> }) {
  useEffect(() => {
    for (const tr of document.querySelectorAll<HTMLTableRowElement>('tr[data-key]')) tr.classList.toggle('flash', ids.has(tr.dataset.key!));
  }, [ids]);
  return null;
}

/**
 * The audit trail (GET /audit): every write and login, newest first, filtered by who, what and when,
 * a page at a time. The filters live in the address, so a filtered view can be linked to.
 */
import { useState } from 'preact/hooks';
import { audit, type AuditEntry, type AuditQuery } from '../api/endpoints.js';
import { ListPage } from '../components/list-page.js';
import { Badge, Field, Json, Pager } from '../components/ui.js';
import { when } from '../lib/format.js';
import { useLoad, useQueryFilters } from '../lib/use.js';

const ACTIONS = ['create', 'update', 'delete', 'abort', 'token.issue', 'token.revoke', 'password.reset', 'login.success', 'login.failure'];
const RESOURCES = ['leads', 'templates', 'configurations', 'merchants', 'users', 'tokens', 'numbers', 'blacklist', 'resellers', 'session'];
const FILTERS = ['principal_name', 'action', 'resource', 'resource_id', 'from', 'to'] as const;
const PAGE_SIZE = 50;

type Filters = Partial<Record<(typeof FILTERS)[number] | 'principal_id' | 'page', string>>;

/** A date-time input's value (the viewer's local time) as an ISO instant, or undefined. */
const instant = (local: string | undefined) => (local ? new Date(local).toISOString() : undefined);

export default function AuditPage() {
  const [filters, setFilters] = useQueryFilters<keyof Filters>();
  const apiQuery: AuditQuery = {
    page: Number(filters.page ?? 1) || 1,
    page_size: PAGE_SIZE,
    ...(filters.principal_id ? { principal_id: filters.principal_id } : {}),
    ...(filters.principal_name ? { principal_name: filters.principal_name } : {}),
    ...(filters.action ? { action: filters.action } : {}),
    ...(filters.resource ? { resource: filters.resource } : {}),
    ...(filters.resource_id ? { resource_id: filters.resource_id } : {}),
    ...(filters.from ? { from: instant(filters.from) } : {}),
    ...(filters.to ? { to: instant(filters.to) } : {}),
  };
  const list = useLoad((signal) => audit.list(apiQuery, signal), [JSON.stringify(apiQuery)]);
  const filtered = FILTERS.some((k) => filters[k]) || !!filters.principal_id;
  // On a phone the filters other than "Who" fold away until asked for.
  const [showFilters, setShowFilters] = useState(false);
  return (
    <ListPage<AuditEntry>
      title="Audit trail"
      subtitle="Every change made through the API and every login, with who made it, from where, and the answer it got. Request bodies are never kept."
      list={list}
      toolbar={
        <form
          // Made anew when the address changes, so its fields show the filters in force (Clear empties
          // them); a select starts from its option marked `selected` (Preact sets no defaultValue on one).
          key={JSON.stringify(filters)}
          class={`toolbar audit-filters ${showFilters ? '' : 'collapsed'}`}
          role="search"
          onSubmit={(e) => {
            e.preventDefault();
            const f = new FormData(e.currentTarget);
            const next: Filters = { ...(filters.principal_id ? { principal_id: filters.principal_id } : {}) };
            for (const k of FILTERS) next[k] = String(f.get(k) ?? '').trim();
            setFilters(next);
          }}
        >
          <Field label="Who" class="always" hint="An email or a token's name">
            <input name="principal_name" type="search" defaultValue={filters.principal_name ?? ''} />
          </Field>
          <Field label="Action">
            <select name="action">
              <option value="">Any</option>
              {ACTIONS.map((a) => (
                <option key={a} selected={a === filters.action}>
                  {a}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Resource">
            <select name="resource">
              <option value="">Any</option>
              {RESOURCES.map((r) => (
                <option key={r} selected={r === filters.resource}>
                  {r}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Resource id">
            <input name="resource_id" defaultValue={filters.resource_id ?? ''} />
          </Field>
          <Field label="From">
            <input name="from" type="datetime-local" defaultValue={filters.from ?? ''} />
          </Field>
          <Field label="Before">
            <input name="to" type="datetime-local" defaultValue={filters.to ?? ''} />
          </Field>
          <div class="toolbar-buttons">
            <button type="submit" class="primary">
              Filter
            </button>
            <button type="button" class="filters-toggle" aria-expanded={showFilters} onClick={() => setShowFilters(!showFilters)}>
              {showFilters ? 'Fewer filters' : `More filters${filtered ? ' (on)' : ''}`}
            </button>
            {filtered && (
              <button type="button" onClick={() => setFilters({})}>
                Clear
              </button>
            )}
          </div>
        </form>
      }
      caption="Audit entries"
      rowKey={(e) => e.id}
      empty={filtered ? 'No entry matches these filters.' : 'Nothing has been recorded yet.'}
      columns={[
        { key: 'at', label: 'When', render: (e) => when(e.at) },
        {
          key: 'who',
          label: 'Who',
          render: (e) => (
            <div>
              <div>{e.principal_name ?? '—'}</div>
              <div class="muted">
                {e.principal_kind === 's2s' ? 'API token' : e.principal_kind === 'user' ? 'user' : ''}
                {e.role ? ` · ${e.role}` : ''}
              </div>
            </div>
          ),
        },
        { key: 'action', label: 'Action', render: (e) => <Badge kind="plain" value={e.action} /> },
        {
          key: 'what',
          label: 'What',
          render: (e) => (
            <div>
              <div>
                {e.resource ?? '—'}
                {e.resource_id && (
                  <>
                    {' '}
                    <code class="truncate" title={e.resource_id}>
                      {e.resource_id}
                    </code>
                  </>
                )}
              </div>
              <div class="muted">
                <code>
                  {e.method} {e.route}
                </code>
              </div>
            </div>
          ),
        },
        { key: 'status', label: 'Answer', class: 'num', render: (e) => <span class={`badge badge-${e.status < 300 ? 'ok' : e.status < 500 ? 'warn' : 'bad'}`}>{e.status}</span> },
        { key: 'ip', label: 'From', render: (e) => e.client_ip ?? '—' },
        {
          key: 'details',
          label: 'Details',
          render: (e) =>
            e.details ? (
              <details>
                <summary>{Object.keys(e.details).join(', ')}</summary>
                <Json value={e.details} />
              </details>
            ) : (
              <span class="muted">—</span>
            ),
        },
      ]}
      footer={list.data && list.data.total > 0 && <Pager page={list.data.page} pageSize={list.data.page_size} total={list.data.total} onPage={(page) => setFilters({ ...filters, page: String(page) })} />}
    />
  );
}

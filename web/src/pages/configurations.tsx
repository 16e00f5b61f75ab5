/**
 * Configurations: when and how each template's leads are called. Every field, from the API's own
 * schema; the calling window in the configuration's time zone and the viewer's, with when it opens;
 * a pre-checks editor. The API's 400 answers are shown at the field they name.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiError, http } from '../api/client.js';
import { templates, tenants } from '../api/endpoints.js';
import type { Configuration, PreCheck } from '../api/types.js';
import { ConfigurationFields } from '../../../src/configurations/schema.js';
import { DateTime } from 'luxon';
import { inWindow, nextOpening } from '../../../src/lib/windows.js';
import { DisclosureField, PreChecks, RetryPolicyField } from '../components/configuration-editors.js';
import { SchemaField, type JsonSchema } from '../components/schema-field.js';
import { Badge, ErrorNote, Field, Modal, PageHeader, Table, toast } from '../components/ui.js';
import { span, viewerTimeZone } from '../lib/format.js';
import { useInterval, useLoad } from '../lib/use.js';
import { can, session } from '../session.js';
import { NamedSelect } from '../components/list-page.js';

const F = ConfigurationFields as unknown as Record<string, JsonSchema>;
type Draft = Record<string, unknown>;

const GROUPS: { title: string; fields: [string, string][] }[] = [
  {
    title: 'Scheduling',
    fields: [
      ['call_start_time', 'Calling window opens'],
      ['call_end_time', 'Calling window closes'],
      ['call_timezone', 'Time zone of the window'],
      ['initial_offset', 'First call after (seconds)'],
      ['retry_offset', 'Retry after (seconds)'],
      ['max_retry', 'Retries'],
    ],
  },
  {
    title: 'Calling',
    fields: [
      ['calling_provider', 'Provider'],
      ['enable_calling', 'Calling enabled'],
      ['enable_international_call', 'International calls allowed'],
      ['enforce_blacklist', 'Skip blacklisted numbers'],
      ['service_callback_url', 'Service callback URL'],
    ],
  },
  {
    title: 'Rate limit',
    fields: [
      ['rate_limit_enabled', 'Rate limit on'],
      ['rate_limit_max_calls', 'Calls per window'],
      ['rate_limit_window_seconds', 'Window (seconds)'],
      ['rate_limit_whitelist', 'Numbers exempt from the limit'],
    ],
  },
  {
    title: 'Campaign',
    fields: [
      ['voicemail_action', 'When a machine answers'],
      ['voicemail_message', 'Voicemail message'],
      ['opt_out_enabled', 'Callees can opt out'],
      ['window_timezone', 'Calling window in whose time'],
      ['max_calls_per_number_per_day', 'Calls per number per day'],
    ],
  },
  {
    title: 'Inbound calls',
    fields: [
      ['enable_inbound', 'Answer inbound calls'],
      ['inbound_call_start_time', 'Inbound window opens'],
      ['inbound_call_end_time', 'Inbound window closes'],
      ['inbound_call_timezone', 'Inbound time zone'],
      ['inbound_block_action', 'Outside the window'],
      ['inbound_redirect_number', 'Redirect to'],
      ['inbound_block_message', 'Message outside the window'],
    ],
  },
];

/** Whether the browser knows the IANA zone (its list of zones leaves out aliases such as UTC). */
function isZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const ZONES: string[] = (Intl as unknown as { supportedValuesOf?: (k: string) => string[] }).supportedValuesOf?.('timeZone') ?? ['UTC'];

/** "09:00–21:00 Europe/Paris (08:00–20:00 your time) · open now / opens in 3 h 12 min". */
export function windowText(start: string, end: string, zone: string, now = new Date()): { here: string; there: string; state: string; open: boolean } {
  const valid = /^\d\d:\d\d$/.test(start) && /^\d\d:\d\d$/.test(end) && isZone(zone);
  if (!valid) return { here: '', there: `${start}–${end} ${zone}`, state: '', open: false };
  const open = inWindow(now, start, end, zone);
  // Today's wall time in the configuration's zone, as the viewer's clock shows it.
  const local = (hhmm: string) => {
    const [hour, minute] = hhmm.split(':').map(Number);
    return DateTime.fromJSDate(now, { zone }).set({ hour, minute }).setZone(viewerTimeZone).toFormat('HH:mm');
  };
  const allDay = start === end;
  return {
    there: allDay ? `all day (${zone})` : `${start}–${end} ${zone}`,
    here: allDay || zone === viewerTimeZone ? '' : `${local(start)}–${local(end)} your time`,
    state: open ? 'open now' : `opens in ${span(nextOpening(now, start, end, zone).getTime() - now.getTime())}`,
    open,
  };
}

function emptyDraft(): Draft {
  const d: Draft = {};
  for (const [k, s] of Object.entries(F)) if (s.default !== undefined) d[k] = s.default;
  return { ...d, call_start_time: '09:00', call_end_time: '21:00', call_timezone: viewerTimeZone, calling_provider: 'PROVIDER_A', pre_checks: [] };
}

export default function ConfigurationsPage() {
  const list = useLoad((signal) => http.get<{ data: Configuration[] }>('/configurations', { page_size: 1000 }, signal), []);
  const tpls = useLoad((signal) => templates.list({}, signal), []);
  const [, tick] = useState(0);
  useInterval(() => tick((n) => n + 1), 30_000);
  const [editing, setEditing] = useState<Draft>();
  const writable = can('configurations', 'write');
  // ?template=ID (a waiting lead's page links here): that template's configuration opened, or a new
  // one for it.
  const { query } = useLocation();
  const [opened, setOpened] = useState<string>();
  useEffect(() => {
    if (!query.template || query.template === opened || !list.data || !writable) return;
    const found = list.data.data.find((c) => c.template === query.template);
    setEditing(found ? { ...found } : { ...emptyDraft(), template: query.template });
    setOpened(query.template);
  }, [query.template, list.data]);
  const name = (id: string) => tpls.data?.data.find((t) => t.id === id)?.name ?? id;
  return (
    <div>
      <PageHeader title="Configurations" subtitle="When and how the leads of each template are called: calling window, retries, provider, limits, pre-checks.">
        {writable && (
          <button type="button" class="primary" onClick={() => setEditing(emptyDraft())}>
            New configuration
          </button>
        )}
      </PageHeader>
      <section class="card">
        <ErrorNote error={list.error} />
        <Table<Configuration>
          caption="Configurations"
          rows={list.data?.data ?? []}
          rowKey={(c) => c.id}
          empty="No configuration yet: a template's leads wait until one says when to call them."
          columns={[
            { key: 'template', label: 'Template', render: (c) => name(c.template) },
            { key: 'provider', label: 'Provider', render: (c) => c.calling_provider },
            { key: 'calling', label: 'Calling', render: (c) => <Badge value={c.enable_calling ? 'calling on' : 'calling off'} tone={c.enable_calling ? 'ok' : 'neutral'} /> },
            {
              key: 'window',
              label: 'Calling window',
              render: (c) => {
                const w = windowText(c.call_start_time, c.call_end_time, c.call_timezone);
                return (
                  <div class="window" data-window={c.id}>
                    <div>{w.there}</div>
                    {w.here && <div class="muted">{w.here}</div>}
                    <div class={w.open ? 'ok-text' : 'muted'}>{w.state}</div>
                  </div>
                );
              },
            },
            { key: 'retries', label: 'Retries', class: 'num', render: (c) => c.max_retry },
            { key: 'prechecks', label: 'Pre-checks', class: 'num', render: (c) => c.pre_checks.length },
            {
              key: 'edit',
              label: '',
              render: (c) => (
                <button type="button" onClick={() => setEditing({ ...c })}>
                  {writable ? 'Edit' : 'View'}
                </button>
              ),
            },
          ]}
        />
      </section>
      {editing && (
        <ConfigurationForm
          draft={editing}
          templates={tpls.data?.data.map((t) => ({ id: t.id, name: t.name, reseller_id: t.reseller_id, merchant_id: t.merchant_id })) ?? []}
          readOnly={!writable}
          onClose={() => setEditing(undefined)}
          onSaved={() => {
            setEditing(undefined);
            list.reload();
          }}
        />
      )}
    </div>
  );
}

function ConfigurationForm(props: { draft: Draft; templates: { id: string; name: string; reseller_id: string; merchant_id: string | null }[]; readOnly: boolean; onClose: () => void; onSaved: () => void }) {
  const [draft, setDraft] = useState<Draft>(props.draft);
  const [error, setError] = useState<ApiError | Error>();
  const [busy, setBusy] = useState(false);
  const merchants = useLoad((signal) => (can('merchants', 'read') ? tenants.merchants(signal) : Promise.resolve(undefined)), []);
  const editing = typeof draft.id === 'string';
  const set = (k: string, v: unknown) => setDraft((d) => ({ ...d, [k]: v }));
  const at = (path: string) => (error instanceof ApiError ? error.at(path) : undefined);
  const tpl = props.templates.find((t) => t.id === draft.template);
  const w = useMemo(() => windowText(String(draft.call_start_time ?? ''), String(draft.call_end_time ?? ''), String(draft.call_timezone ?? 'UTC')), [draft.call_start_time, draft.call_end_time, draft.call_timezone]);

  const save = async (event: Event) => {
    event.preventDefault();
    if (!tpl) return setError(new Error('Choose a template.'));
    setBusy(true);
    setError(undefined);
    const body: Draft = {};
    for (const k of Object.keys(F)) if (draft[k] !== undefined) body[k] = draft[k];
    body.reseller_id = tpl.reseller_id;
    if (body.merchant_id === undefined) body.merchant_id = tpl.merchant_id ?? session.get()?.me.merchant_id ?? null;
    try {
      if (editing) await http.put(`/configurations/${String(draft.id)}`, { id: draft.id, ...body });
      else await http.post('/configurations', body);
      toast('Configuration saved.');
      props.onSaved();
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Modal title={editing ? 'Configuration' : 'New configuration'} open onClose={props.onClose} wide>
      <form onSubmit={save} class="config-form">
        <fieldset disabled={props.readOnly}>
          <legend>Template</legend>
          <div class="form-grid">
            <Field label="Template" error={at('/template')}>
              <select name="template" value={String(draft.template ?? '')} onChange={(e) => set('template', e.currentTarget.value)} required disabled={editing}>
                <option value="">Choose…</option>
                {props.templates.map((t) => (
                  <option key={t.id} value={t.id}>
                    {t.name}
                  </option>
                ))}
              </select>
            </Field>
            {merchants.data && tpl && !tpl.merchant_id && (
              <Field label="Merchant" error={at('/merchant_id')}>
                <NamedSelect none="The whole reseller" items={merchants.data.data.filter((m) => m.reseller_id === tpl.reseller_id)} value={String(draft.merchant_id ?? '')} onChange={(v) => set('merchant_id', v || null)} />
              </Field>
            )}
          </div>
        </fieldset>
        {GROUPS.map((g) => (
          <fieldset key={g.title} disabled={props.readOnly}>
            <legend>{g.title}</legend>
            {g.title === 'Scheduling' && (
              <p class="window-preview" id="window-preview">
                {w.there}
                {w.here && <span class="muted"> · {w.here}</span>}
                {w.state && <span class={w.open ? 'ok-text' : 'muted'}> · {w.state}</span>}
              </p>
            )}
            <div class="form-grid">
              {g.fields.map(([key, label]) => (
                <SchemaField
                  key={key}
                  name={key}
                  label={label}
                  schema={F[key]!}
                  value={draft[key]}
                  onChange={(v) => set(key, v)}
                  error={at(`/${key}`)}
                  wide={key === 'rate_limit_whitelist' || key === 'inbound_block_message' || key === 'voicemail_message'}
                  {...(key.endsWith('timezone') ? { list: 'zones' } : {})}
                />
              ))}
            </div>
            {g.title === 'Campaign' && <RetryPolicyField value={draft.retry_policy} onChange={(v) => set('retry_policy', v)} error={at('/retry_policy')} />}
          </fieldset>
        ))}
        <datalist id="zones">
          {ZONES.map((z) => (
            <option key={z} value={z} />
          ))}
        </datalist>
        <fieldset disabled={props.readOnly}>
          <legend>Compliance</legend>
          <DisclosureField value={draft.disclosure} onChange={(v) => set('disclosure', v)} errorAt={(path) => at(path)} />
        </fieldset>
        <fieldset disabled={props.readOnly}>
          <legend>Pre-checks</legend>
          <PreChecks value={(draft.pre_checks as PreCheck[]) ?? []} onChange={(v) => set('pre_checks', v)} errorAt={(i) => (error instanceof ApiError ? error.problem.errors?.filter((e) => e.path.startsWith(`/pre_checks/${i}`)) : undefined)} />
        </fieldset>
        <ErrorNote error={error} />
        <div class="form-actions">
          <button type="button" onClick={props.onClose}>
            {props.readOnly ? 'Close' : 'Cancel'}
          </button>
          {!props.readOnly && (
            <button type="submit" class="primary" disabled={busy}>
              {busy ? 'Saving…' : 'Save configuration'}
            </button>
          )}
        </div>
      </form>
    </Modal>
  );
}


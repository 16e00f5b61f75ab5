/**
 * A campaign from a CSV, in three steps: the file and its template; a preview (POST
 * /leads/import/preview: where each column goes, the first rows, the duplicates, with "skip
 * duplicates") and the campaign's name, cap, pace and breaker; then the campaign is created and the
 * rows pushed into it (POST /leads/batch with skip_duplicates). Nothing is queued before the last step.
 */
import { useState } from 'preact/hooks';
import { parse } from 'csv-parse/browser/esm/sync';
import { campaigns, importPreview, type ImportPreview } from '../api/campaigns.js';
import { leads } from '../api/endpoints.js';
import type { Template } from '../api/types.js';
import { toPushBody } from '../../../src/leads/csv-rows.js';
import { session } from '../session.js';
import { ErrorNote, Field, Modal, Table } from './ui.js';

const BATCH = 500;
const DEFAULT_DEDUPE_DAYS = 30;

const KIND_LABEL = { in_file: 'repeated in the file', in_campaign: 'already queued in the campaign', recent_call: 'called recently' } as const;

interface Loaded {
  file: File;
  text: string;
  template: Template;
  dedupeDays: number;
  preview: ImportPreview;
}

interface Pushing {
  campaignId: string;
  rows: number;
  sent: number;
  queued: number;
  skipped: number;
  rejected: number;
}

export function CampaignImport({ templates, onClose, onCreated }: { templates: Template[]; onClose: () => void; onCreated: (id: string) => void }) {
  const me = session.get()!.me;
  const [tplId, setTplId] = useState(templates[0]?.id ?? '');
  const [error, setError] = useState<Error>();
  const [busy, setBusy] = useState(false);
  const [loaded, setLoaded] = useState<Loaded>();
  const [skip, setSkip] = useState(true);
  const [pushing, setPushing] = useState<Pushing>();
  const [breakerOn, setBreakerOn] = useState(false);

  const merchantOf = (t: Template) => t.merchant_id ?? me.merchant_id ?? undefined;

  const preview = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const file = (form.get('file') as File | null) ?? undefined;
    const template = templates.find((t) => t.id === tplId);
    const dedupeDays = Number(form.get('dedupe_days') || 0);
    if (!template || !file || file.size === 0) return setError(new Error('Choose a CSV file.'));
    setError(undefined);
    setBusy(true);
    try {
      const text = await file.text();
      const merchant = merchantOf(template);
      const answer = await importPreview({
        csv: text,
        template: template.name,
        file_name: file.name,
        reseller_id: template.reseller_id,
        ...(merchant ? { merchant_id: merchant } : {}),
        ...(dedupeDays > 0 ? { dedupe_days: dedupeDays } : {}),
      });
      setLoaded({ file, text, template, dedupeDays, preview: answer });
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  };

  const create = async (event: Event) => {
    event.preventDefault();
    if (!loaded) return;
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const num = (name: string) => {
      const v = String(form.get(name) ?? '').trim();
      return v === '' ? null : Number(v);
    };
    const breaker = form.get('breaker') === 'on';
    setError(undefined);
    setBusy(true);
    try {
      const { template, preview: p } = loaded;
      const merchant = merchantOf(template);
      const campaign = await campaigns.create({
        name: String(form.get('name') ?? '').trim(),
        reseller_id: template.reseller_id,
        ...(merchant ? { merchant_id: merchant } : {}),
        template: template.name,
        max_concurrent_calls: num('max_concurrent_calls'),
        max_calls_per_second: num('max_calls_per_second'),
        circuit_breaker: breaker ? { failure_ratio: (num('failure_percent') ?? 50) / 100, window_seconds: num('window_seconds') ?? 120, min_calls: num('min_calls') ?? 10 } : null,
      });
      const dropped = new Set(skip ? p.duplicates.map((d) => d.line) : []);
      const records = parse(loaded.text, { columns: true, bom: true, skip_empty_lines: true, trim: true, info: true }) as unknown as { record: Record<string, string>; info: { lines: number } }[];
      const base = loaded.file.name.replace(/\.[^.]*$/, '');
      const defaults = { template: template.name, resellerId: template.reseller_id, merchantId: merchant, campaignId: campaign.id };
      const bodies = records.filter((r) => !dropped.has(r.info.lines)).map((r) => toPushBody(r.record, r.info.lines, base, defaults));
      const state: Pushing = { campaignId: campaign.id, rows: records.length, sent: dropped.size, queued: 0, skipped: dropped.size, rejected: 0 };
      setPushing({ ...state });
      for (let i = 0; i < bodies.length; i += BATCH) {
        const res = await leads.batch(bodies.slice(i, i + BATCH), skip ? { skip_duplicates: true, ...(loaded.dedupeDays > 0 ? { dedupe_days: loaded.dedupeDays } : {}) } : {});
        state.sent += Math.min(BATCH, bodies.length - i);
        state.queued += res.queued;
        state.rejected += res.rejected;
        state.skipped += res.skipped ?? 0;
        setPushing({ ...state });
      }
      onCreated(campaign.id);
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  };

  const p = loaded?.preview;
  const shown = p?.rows.slice(0, 5) ?? [];
  const suggestedName = loaded ? loaded.file.name.replace(/\.[^.]*$/, '').replace(/[-_]+/g, ' ') : '';
  return (
    <Modal title="New campaign from a CSV" open onClose={onClose} wide>
      {!loaded && (
        <form onSubmit={preview} class="form-grid" id="campaign-file-form">
          <Field label="Template" hint="The conversation every lead of the campaign has">
            <select name="template" value={tplId} onChange={(e) => setTplId(e.currentTarget.value)}>
              {templates.map((t) => (
                <option key={t.id} value={t.id}>
                  {t.name}
                </option>
              ))}
            </select>
          </Field>
          <Field label="CSV file" hint="Header row first; a customer_mobile_number column; the other columns go into each lead's payload">
            <input type="file" name="file" accept=".csv,text/csv" required />
          </Field>
          <Field label="Called within (days)" hint="Numbers dialled this recently count as duplicates; 0 leaves them in">
            <input type="number" name="dedupe_days" min={0} max={365} defaultValue={String(DEFAULT_DEDUPE_DAYS)} />
          </Field>
          <div class="field-wide">
            <ErrorNote error={error} />
          </div>
          <div class="form-actions field-wide">
            <button type="button" onClick={onClose}>
              Cancel
            </button>
            <button type="submit" class="primary" disabled={!tplId || busy}>
              {busy ? 'Reading…' : 'Preview'}
            </button>
          </div>
        </form>
      )}
      {loaded && p && !pushing && (
        <form onSubmit={create} id="campaign-create-form">
          <p class="muted" id="preview-summary">
            {loaded.file.name}: <strong>{p.total_rows.toLocaleString()}</strong> rows for template <strong>{loaded.template.name}</strong>. Nothing is queued until you create the campaign.
          </p>
          <h3>Columns</h3>
          <div class="column-map" id="column-map">
            {p.columns.map((c) => (
              <span key={c.column} class="column-chip">
                <code>{c.column}</code> → <span class={c.field.startsWith('payload.') ? '' : 'strong'}>{c.field}</span>
              </span>
            ))}
          </div>
          <h3>First rows</h3>
          <div class="scroll-box">
            <Table<(typeof shown)[number]>
              caption="First rows"
              rows={shown}
              rowKey={(r) => String(r.line)}
              columns={[
                { key: 'line', label: 'Line', class: 'num', render: (r) => r.line },
                ...p.columns.map((c) => ({
                  key: c.column,
                  label: c.column,
                  render: (r: (typeof shown)[number]) => {
                    const lead = r.lead as { payload?: Record<string, unknown> } & Record<string, unknown>;
                    const v = c.field.startsWith('payload.') ? lead.payload?.[c.column] : lead[c.column];
                    return v === undefined ? <span class="muted">—</span> : String(v);
                  },
                })),
              ]}
            />
          </div>
          <h3>Duplicates</h3>
          {p.duplicates.length === 0 ? (
            <p id="duplicates-none" class="muted">
              No duplicates: no number is repeated in the file{loaded.dedupeDays > 0 ? ` or was called in the last ${loaded.dedupeDays} days` : ''}.
            </p>
          ) : (
            <div id="duplicates">
              <p>
                {p.counts.in_file > 0 && <span class="badge badge-warn">{p.counts.in_file} repeated in the file</span>}{' '}
                {p.counts.recent_call > 0 && <span class="badge badge-warn">{p.counts.recent_call} called in the last {loaded.dedupeDays} days</span>}{' '}
                {p.counts.in_campaign > 0 && <span class="badge badge-warn">{p.counts.in_campaign} already queued</span>}
              </p>
              <div class="scroll-box">
                <Table<ImportPreview['duplicates'][number]>
                  caption="Duplicates"
                  rows={p.duplicates}
                  rowKey={(d) => String(d.line)}
                  columns={[
                    { key: 'line', label: 'Line', class: 'num', render: (d) => d.line },
                    { key: 'number', label: 'Number', render: (d) => d.phone_number },
                    { key: 'why', label: 'Why', render: (d) => (d.kind === 'in_file' ? `${KIND_LABEL.in_file} (first on line ${d.first_line})` : d.kind === 'recent_call' && d.called_at ? `${KIND_LABEL.recent_call} (${new Date(d.called_at).toLocaleDateString()})` : KIND_LABEL[d.kind]) },
                  ]}
                />
              </div>
              <label class="check">
                <input type="checkbox" name="skip" checked={skip} onChange={(e) => setSkip(e.currentTarget.checked)} /> Skip duplicates ({p.duplicates.length} {p.duplicates.length === 1 ? 'row' : 'rows'} not queued)
              </label>
            </div>
          )}
          <h3>Campaign</h3>
          <div class="form-grid">
            <Field label="Name">
              <input name="name" required maxLength={200} defaultValue={suggestedName} />
            </Field>
            <Field label="Live calls at most" hint="Empty: no cap of its own">
              <input type="number" name="max_concurrent_calls" min={1} step={1} placeholder="no cap" />
            </Field>
            <Field label="Call starts per second" hint="Spread evenly; empty: no pace of its own">
              <input type="number" name="max_calls_per_second" min={0.01} step="any" placeholder="no pace" />
            </Field>
            <label class="check field-wide">
              <input type="checkbox" name="breaker" checked={breakerOn} onChange={(e) => setBreakerOn(e.currentTarget.checked)} /> Pause the campaign when too many calls fail
            </label>
            {breakerOn && (
              <>
            <Field label="Failing share (%)">
              <input type="number" name="failure_percent" min={1} max={100} defaultValue="50" />
            </Field>
            <Field label="Over the last (seconds)">
              <input type="number" name="window_seconds" min={1} defaultValue="120" />
            </Field>
            <Field label="After at least (calls)">
              <input type="number" name="min_calls" min={1} defaultValue="10" />
            </Field>
              </>
            )}
          </div>
          <ErrorNote error={error} />
          <div class="form-actions">
            <button type="button" onClick={() => setLoaded(undefined)}>
              Back
            </button>
            <button type="submit" class="primary" id="create-campaign" disabled={busy}>
              Create and queue {(p.total_rows - (skip ? p.duplicates.length : 0)).toLocaleString()} leads
            </button>
          </div>
        </form>
      )}
      {pushing && (
        <div class="import-progress">
          <label class="field">
            <span class="field-label">
              Queuing: {pushing.sent.toLocaleString()} of {pushing.rows.toLocaleString()} rows
            </span>
            <progress max={pushing.rows} value={pushing.sent} />
          </label>
          <p role="status">
            {pushing.queued} queued, {pushing.skipped} duplicates skipped, {pushing.rejected} rejected.
          </p>
          <ErrorNote error={error} />
        </div>
      )}
    </Modal>
  );
}

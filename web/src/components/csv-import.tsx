/**
 * Import leads from a CSV: each row becomes a push body by the same rules as `dialer leads
 * import` (columns request_id, reseller_id, merchant_id, execution_mode, reporting_webhook_url at
 * the top level, the rest into payload), sent through POST /leads/batch in batches with a
 * progress bar; the summary lists every rejected row with its reason, and they can be downloaded.
 */
import { useState } from 'preact/hooks';
import { parse } from 'csv-parse/browser/esm/sync';
import { leads } from '../api/endpoints.js';
import type { Template } from '../api/types.js';
import { checkColumns, describeRejection, toPushBody } from '../../../src/leads/csv-rows.js';
import { session } from '../session.js';
import { ErrorNote, Field, Modal, Table } from './ui.js';
import { FormFooter, NamedSelect } from './list-page.js';
import { saveBlob } from './download.js';
import { csvLine } from '../../../src/lib/csv.js';

const BATCH = 100;
const IN_FLIGHT = 2;

interface Rejection {
  line: number;
  status: number;
  reason: string;
  record: Record<string, string>;
}

interface Progress {
  rows: number;
  sent: number;
  queued: number;
  rejected: Rejection[];
  done: boolean;
  columns: string[];
}

/** A reason in the file's own terms: its columns, not the request body's JSON pointers. */
const inColumns = (reason: string) => reason.replace(/^Request body: /, '').replace(/\/payload\/([\w.-]+)/g, '$1').replace(/(^|\s)\/([a-z_]+)\b/g, '$1$2');

export function CsvImport({ templates, onClose, onDone }: { templates: Template[]; onClose: () => void; onDone: () => void }) {
  const me = session.get()!.me;
  const [tplId, setTplId] = useState(templates[0]?.id ?? '');
  const [error, setError] = useState<Error>();
  const [progress, setProgress] = useState<Progress>();
  const template = templates.find((t) => t.id === tplId);

  const run = async (event: Event) => {
    event.preventDefault();
    const file = (new FormData(event.currentTarget as HTMLFormElement).get('file') as File | null) ?? undefined;
    if (!template || !file || file.size === 0) return setError(new Error('Choose a CSV file.'));
    setError(undefined);
    let records: { record: Record<string, string>; info: { lines: number } }[];
    let columns: string[] = [];
    const defaults = { template: template.name, resellerId: template.reseller_id, merchantId: template.merchant_id ?? me.merchant_id ?? undefined };
    try {
      records = parse(await file.text(), {
        columns: (header: string[]) => (columns = checkColumns(header, defaults, 'add a reseller_id column')),
        bom: true,
        skip_empty_lines: true,
        trim: true,
        info: true,
      }) as unknown as typeof records;
    } catch (err) {
      return setError(err as Error);
    }
    const base = file.name.replace(/\.[^.]*$/, '');
    const rows = records.map(({ record, info }) => ({ line: info.lines, record, body: toPushBody(record, info.lines, base, defaults) }));
    const state: Progress = { rows: rows.length, sent: 0, queued: 0, rejected: [], done: false, columns };
    setProgress({ ...state });
    const batches: (typeof rows)[] = [];
    for (let i = 0; i < rows.length; i += BATCH) batches.push(rows.slice(i, i + BATCH));
    let next = 0;
    const worker = async () => {
      while (next < batches.length) {
        const batch = batches[next++]!;
        const res = await leads.batch(batch.map((r) => r.body));
        for (const item of res.results) {
          const row = batch[item.index]!;
          if (item.status === 201) state.queued++;
          else state.rejected.push({ line: row.line, status: item.status, reason: inColumns(describeRejection(item.problem as never)), record: row.record });
        }
        state.sent += batch.length;
        setProgress({ ...state, rejected: [...state.rejected] });
      }
    };
    try {
      await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    } catch (err) {
      setError(err as Error);
    }
    state.rejected.sort((a, b) => a.line - b.line);
    setProgress({ ...state, rejected: [...state.rejected], done: true });
    onDone();
  };

  const downloadRejected = () => {
    if (!progress) return;
    const cols = [...progress.columns, 'line', 'status', 'reason'];
    const lines = [csvLine(cols), ...progress.rejected.map((r) => csvLine([...progress.columns.map((c) => r.record[c] ?? ''), String(r.line), String(r.status), r.reason]))];
    saveBlob(new Blob([lines.join('\r\n') + '\r\n'], { type: 'text/csv' }), 'rejected-rows.csv');
  };

  return (
    <Modal title="Import leads from a CSV" open onClose={onClose} wide>
      {!progress && (
        <form onSubmit={run} class="form-grid">
          <Field label="Template" error={undefined}>
            <NamedSelect name="template" items={templates} value={tplId} onChange={setTplId} />
          </Field>
          <Field label="CSV file" hint="Header row first; a customer_mobile_number column; every other column goes into the lead's payload">
            <input type="file" name="file" accept=".csv,text/csv" required />
          </Field>
          <FormFooter error={error} onCancel={onClose} submit="Import" disabled={!template} />
        </form>
      )}
      {progress && (
        <div class="import-progress">
          <label class="field">
            <span class="field-label">
              {progress.done ? 'Done' : 'Importing'}: {progress.sent.toLocaleString()} of {progress.rows.toLocaleString()} rows
            </span>
            <progress id="import-progress" max={progress.rows} value={progress.sent} />
          </label>
          <p id="import-summary" role="status">
            <strong>{progress.queued.toLocaleString()}</strong> queued, <strong>{progress.rejected.length.toLocaleString()}</strong> rejected.
          </p>
          <ErrorNote error={error} />
          {progress.done && progress.rejected.length > 0 && (
            <>
              <div class="card-head">
                <h3>Rejected rows</h3>
                <button type="button" onClick={downloadRejected}>
                  Download rejected rows
                </button>
              </div>
              <div class="scroll-box">
                <Table
                  caption="Rejected rows"
                  rows={progress.rejected}
                  rowKey={(r) => String(r.line)}
                  columns={[
                    { key: 'line', label: 'Line', class: 'num', render: (r) => r.line },
                    { key: 'status', label: 'HTTP', class: 'num', render: (r) => r.status },
                    { key: 'reason', label: 'Reason', render: (r) => r.reason },
                  ]}
                />
              </div>
            </>
          )}
          {progress.done && (
            <div class="form-actions">
              <button type="button" class="primary" onClick={onClose}>
                Close
              </button>
            </div>
          )}
        </div>
      )}
    </Modal>
  );
}

/** A campaign's results: a row per lead, as JSON pages or as CSV with the analysis fields as columns. */
import type { Queryable } from '../db/index.js';
import { csvLine } from '../lib/csv.js';
import { findTemplateById } from '../templates/index.js';
import { CampaignsRepository, type ResultLeadRow } from './repository.js';

export interface ResultRowView {
  lead_id: string;
  request_id: string;
  number: string | null;
  status: string;
  outcome: string | null;
  attempts: number;
  duration_seconds: number | null;
  cost: number | null;
  analysis: Record<string, unknown>;
  lead_url: string;
  recording_url: string | null;
}

/** The analysis a lead's call left, flat: summary, success and each field. */
function flatAnalysis(a: Record<string, unknown> | null): Record<string, unknown> {
  if (!a) return {};
  const out: Record<string, unknown> = {};
  if (a.summary !== undefined) out.summary = a.summary;
  if (a.success !== undefined) out.success = a.success;
  if (a.fields && typeof a.fields === 'object') Object.assign(out, a.fields);
  return out;
}

export function resultView(r: ResultLeadRow, base: string): ResultRowView {
  return {
    lead_id: r.id,
    request_id: r.request_id,
    number: r.number,
    status: r.status,
    outcome: r.outcome,
    attempts: r.attempt_count,
    duration_seconds: r.duration_seconds,
    cost: r.cost === null ? null : Number(r.cost),
    analysis: flatAnalysis(r.analysis),
    lead_url: `${base}/leads/${encodeURIComponent(r.id)}`,
    recording_url: r.recording_url && r.call_id ? `${base}/leads/recording/${encodeURIComponent(r.call_id)}` : null,
  };
}

const FIXED = ['lead_id', 'request_id', 'number', 'status', 'outcome', 'attempts', 'duration_seconds', 'cost'] as const;

/** The CSV's columns: the fixed ones, the analysis (summary, success, the template's fields by name), the links. */
export async function resultColumns(q: Queryable, templateId: string): Promise<string[]> {
  const template = await findTemplateById(q, templateId);
  const fields = Object.keys(template?.flow.post_call_analysis?.fields ?? {}).sort();
  const analysis = template?.flow.post_call_analysis ? ['summary', 'success', ...fields] : [];
  return [...FIXED, ...analysis.map((f) => `analysis_${f}`), 'lead_url', 'recording_url'];
}

function csvRow(columns: readonly string[], r: ResultRowView): string {
  return csvLine(
    columns.map((c) => {
      if (c.startsWith('analysis_')) {
        const v = r.analysis[c.slice('analysis_'.length)];
        return v !== null && typeof v === 'object' ? JSON.stringify(v) : v;
      }
      return r[c as keyof ResultRowView] as unknown;
    }),
  );
}

/** Every lead of the campaign as CSV lines (the header first), a thousand leads read at a time. */
export async function* resultsCsv(q: Queryable, campaignId: string, columns: readonly string[], base: string): AsyncGenerator<string> {
  yield csvLine(columns) + '\r\n';
  const repo = new CampaignsRepository(q);
  for (let offset = 0; ; offset += 1000) {
    const { rows } = await repo.results(campaignId, 1000, offset);
    if (rows.length > 0) yield rows.map((r) => csvRow(columns, resultView(r, base))).join('\r\n') + '\r\n';
    if (rows.length < 1000) return;
  }
}

/**
 * `dialer leads import`: pushes a CSV of leads to a running Dialer through POST /leads/batch, 1,000
 * rows a request, a few requests in flight. Each row becomes one push body (csv-rows.ts says how).
 * The file is streamed, so its size is unbounded.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'csv-parse';
import { checkColumns, CsvHeaderError, describeRejection, toPushBody } from './csv-rows.js';
import type { DuplicateKind } from './duplicates.js';

export { TOP_LEVEL_COLUMNS } from './csv-rows.js';
const BATCH_SIZE = 1000;
const IN_FLIGHT = 3;
const RETRIES = 3;

export interface ImportOptions {
  file: string;
  template: string;
  /** Base URL of the API including the prefix, e.g. http://127.0.0.1:8080/agent/voice/dialer */
  apiUrl: string;
  token: string;
  resellerId?: string;
  merchantId?: string;
  executionMode?: string;
  /** The campaign every lead joins (POST /campaigns). */
  campaignId?: string;
  /** Push rows that have no customer_mobile_number column (they are queued but never dialled). */
  allowMissingPhone?: boolean;
  /** Leave out the duplicates (docs/campaigns.md, "Duplicates at the door") instead of only counting them. */
  skipDuplicates?: boolean;
  /** Numbers the reseller dialled within this many days count as duplicates (0: not checked). */
  dedupeDays?: number;
  onProgress?: (p: ImportProgress) => void;
}

export interface ImportProgress {
  bytes: number;
  totalBytes: number;
  rows: number;
  queued: number;
  rejected: number;
}

export interface Rejection {
  /** Line of the file where the row starts (the header is line 1). */
  line: number;
  status: number;
  detail: string;
}

export interface ImportSummary {
  rows: number;
  queued: number;
  /** Duplicates found, by kind; with skipDuplicates none of them was queued. */
  duplicates: Record<DuplicateKind, number>;
  skipped: number;
  rejected: Rejection[];
  seconds: number;
}

/** A failure that stops the import (bad file, bad token, service unreachable). */
export class ImportError extends Error {
  override name = 'ImportError';
}

interface Row {
  line: number;
  body: Record<string, unknown>;
}

export async function importCsv(options: ImportOptions): Promise<ImportSummary> {
  const started = Date.now();
  let totalBytes: number;
  try {
    totalBytes = fs.statSync(options.file).size;
  } catch {
    throw new ImportError(`cannot read ${options.file}`);
  }
  const defaultRequestId = path.basename(options.file).replace(/\.[^.]*$/, '');
  const progress: ImportProgress = { bytes: 0, totalBytes, rows: 0, queued: 0, rejected: 0 };
  const rejected: Rejection[] = [];
  const duplicates: Record<DuplicateKind, number> = { in_file: 0, in_campaign: 0, recent_call: 0 };
  let skipped = 0;
  // Numbers seen in the file so far: a batch sees only its own rows, the file is checked here.
  const seen = new Set<string>();

  const parser = fs.createReadStream(options.file).pipe(
    parse({ columns: (header: string[]) => checkHeader(header, options), bom: true, skip_empty_lines: true, trim: true, info: true, relax_column_count: false }),
  );

  const inFlight = new Set<Promise<void>>();
  let batch: Row[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const rows = batch;
    batch = [];
    while (inFlight.size >= IN_FLIGHT) await Promise.race(inFlight);
    const job = sendBatch(options, rows).then((results) => {
      for (const r of results) {
        if (r.duplicate && r.duplicate !== 'in_file') duplicates[r.duplicate]++;
        if (r.skipped) skipped++;
        else if (r.status === 201) progress.queued++;
        else {
          progress.rejected++;
          rejected.push({ line: r.line, status: r.status, detail: r.detail });
        }
      }
      options.onProgress?.({ ...progress });
    });
    const tracked = job.finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
  };

  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number; bytes: number } }>) {
      progress.rows++;
      progress.bytes = info.bytes;
      const line = info.lines; // the line the record ends on; equal to its start for one-line rows
      const phone = record.customer_mobile_number;
      if (phone && seen.has(phone)) {
        duplicates.in_file++;
        if (options.skipDuplicates) {
          skipped++;
          continue;
        }
      } else if (phone) seen.add(phone);
      batch.push({ line, body: toPushBody(record, line, defaultRequestId, options) });
      if (batch.length >= BATCH_SIZE) await flush();
    }
  } catch (err) {
    if (err instanceof ImportError) throw err;
    throw new ImportError(`${options.file}: ${(err as Error).message}`);
  }
  await flush();
  await Promise.all(inFlight);
  progress.bytes = totalBytes;
  options.onProgress?.({ ...progress });
  rejected.sort((a, b) => a.line - b.line);
  return { rows: progress.rows, queued: progress.queued, rejected, duplicates, skipped, seconds: (Date.now() - started) / 1000 };
}

function checkHeader(header: string[], options: ImportOptions): string[] {
  try {
    return checkColumns(header, options);
  } catch (err) {
    if (err instanceof CsvHeaderError) throw new ImportError(err.message);
    throw err;
  }
}

interface BatchResponse {
  results: { index: number; status: number; skipped?: boolean; duplicate?: { kind: DuplicateKind }; problem?: { detail: string; errors?: { path: string; message: string }[] } }[];
}

interface Sent extends Rejection {
  skipped: boolean;
  duplicate: DuplicateKind | undefined;
}

async function sendBatch(options: ImportOptions, rows: Row[]): Promise<Sent[]> {
  const check = options.skipDuplicates || options.dedupeDays ? { skip_duplicates: options.skipDuplicates ?? false, ...(options.dedupeDays ? { dedupe_days: options.dedupeDays } : {}) } : {};
  const url = `${options.apiUrl.replace(/\/+$/, '')}/leads/batch`;
  let lastError = '';
  for (let attempt = 0; attempt <= RETRIES; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, 500 * 2 ** (attempt - 1)));
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${options.token}` },
        body: JSON.stringify({ leads: rows.map((r) => r.body), ...check }),
      });
    } catch (err) {
      lastError = `cannot reach ${url}: ${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message}`;
      continue;
    }
    const text = await res.text();
    if (res.status === 200) {
      const body = JSON.parse(text) as BatchResponse;
      return body.results.map((r) => ({
        line: rows[r.index]!.line,
        status: r.status,
        detail: r.status === 201 || r.skipped ? '' : describeRejection(r.problem),
        skipped: r.skipped ?? false,
        duplicate: r.duplicate?.kind,
      }));
    }
    const detail = safeDetail(text);
    // 5xx: nothing of the batch was queued, so sending it again is safe.
    if (res.status >= 500) {
      lastError = `${res.status} ${detail}`;
      continue;
    }
    throw new ImportError(`the service refused the import: ${res.status} ${detail}`);
  }
  throw new ImportError(`giving up after ${RETRIES + 1} tries: ${lastError}`);
}

function safeDetail(text: string): string {
  try {
    const body = JSON.parse(text) as { detail?: string };
    return body.detail ?? text.slice(0, 200);
  } catch {
    return text.slice(0, 200);
  }
}

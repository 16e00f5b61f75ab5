/**
 * POST /leads/import/preview: what an import of a CSV would push, before anything is queued. The
 * rows become push bodies by the importers' own rules (csv-rows.ts), the columns are shown with
 * where each goes, and the duplicates are found as POST /leads/batch with skip_duplicates finds them
 * (duplicates.ts). Nothing is written.
 */
import { parse } from 'csv-parse/sync';
import { Type, type Static } from 'typebox';
import { assertOwnerInScope, type Principal } from '../auth/index.js';
import { campaignRefs } from '../campaigns/index.js';
import type { Queryable } from '../db/index.js';
import { AppError, unprocessable } from '../lib/errors.js';
import { checkColumns, CsvHeaderError, TOP_LEVEL_COLUMNS, toPushBody } from './csv-rows.js';
import { countDuplicates, findDuplicates } from './duplicates.js';
import { DuplicateInfo } from './schema.js';

/** Rows the preview shows; the duplicates and counts cover the whole file. */
export const PREVIEW_ROWS = 100;
/** The largest CSV the preview reads (about 100,000 short rows). */
export const PREVIEW_CSV_BYTES = 8 * 1024 * 1024;

export const PreviewBody = Type.Object(
  {
    csv: Type.String({ minLength: 1, maxLength: PREVIEW_CSV_BYTES, description: 'The CSV text, a header row first' }),
    template: Type.String({ minLength: 1, description: 'Template name, as for POST /leads' }),
    file_name: Type.Optional(Type.String({ maxLength: 200, description: 'Names the default request_id (<name>:<line>), as the importers do' })),
    reseller_id: Type.Optional(Type.String({ minLength: 1, description: "The leads' reseller (or a reseller_id column; default: the token's)" })),
    merchant_id: Type.Optional(Type.String({ minLength: 1 })),
    campaign_id: Type.Optional(Type.String({ minLength: 1, description: 'The campaign the leads would join: numbers still waiting or live in it are duplicates' })),
    dedupe_days: Type.Optional(Type.Integer({ minimum: 0, maximum: 365, description: 'Numbers the reseller dialled within this many days are duplicates (0 or absent: not checked)' })),
  },
  { additionalProperties: false },
);
export type PreviewBody = Static<typeof PreviewBody>;

export const ImportPreview = Type.Object({
  columns: Type.Array(
    Type.Object({
      column: Type.String(),
      field: Type.String({ description: 'Where its cells go: a top-level field of the push body (request_id, ...) or payload.<column>' }),
    }),
  ),
  total_rows: Type.Integer(),
  rows: Type.Array(Type.Object({ line: Type.Integer({ description: 'Line of the file (the header is 1)' }), lead: Type.Record(Type.String(), Type.Unknown()) }), {
    description: `The first ${PREVIEW_ROWS} rows as push bodies`,
  }),
  duplicates: Type.Array(
    Type.Object({
      line: Type.Integer({ description: 'Line of the duplicate row' }),
      first_line: Type.Optional(Type.Integer({ description: 'in_file: the line that keeps the number' })),
      kind: DuplicateInfo.properties.kind,
      phone_number: Type.String(),
      lead_id: DuplicateInfo.properties.lead_id,
      called_at: DuplicateInfo.properties.called_at,
    }),
  ),
  counts: Type.Object({ in_file: Type.Integer(), in_campaign: Type.Integer(), recent_call: Type.Integer() }),
});
export type ImportPreview = Static<typeof ImportPreview>;

export async function previewImport(db: Queryable, caller: Principal, body: PreviewBody): Promise<ImportPreview> {
  const resellerId = body.reseller_id ?? caller.resellerId ?? undefined;
  const merchantId = body.merchant_id ?? (caller.role === 'merchant' || caller.role === 'user' ? caller.merchantId : null);
  if (resellerId) assertOwnerInScope(caller, resellerId, merchantId);
  if (body.campaign_id) {
    const [campaign] = await campaignRefs(db, [body.campaign_id]);
    if (!campaign || (resellerId && campaign.reseller_id !== resellerId) || (caller.role !== 'admin' && campaign.reseller_id !== caller.resellerId)) {
      throw new AppError(404, 'campaign_not_found', `No campaign ${body.campaign_id} exists in scope`, [{ path: '/campaign_id', message: 'names no campaign of this reseller/merchant' }]);
    }
  }
  let header: string[] = [];
  let records: { record: Record<string, string>; info: { lines: number } }[];
  const defaults = { template: body.template, resellerId, merchantId: merchantId ?? undefined, campaignId: body.campaign_id };
  try {
    records = parse(body.csv, {
      columns: (h: string[]) => (header = checkColumns(h, defaults, 'add a reseller_id column or give reseller_id')),
      bom: true,
      skip_empty_lines: true,
      trim: true,
      info: true,
    }) as unknown as typeof records;
  } catch (err) {
    if (err instanceof CsvHeaderError) throw unprocessable(`The CSV's header: ${err.message}`, [{ path: '/csv', message: err.message }], 'csv_header_refused');
    const message = (err as Error).message;
    throw unprocessable(`The CSV cannot be read: ${message}`, [{ path: '/csv', message }], 'csv_unreadable');
  }
  const base = (body.file_name ?? 'import').replace(/\.[^.]*$/, '');
  const phones = records.map(({ record }) => record.customer_mobile_number || undefined);
  const rowReseller = resellerId ?? records[0]?.record.reseller_id;
  const found = rowReseller ? await findDuplicates(db, phones, { resellerId: rowReseller, campaignId: body.campaign_id, dedupeDays: body.dedupe_days }) : [];
  const lineOf = (index: number) => records[index]!.info.lines;
  return {
    columns: header.map((column) => ({ column, field: (TOP_LEVEL_COLUMNS as readonly string[]).includes(column) ? column : `payload.${column}` })),
    total_rows: records.length,
    rows: records.slice(0, PREVIEW_ROWS).map(({ record, info }) => ({ line: info.lines, lead: toPushBody(record, info.lines, base, defaults) })),
    duplicates: found.map(({ index, first_index, ...d }) => ({ line: lineOf(index), ...(first_index === undefined ? {} : { first_line: lineOf(first_index) }), ...d })),
    counts: countDuplicates(found),
  };
}

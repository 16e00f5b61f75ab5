/**
 * How a CSV row becomes a push body, for every importer (`dialer leads import` and the
 * dashboard's CSV import): the columns request_id, reseller_id, merchant_id, execution_mode,
 * reporting_webhook_url and campaign_id go to the top level, every other non-empty cell into `payload`. Pure: the
 * dashboard bundles it.
 */

export const TOP_LEVEL_COLUMNS = ['request_id', 'reseller_id', 'merchant_id', 'execution_mode', 'reporting_webhook_url', 'campaign_id'] as const;

export interface RowDefaults {
  template: string;
  resellerId?: string | undefined;
  merchantId?: string | undefined;
  executionMode?: string | undefined;
  /** The campaign every lead joins. */
  campaignId?: string | undefined;
  /** Accept a file without a customer_mobile_number column (its leads are queued but never dialled). */
  allowMissingPhone?: boolean | undefined;
}

/** A header the importer refuses, with what to do about it. */
export class CsvHeaderError extends Error {
  override name = 'CsvHeaderError';
}

/** The header's column names, or why the file cannot be imported as it is. */
export function checkColumns(header: string[], defaults: Pick<RowDefaults, 'resellerId' | 'allowMissingPhone'>, missingResellerHint = 'pass --reseller-id or add a reseller_id column'): string[] {
  const columns = header.map((h) => h.trim());
  const dup = columns.find((c, i) => columns.indexOf(c) !== i);
  if (dup) throw new CsvHeaderError(`the column ${JSON.stringify(dup)} appears twice in the header`);
  if (columns.some((c) => c === '')) throw new CsvHeaderError('the header has an empty column name');
  if (!columns.includes('customer_mobile_number') && !defaults.allowMissingPhone) {
    throw new CsvHeaderError(
      'the CSV has no customer_mobile_number column: its leads would be queued but never dialled. Rename the phone column, or pass --allow-missing-phone',
    );
  }
  if (!columns.includes('reseller_id') && !defaults.resellerId) throw new CsvHeaderError(missingResellerHint);
  return columns;
}

/** The push body of one row; `line` (where the row is in the file) makes the default request_id unique. */
export function toPushBody(record: Record<string, string>, line: number, defaultRequestId: string, defaults: RowDefaults): Record<string, unknown> {
  const body: Record<string, unknown> = { template: defaults.template, request_id: `${defaultRequestId}:${line}` };
  if (defaults.resellerId) body.reseller_id = defaults.resellerId;
  if (defaults.merchantId) body.merchant_id = defaults.merchantId;
  if (defaults.executionMode) body.execution_mode = defaults.executionMode;
  if (defaults.campaignId) body.campaign_id = defaults.campaignId;
  const payload: Record<string, string> = {};
  for (const [column, value] of Object.entries(record)) {
    if (value === '') continue;
    if ((TOP_LEVEL_COLUMNS as readonly string[]).includes(column)) body[column] = value;
    else payload[column] = value;
  }
  body.payload = payload;
  return body;
}

/** One line saying why a row was refused: the problem's detail and the fields it names. */
export function describeRejection(problem: { detail: string; errors?: { path: string; message: string }[] } | undefined): string {
  if (!problem) return 'rejected';
  const fields = problem.errors?.map((e) => `${e.path} ${e.message}`).join('; ');
  return fields && !problem.detail.includes(fields) ? `${problem.detail} [${fields}]` : problem.detail;
}

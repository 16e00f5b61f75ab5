/**
 * What every analytics query reads: the leads in the caller's scope that pass the filters of the
 * request, test leads excluded, as one WHERE clause over `leads l`. Each query adds its own SQL.
 *
 * Terminology
 * - live lead: a lead that is not a test: not from the playground (`is_playground`) and not in a
 *   `*_TEST` execution mode. Analytics only ever count live leads.
 * - activity time: when a lead happened for analytics, `coalesce(call_initiated_time, created_at)`:
 *   the start of its (latest) call, or its push time when it was never dialled. Date filters, time
 *   buckets and the hourly heatmap all use it; migration 002 indexes exactly this expression.
 * - call: a dialled attempt. Analytics hold one row per lead, so a lead dialled at least once
 *   (`attempt_count >= 1`) is one call, at its latest attempt's start; a lead never dialled is none.
 *   A live call is a call whose lead is PROCESSING. Requests with `calls_only` count calls.
 * - call outcome: the outcome a dial ended with: any outcome but those Dialer gives without a dial
 *   (aborted, PRECHECK_FAILED, BLACKLISTED: `undialled` in lifecycle/outcomes.ts).
 */
import { scopeCondition, type Principal } from '../auth/index.js';
import { NOT_REACHED_OUTCOMES, UNDIALLED_OUTCOMES } from '../lifecycle/index.js';

/** The activity time of a lead (alias `l`); written exactly as in the indexes of migration 002. */
export const ACTIVITY_AT = 'coalesce(l.call_initiated_time, l.created_at)';

/** Live (non-test) leads; written exactly as the partial-index predicate of migration 002. */
export const LIVE_LEADS = "NOT l.is_playground AND l.execution_mode NOT IN ('TELEPHONY_TEST', 'WEBRTC_TEST')";

/** SQL: the lead (alias `l`) was dialled at least once: it is a call. */
export const DIALLED = 'l.attempt_count >= 1';

/** SQL of a list of outcomes, quoted. */
export const sqlList = (outcomes: readonly string[]) => outcomes.map((o) => `'${o}'`).join(', ');

/**
 * SQL: whether `column` holds a call outcome (not one given without a dial). A lead holds one only
 * once it was dialled, so the rollup's per-outcome rows answer it as the leads do.
 */
export const callOutcome = (column: string) => `${column} NOT IN (${sqlList(UNDIALLED_OUTCOMES)})`;

/** SQL: the lead finished with a conversation (alias `l`): an outcome that is not one of Dialer's own. */
export const REACHED = `(l.status = 'FINISHED' AND l.outcome IS NOT NULL AND l.outcome NOT IN (${sqlList(NOT_REACHED_OUTCOMES)}))`;

/** Positional parameters of one statement: `add` returns the placeholder of the value. */
export class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/** The filters of a request, checked and resolved (dates as instants). */
export interface ResolvedFilters {
  templateId?: string;
  merchantId?: string;
  resellerId?: string;
  /** Inclusive lower bound of the activity time. */
  from?: Date;
  /** Upper bound of the activity time; exclusive when the request gave a date without a time. */
  to?: { at: Date; inclusive: boolean };
  minDurationSeconds?: number;
  maxDurationSeconds?: number;
  sentimentMin?: number;
  sentimentMax?: number;
  payload?: Record<string, unknown>;
}

/**
 * The shared WHERE clause over leads (alias `l`). The reseller, merchant and template filters are
 * ANDed with the scope, so they only ever narrow it: another tenant's ID yields no rows, not its data.
 */
export function leadsWhere(principal: Principal, filters: ResolvedFilters, params: Params): string {
  const conds = [LIVE_LEADS, ...factConditions(principal, filters, params, ACTIVITY_AT)];
  // Containment, so the GIN (jsonb_path_ops) index of migration 002 serves it.
  if (filters.payload && Object.keys(filters.payload).length > 0) conds.push(`l.payload @> ${params.add(JSON.stringify(filters.payload))}::jsonb`);
  return conds.join(' AND ');
}

/**
 * The conditions of every filter but the payload, over rows (alias `l`) that carry a lead's facts
 * under the leads' column names. `activityAt`: the SQL of the activity time in those rows.
 */
export function factConditions(principal: Principal, filters: ResolvedFilters, params: Params, activityAt: string): string[] {
  return [...tenantConditions(principal, filters, params, { reseller: 'l.reseller_id', merchant: 'l.merchant_id', template: 'l.template_id' }), ...valueConditions(filters, params, activityAt)];
}

/**
 * The scope and the reseller, merchant and template filters, over the given columns. They are ANDed
 * with the scope, so they only ever narrow it: another tenant's ID yields no rows, not its data.
 */
export function tenantConditions(principal: Principal, filters: ResolvedFilters, params: Params, columns: { reseller: string; merchant: string; template: string }): string[] {
  const conds = [scopeCondition(principal, { reseller: columns.reseller, merchant: columns.merchant }, params.values)];
  if (filters.resellerId !== undefined) conds.push(`${columns.reseller} = ${params.add(filters.resellerId)}`);
  if (filters.merchantId !== undefined) conds.push(`${columns.merchant} = ${params.add(filters.merchantId)}`);
  if (filters.templateId !== undefined) conds.push(`${columns.template} = ${params.add(filters.templateId)}`);
  return conds;
}

/** The date, duration and sentiment filters over rows (alias `l`) with the leads' column names. */
export function valueConditions(filters: ResolvedFilters, params: Params, activityAt: string): string[] {
  const conds: string[] = [];
  if (filters.from) conds.push(`${activityAt} >= ${params.add(filters.from.toISOString())}::timestamptz`);
  if (filters.to) conds.push(`${activityAt} ${filters.to.inclusive ? '<=' : '<'} ${params.add(filters.to.at.toISOString())}::timestamptz`);
  if (filters.minDurationSeconds !== undefined) conds.push(`l.duration_seconds >= ${params.add(filters.minDurationSeconds)}::int`);
  if (filters.maxDurationSeconds !== undefined) conds.push(`l.duration_seconds <= ${params.add(filters.maxDurationSeconds)}::int`);
  // sentiment is a real: compare as real, or 0.7 (float8) would exceed a stored 0.7 (float4).
  if (filters.sentimentMin !== undefined) conds.push(`l.sentiment >= ${params.add(filters.sentimentMin)}::real`);
  if (filters.sentimentMax !== undefined) conds.push(`l.sentiment <= ${params.add(filters.sentimentMax)}::real`);
  return conds;
}

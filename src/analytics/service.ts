/**
 * The rules of POST /analytics beyond what the schema checks: dates that parse (400), values that
 * make sense together (422), the time zone; then one query function runs inside the caller's scope,
 * over the rollup when the request selects whole rollup rows and the answer is exact, over the
 * payload terms when it has a payload filter they hold, else over the leads (docs/analytics.md,
 * "Performance").
 */
import type { Principal } from '../auth/index.js';
import type { Queryable } from '../db/index.js';
import { isTimeZone } from '../lib/time.js';
import { badRequest, pgErrorCode, unprocessable, type FieldError } from '../lib/errors.js';
import { readFilterDate } from './dates.js';
import { ACTIVITY_AT, leadsWhere, Params, type ResolvedFilters } from './filters.js';
import { QUERIES, type QueryContext, type RowsPage } from './queries/index.js';
import { ROLLUP_QUERIES, rollupCanAnswer, rollupWhere } from './rollup/index.js';
import { TERMS_ACTIVITY_AT, termsCanAnswer, termsFrom } from './terms/index.js';
import { MAX_BUCKETS, type AnalyticsBody, type AnalyticsRow, type Filters, type Granularity, type QueryType } from './schemas.js';

export interface AnalyticsResult {
  query_type: QueryType;
  data: AnalyticsRow[];
  total: number;
  page: number;
  page_size: number;
}

const BUCKET_MS: Record<Granularity, number> = { hour: 3_600_000, day: 86_400_000, week: 7 * 86_400_000, month: 28 * 86_400_000 };
const TIME_SERIES: ReadonlySet<QueryType> = new Set(['calls_over_time', 'avg_duration_over_time']);
// IANA names only: PostgreSQL reads a bare "+05:30" as a POSIX zone, with the sign reversed.
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+\-]*(\/[A-Za-z0-9_+\-]+)*$/;
/** Zones already checked: the runtime's check builds an Intl.DateTimeFormat (50-75 us a request). */
const knownZones = new Set<string>();
const MAX_KNOWN_ZONES = 1000;

function knownZone(timeZone: string): boolean {
  if (knownZones.has(timeZone)) return true;
  if (!ZONE_NAME.test(timeZone) || !isTimeZone(timeZone)) return false;
  if (knownZones.size < MAX_KNOWN_ZONES) knownZones.add(timeZone);
  return true;
}

/** Checks and resolves the filters; throws 400 for what cannot be read, 422 for what cannot hold. */
export function resolveFilters(filters: Filters, timeZone: string): ResolvedFilters {
  const malformed: FieldError[] = [];
  const from = filters.date_from === undefined ? undefined : readFilterDate(filters.date_from, timeZone, false);
  const to = filters.date_to === undefined ? undefined : readFilterDate(filters.date_to, timeZone, true);
  if (filters.date_from !== undefined && !from) malformed.push({ path: '/filters/date_from', message: 'must be an ISO 8601 date or date-time' });
  if (filters.date_to !== undefined && !to) malformed.push({ path: '/filters/date_to', message: 'must be an ISO 8601 date or date-time' });
  if (malformed.length > 0) throw badRequest(`Request body: ${malformed[0]!.path} ${malformed[0]!.message}`, malformed, 'validation_failed');

  const invalid: FieldError[] = [];
  if (from && to && (to.inclusive ? from.at > to.at : from.at >= to.at)) {
    invalid.push({ path: '/filters/date_from', message: 'must not be after date_to' });
  }
  if (filters.min_duration !== undefined && filters.max_duration !== undefined && filters.min_duration > filters.max_duration) {
    invalid.push({ path: '/filters/min_duration', message: 'must not be greater than max_duration' });
  }
  if (filters.sentiment_min !== undefined && filters.sentiment_max !== undefined && filters.sentiment_min > filters.sentiment_max) {
    invalid.push({ path: '/filters/sentiment_min', message: 'must not be greater than sentiment_max' });
  }
  if (invalid.length > 0) throw unprocessable(`Filters: ${invalid[0]!.path} ${invalid[0]!.message}`, invalid, 'invalid_filters');

  const resolved: ResolvedFilters = {};
  if (filters.template_id !== undefined) resolved.templateId = filters.template_id;
  if (filters.merchant_id !== undefined) resolved.merchantId = filters.merchant_id;
  if (filters.reseller_id !== undefined) resolved.resellerId = filters.reseller_id;
  if (from) resolved.from = from.at;
  if (to) resolved.to = to;
  if (filters.min_duration !== undefined) resolved.minDurationSeconds = filters.min_duration;
  if (filters.max_duration !== undefined) resolved.maxDurationSeconds = filters.max_duration;
  if (filters.sentiment_min !== undefined) resolved.sentimentMin = filters.sentiment_min;
  if (filters.sentiment_max !== undefined) resolved.sentimentMax = filters.sentiment_max;
  if (filters.payload_filters !== undefined) resolved.payload = filters.payload_filters;
  return resolved;
}

/**
 * Where answers come from: `auto` the rollup when it can answer exactly, else the payload terms
 * when they can, else the leads; `live` always the leads; `rollup` only the rollup and `terms` only
 * the payload terms (an error when they cannot answer: for tests).
 */
export type AnalyticsSource = 'auto' | 'live' | 'rollup' | 'terms';

export class AnalyticsService {
  constructor(
    private readonly db: Queryable,
    private readonly options: { source?: AnalyticsSource } = {},
  ) {}

  async query(caller: Principal, body: AnalyticsBody): Promise<AnalyticsResult> {
    const timeZone = body.timezone ?? 'UTC';
    if (!knownZone(timeZone)) {
      throw badRequest(`timezone ${JSON.stringify(timeZone)} is not an IANA time zone`, [{ path: '/timezone', message: 'is not an IANA time zone' }], 'validation_failed');
    }
    const granularity = body.granularity ?? 'day';
    const page = body.page ?? 1;
    const pageSize = body.page_size ?? 50;
    const filters = resolveFilters(body.filters ?? {}, timeZone);
    // The series of a date range holds every bucket of it; refuse one too long to be useful.
    const rangeTo = filters.to ? new Date(filters.to.at.getTime() - (filters.to.inclusive ? 0 : 1)) : undefined;
    if (TIME_SERIES.has(body.query_type) && filters.from && rangeTo && (rangeTo.getTime() - filters.from.getTime()) / BUCKET_MS[granularity] > MAX_BUCKETS) {
      throw unprocessable(`The date range holds more than ${MAX_BUCKETS} ${granularity} buckets; choose a shorter range or a coarser granularity`, [
        { path: '/filters/date_to', message: `is too far from date_from for granularity ${granularity}` },
      ], 'range_too_long');
    }

    const source = this.options.source ?? 'auto';
    const context = (params: Params, where: string, from = 'leads l', activityAt = ACTIVITY_AT): QueryContext => {
      return {
        from,
        activityAt,
        where,
        params,
        timeZone,
        granularity,
        byWeekday: body.by_weekday === true,
        callsOnly: body.calls_only === true,
        range: { ...(filters.from ? { from: filters.from } : {}), ...(rangeTo ? { to: rangeTo } : {}) },
        limit: pageSize,
        offset: (page - 1) * pageSize,
      };
    };
    try {
      let answer: RowsPage<AnalyticsRow> | undefined;
      if ((source === 'auto' || source === 'rollup') && rollupCanAnswer(body.query_type, filters, timeZone, body.calls_only === true)) {
        const params = new Params();
        const { scope, where } = rollupWhere(caller, filters, params);
        const hours = { ...(filters.from ? { from: filters.from } : {}), ...(filters.to ? { to: filters.to.at } : {}) };
        answer = await ROLLUP_QUERIES[body.query_type](this.db, { ...context(params, where), scope, hours });
      }
      if (!answer && source === 'rollup') throw new Error(`the rollup cannot answer this ${body.query_type} request exactly`);
      if (!answer && (source === 'auto' || source === 'terms') && termsCanAnswer(filters)) {
        const params = new Params();
        // Every filter is applied inside the rows the terms give.
        answer = await QUERIES[body.query_type](this.db, context(params, 'TRUE', termsFrom(caller, filters, params), TERMS_ACTIVITY_AT));
      }
      if (!answer && source === 'terms') throw new Error(`the payload terms cannot answer this ${body.query_type} request`);
      if (!answer) {
        const params = new Params();
        answer = await QUERIES[body.query_type](this.db, context(params, leadsWhere(caller, filters, params)));
      }
      const { rows, total } = answer;
      return { query_type: body.query_type, data: rows, total, page, page_size: pageSize };
    } catch (err) {
      // A zone the runtime knows but the database does not (their time zone data differ).
      if (pgErrorCode(err) === '22023' && /time zone/i.test((err as Error).message)) {
        throw badRequest(`timezone ${JSON.stringify(timeZone)} is not known to the database`, [{ path: '/timezone', message: 'is not a known time zone' }], 'validation_failed');
      }
      throw err;
    }
  }
}

/**
 * GET /leads (and GET /leads/export): filters, search, sort and paging. One schema for both, so
 * an export holds exactly what the list shows.
 */
import { Type, type Static } from 'typebox';
import { PageQuery } from '../http/index.js';
import { EXECUTION_MODES, LEAD_STATUSES } from './schema.js';

export const SORT_KEYS = ['created_at', 'updated_at', 'call_initiated_time', 'status', 'outcome', 'attempt_count', 'request_id'] as const;
export type SortKey = (typeof SORT_KEYS)[number];

/** Counting past this many matching leads stops when `count=capped`: the total is then a lower bound. */
export const COUNT_CAP = 10_000;

const DateOrTime = (description: string) =>
  Type.Union([Type.String({ format: 'date' }), Type.String({ format: 'date-time' })], {
    description: `${description}: an ISO 8601 date (UTC day) or date-time`,
  });

export const LeadFilterFields = {
  status: Type.Optional(Type.Enum(LEAD_STATUSES)),
  outcome: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Exact outcome, e.g. confirmed, no_answer, PRECHECK_FAILED' })),
  template: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Template name' })),
  template_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  request_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Exact request id' })),
  reseller_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  merchant_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  execution_mode: Type.Optional(Type.Enum(EXECUTION_MODES)),
  q: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'Search: an E.164 number (+ and digits) finds the leads calling it; anything else finds the lead with that id and the leads whose request_id starts with it',
    }),
  ),
  created_from: Type.Optional(DateOrTime('Pushed at or after')),
  created_to: Type.Optional(DateOrTime('Pushed before (a date includes that whole day)')),
};

export const LeadListQuery = Type.Intersect([
  PageQuery,
  Type.Object({
    ...LeadFilterFields,
    sort: Type.Optional(Type.Enum(SORT_KEYS, { default: 'created_at', description: 'Column to order by (ties broken by id); default newest first' })),
    order: Type.Optional(Type.Enum(['asc', 'desc'] as const, { default: 'desc' })),
    count: Type.Optional(
      Type.Enum(['exact', 'capped'] as const, {
        default: 'exact',
        description: `exact: total counts every match; capped: counting stops at ${COUNT_CAP.toLocaleString('en')} and total_capped says so (fast on large tables)`,
      }),
    ),
  }),
]);
export type LeadListQuery = Static<typeof LeadListQuery>;

export const LeadExportQuery = Type.Object({
  ...LeadFilterFields,
  order: Type.Optional(Type.Enum(['asc', 'desc'] as const, { default: 'desc', description: 'In push order: newest first (desc) or oldest first' })),
});
export type LeadExportQuery = Static<typeof LeadExportQuery>;

export type LeadFilter = Pick<LeadListQuery, keyof typeof LeadFilterFields>;

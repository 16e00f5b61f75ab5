/**
 * POST /analytics: the request, and one row shape per query type, each with
 * the query types that produce it and an example, as the OpenAPI document shows them.
 */
import { Type, type Static } from 'typebox';
import { Id } from '../http/index.js';

export const QUERY_TYPES = [
  'call_count',
  'call_duration',
  'outcome_distribution',
  'sentiment_distribution',
  'status_distribution',
  'calls_over_time',
  'avg_duration_over_time',
  'top_outcomes',
  'retry_analysis',
  'provider_breakdown',
  'hourly_heatmap',
  'conversion_funnel',
] as const;
export type QueryType = (typeof QUERY_TYPES)[number];

export const GRANULARITIES = ['hour', 'day', 'week', 'month'] as const;
export type Granularity = (typeof GRANULARITIES)[number];

/** Most time buckets one time series may span (a longer date range answers 422). */
export const MAX_BUCKETS = 100_000;
export const MAX_PAGE = 1_000_000;

const FilterDate = Type.String({
  minLength: 1,
  maxLength: 40,
  description:
    'ISO 8601 date (`2024-05-01`) or date-time (`2024-05-01T09:30:00Z`). Without an offset it is read in `timezone`. ' +
    'Compared with the activity time of a lead: its call start, or its push time when never dialled. ' +
    'A date alone covers its whole day (date_to includes that day).',
});

export const FiltersSchema = Type.Object(
  {
    template_id: Type.Optional(Id),
    merchant_id: Type.Optional(Id),
    reseller_id: Type.Optional(Id),
    date_from: Type.Optional(FilterDate),
    date_to: Type.Optional(FilterDate),
    min_duration: Type.Optional(Type.Integer({ minimum: 0, description: 'Seconds (call duration at least)' })),
    max_duration: Type.Optional(Type.Integer({ minimum: 0, description: 'Seconds (call duration at most)' })),
    sentiment_min: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    sentiment_max: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    payload_filters: Type.Optional(
      Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]), {
        maxProperties: 50,
        description: 'Leads whose payload has each of these keys with exactly this value (JSON containment)',
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'All optional; an omitted filter means everything in the caller\'s scope. reseller_id, merchant_id and template_id ' +
      'only narrow that scope. Duration and sentiment filters keep only leads that have a duration or sentiment.',
  },
);
export type Filters = Static<typeof FiltersSchema>;

export const AnalyticsBody = Type.Object(
  {
    query_type: Type.Enum(QUERY_TYPES),
    filters: Type.Optional(FiltersSchema),
    granularity: Type.Optional(
      Type.Enum(GRANULARITIES, {
        description:
          'Bucket of calls_over_time and avg_duration_over_time (default day). Weeks start on Monday. A bucket is labelled by its start: ' +
          '`YYYY-MM-DD` (day, week, month), `YYYY-MM-DDTHH:00` (hour), as the wall clock of `timezone` shows it',
      }),
    ),
    timezone: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'IANA time zone of the buckets, the heatmap hours and dates without an offset (default UTC).',
      }),
    ),
    by_weekday: Type.Optional(Type.Boolean({ description: 'hourly_heatmap: one row per ISO weekday (1 = Monday) and hour.' })),
    calls_only: Type.Optional(
      Type.Boolean({
        description:
          'Count calls (dialled attempts) instead of leads: call_count, calls_over_time, hourly_heatmap and provider_breakdown leave out ' +
          'leads never dialled; outcome_distribution and top_outcomes leave out the outcomes given without a dial (aborted, PRECHECK_FAILED, ' +
          'BLACKLISTED). A lead dialled several times is one call, at its latest attempt. The other query types are the same either way. Default false.',
      }),
    ),
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1 })),
    page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 50 })),
  },
  {
    additionalProperties: false,
    examples: [
      {
        query_type: 'calls_over_time',
        filters: { date_from: '2024-05-01', date_to: '2024-05-31', payload_filters: { campaign: 'renewal' } },
        granularity: 'day',
        timezone: 'Europe/Paris',
        page: 1,
        page_size: 50,
      },
    ],
  },
);
export type AnalyticsBody = Static<typeof AnalyticsBody>;

const strict = { additionalProperties: false } as const;
const Count = Type.Integer({ minimum: 0 });
const Percentage = Type.Number({ description: 'Share of the rows\' total count, in percent (two decimals)' });

export const CountRow = Type.Object({ count: Count }, {
  ...strict,
  title: 'CountRow',
  description: 'call_count: live leads matching the filters, or their calls (dialled leads) with calls_only (one row)',
  examples: [{ count: 1250 }],
});
export const DurationRow = Type.Object(
  {
    avg: Type.Union([Type.Number(), Type.Null()]),
    min: Type.Union([Type.Integer(), Type.Null()]),
    max: Type.Union([Type.Integer(), Type.Null()]),
    total: Type.Integer(),
  },
  {
    ...strict,
    title: 'DurationRow',
    description: 'call_duration: over leads with a duration, in seconds (one row; avg/min/max null when there is none)',
    examples: [{ avg: 84.37, min: 0, max: 912, total: 105462 }],
  },
);
export const ShareRow = Type.Object({ key: Type.String(), count: Count, percentage: Percentage }, {
  ...strict,
  title: 'ShareRow',
  description:
    'outcome_distribution (outcomes by name; leads without an outcome left out), top_outcomes (the same, most frequent first), ' +
    'status_distribution (BACKLOG, PROCESSING, RETRY, FINISHED, always all four), sentiment_distribution (negative < 0.4 <= neutral <= 0.6 < positive, ' +
    'always all three; leads without a sentiment left out)',
  examples: [{ key: 'confirmed', count: 412, percentage: 32.96 }],
});
export const TimeCountRow = Type.Object({ date: Type.String(), count: Count }, {
  ...strict,
  title: 'TimeCountRow',
  description: 'calls_over_time: live leads per bucket of their activity time; empty buckets count 0',
  examples: [{ date: '2024-05-01', count: 37 }],
});
export const TimeAverageRow = Type.Object({ date: Type.String(), avg_duration: Type.Number() }, {
  ...strict,
  title: 'TimeAverageRow',
  description: 'avg_duration_over_time: average call duration (seconds) per bucket; 0 for a bucket without durations',
  examples: [{ date: '2024-05-01', avg_duration: 92.5 }],
});
export const RetryRow = Type.Object(
  { attempts: Type.Integer({ minimum: 1 }), count: Count, success_rate: Type.Number({ minimum: 0, maximum: 1 }) },
  {
    ...strict,
    title: 'RetryRow',
    description:
      'retry_analysis: finished, dialled leads by the attempts they took; success_rate is the share (0..1, four decimals) that ended in a ' +
      'conversation (an outcome other than no_answer, busy, failed, voicemail, PRECHECK_FAILED, BLACKLISTED, aborted, worker_lost, error)',
    examples: [{ attempts: 2, count: 310, success_rate: 0.4581 }],
  },
);
export const ProviderRow = Type.Object(
  { provider: Type.String(), count: Count, avg_duration: Type.Union([Type.Number(), Type.Null()]) },
  {
    ...strict,
    title: 'ProviderRow',
    description: 'provider_breakdown: dialled leads by telephony provider, busiest first; avg_duration in seconds (null without durations)',
    examples: [{ provider: 'PROVIDER_A', count: 702, avg_duration: 81.2 }],
  },
);
export const HeatmapRow = Type.Object(
  { weekday: Type.Optional(Type.Integer({ minimum: 1, maximum: 7 })), hour: Type.Integer({ minimum: 0, maximum: 23 }), count: Count },
  {
    ...strict,
    title: 'HeatmapRow',
    description: 'hourly_heatmap: live leads by hour of their activity time (0-23 in `timezone`), all 24 hours; with by_weekday, 7 x 24 rows',
    examples: [{ hour: 10, count: 118 }, { weekday: 1, hour: 10, count: 25 }],
  },
);
export const FunnelRow = Type.Object({ stage: Type.String(), count: Count }, {
  ...strict,
  title: 'FunnelRow',
  description:
    'conversion_funnel, four stages, each inside the previous: pushed (every live lead), dialled (at least one attempt), ' +
    'connected (dialled, with a call duration above 0), completed (connected, FINISHED with a conversation outcome)',
  examples: [{ stage: 'dialled', count: 1180 }],
});

export const AnalyticsRow = Type.Union([CountRow, DurationRow, ShareRow, TimeCountRow, TimeAverageRow, RetryRow, ProviderRow, HeatmapRow, FunnelRow]);

export const AnalyticsResponse = Type.Object(
  {
    query_type: Type.Enum(QUERY_TYPES),
    data: Type.Array(AnalyticsRow, { description: 'One page of rows, all of the shape of the query type' }),
    total: Type.Integer({ description: 'Rows of the whole result, across pages' }),
    page: Type.Integer(),
    page_size: Type.Integer(),
  },
  {
    examples: [
      { query_type: 'call_count', data: [{ count: 1250 }], total: 1, page: 1, page_size: 50 },
      {
        query_type: 'calls_over_time',
        data: [
          { date: '2024-05-01', count: 37 },
          { date: '2024-05-02', count: 0 },
        ],
        total: 31,
        page: 1,
        page_size: 2,
      },
      {
        query_type: 'top_outcomes',
        data: [
          { key: 'confirmed', count: 412, percentage: 32.96 },
          { key: 'no_answer', count: 251, percentage: 20.08 },
        ],
        total: 9,
        page: 1,
        page_size: 2,
      },
    ],
  },
);

/** The rows of each query type, as the query functions return them. */
export type CountRow = Static<typeof CountRow>;
export type DurationRow = Static<typeof DurationRow>;
export type ShareRow = Static<typeof ShareRow>;
export type TimeCountRow = Static<typeof TimeCountRow>;
export type TimeAverageRow = Static<typeof TimeAverageRow>;
export type RetryRow = Static<typeof RetryRow>;
export type ProviderRow = Static<typeof ProviderRow>;
export type HeatmapRow = Static<typeof HeatmapRow>;
export type FunnelRow = Static<typeof FunnelRow>;
export type AnalyticsRow = Static<typeof AnalyticsRow>;

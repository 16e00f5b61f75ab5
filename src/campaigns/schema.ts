/** The campaign resource's request and response schemas (the OpenAPI document is made from them). */
import { Type, type Static } from 'typebox';
import { Id, NullableTimestamp, PageQuery, Timestamp } from '../http/index.js';

export const CAMPAIGN_STATUSES = ['scheduled', 'running', 'paused', 'completed', 'stopped'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const CircuitBreaker = Type.Object(
  {
    failure_ratio: Type.Number({ exclusiveMinimum: 0, maximum: 1, description: 'Pause when more than this share of the attempts in the window failed (busy, failed to connect, error)' }),
    window_seconds: Type.Integer({ minimum: 1, maximum: 86_400, description: 'The rolling window the attempts are counted over' }),
    min_calls: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'No verdict on fewer attempts than this in the window' }),
  },
  { additionalProperties: false, description: 'Pauses the campaign, and says why, when too many attempts fail' },
);

export const CreateCampaignBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' }),
    reseller_id: Id,
    merchant_id: Type.Optional(Nullable(Id)),
    template: Type.String({ minLength: 1, maxLength: 200, description: 'Template name, as for leads' }),
    max_concurrent_calls: Type.Optional(
      Nullable(Type.Integer({ minimum: 1, maximum: 100_000, description: 'Live calls of the campaign at most, across all workers; null: no cap of its own' })),
    ),
    max_calls_per_second: Type.Optional(
      Nullable(Type.Number({ exclusiveMinimum: 0, maximum: 1000, description: 'Call starts per second, spread evenly (no two closer than 1/rate); null: no pace of its own' })),
    ),
    start_at: Type.Optional(Nullable(Type.String({ format: 'date-time', description: 'No call starts before it (status scheduled until then)' }))),
    end_at: Type.Optional(Nullable(Type.String({ format: 'date-time', description: 'No call starts after it; must be after start_at' }))),
    circuit_breaker: Type.Optional(Nullable(CircuitBreaker)),
  },
  {
    additionalProperties: false,
    examples: [
      {
        name: 'March renewals',
        reseller_id: 'a-reseller-id',
        template: 'appointment-confirmation',
        max_concurrent_calls: 10,
        max_calls_per_second: 2,
        circuit_breaker: { failure_ratio: 0.5, window_seconds: 120, min_calls: 20 },
      },
    ],
  },
);
export type CreateCampaignBody = Static<typeof CreateCampaignBody>;

export const Progress = Type.Object(
  {
    total: Type.Integer({ description: 'Leads in the campaign' }),
    queued: Type.Integer({ description: 'Waiting: BACKLOG or RETRY' }),
    in_progress: Type.Integer({ description: 'Being called: PROCESSING' }),
    finished: Type.Integer({ description: 'FINISHED; queued + in_progress + finished = total' }),
    by_outcome: Type.Record(Type.String(), Type.Integer(), { description: 'Finished leads by outcome' }),
    answer_rate: Nullable(Type.Number({ description: 'Of the finished leads that were dialled, the share that reached a conversation; live calls are left out. null before any' })),
    avg_duration: Nullable(Type.Number({ description: 'Seconds, over the finished leads with a duration' })),
    cost: Type.Number({ description: 'The sum of the leads’ call costs' }),
    live_calls: Type.Integer({ description: 'Calls of the campaign live now (the leads in progress)' }),
    estimated_finish_at: Type.Union([Timestamp, Type.Null()], {
      description: 'When the queued leads would be done at the rate leads finished over the last ten minutes; null when it cannot be told',
    }),
    as_of: Type.String({
      format: 'date-time',
      description:
        'When these counts were read. A campaign of 50,000 leads or more is read again at most every ten times as long as its reading takes (1 to 30 s); a pause, resume or stop reads it afresh',
    }),
  },
  { description: 'Counted in one reading of the leads: the three counts always add up to total' },
);

export const Campaign = Type.Object({
  id: Type.String(),
  name: Type.String(),
  reseller_id: Type.String(),
  merchant_id: Nullable(Type.String()),
  template: Type.String(),
  template_id: Type.String(),
  status: Type.Union([Type.Literal('scheduled'), Type.Literal('running'), Type.Literal('paused'), Type.Literal('completed'), Type.Literal('stopped')], {
    description: 'scheduled (before start_at), running, paused, completed (no lead queued or in progress, or past end_at), stopped',
  }),
  paused_reason: Nullable(Type.String({ description: 'Why it is paused: by whom, or the breaker’s figures' })),
  max_concurrent_calls: Nullable(Type.Integer()),
  max_calls_per_second: Nullable(Type.Number()),
  start_at: NullableTimestamp,
  end_at: NullableTimestamp,
  circuit_breaker: Nullable(CircuitBreaker),
  progress: Progress,
  stopped_at: NullableTimestamp,
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const CampaignSummary = Type.Omit(Campaign, ['progress']);

export const CampaignListQuery = Type.Intersect([
  PageQuery,
  Type.Object({ reseller_id: Type.Optional(Id), merchant_id: Type.Optional(Id) }),
]);
export type CampaignListQuery = Static<typeof CampaignListQuery>;

export const ResultRow = Type.Object({
  lead_id: Type.String(),
  request_id: Type.String(),
  number: Nullable(Type.String({ description: 'payload.customer_mobile_number' })),
  status: Type.String(),
  outcome: Nullable(Type.String()),
  attempts: Type.Integer(),
  duration_seconds: Nullable(Type.Integer()),
  cost: Nullable(Type.Number()),
  analysis: Type.Record(Type.String(), Type.Unknown(), {
    description: "The post-call analysis: summary, success and the template's fields (in CSV, each its own column: analysis_summary, analysis_success, analysis_<field>)",
  }),
  lead_url: Type.String({ description: 'GET /leads/{id}' }),
  recording_url: Nullable(Type.String({ description: 'GET /leads/recording/{call_sid}, when the call was recorded' })),
});

export const ResultList = Type.Object({
  data: Type.Array(ResultRow),
  total: Type.Integer(),
  page: Type.Integer(),
  page_size: Type.Integer(),
  columns: Type.Array(Type.String(), { description: 'The columns of the CSV form, in order' }),
});

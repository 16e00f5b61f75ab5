import { Type, type Static } from 'typebox';
import type { ErrorObject } from 'ajv';
import { literalUnion, NullableTimestamp, Timestamp } from '../http/index.js';
import { EXECUTION_MODES, LEAD_STATUSES } from '../lifecycle/index.js';
import { Consent, StoredConsent } from '../compliance/index.js';

export { EXECUTION_MODES, LEAD_STATUSES, type ExecutionMode } from '../lifecycle/index.js';
/** Fields whose absence is "a missing required field" (400) rather than a schema failure (422). */
export const REQUIRED_FIELDS = ['request_id', 'template', 'payload', 'reseller_id'] as const;

const ExecutionMode = literalUnion(EXECUTION_MODES, { default: 'TELEPHONY' });

export const PushBody = Type.Object(
  {
    request_id: Type.String({ minLength: 1, maxLength: 200, description: 'Client correlation tag, echoed as order_id; not an idempotency key' }),
    template: Type.String({ minLength: 1, maxLength: 200, description: 'Template name' }),
    payload: Type.Object(
      {
        customer_mobile_number: Type.Optional(Type.String({ maxLength: 32, description: 'E.164; without it the lead stays in BACKLOG' })),
      },
      { additionalProperties: true, description: 'Template variables and the destination number' },
    ),
    reseller_id: Type.String({ minLength: 1, maxLength: 64 }),
    merchant_id: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()], { description: 'Required if the template belongs to a merchant' })),
    reporting_webhook_url: Type.Optional(
      Type.String({ maxLength: 2000, format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]?://', description: 'Called when the lead finishes; stored in payload' }),
    ),
    execution_mode: Type.Optional(ExecutionMode),
    campaign_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'An extension: the campaign (POST /campaigns) the lead joins; its cap, pace, dates and pause then apply to it' }),
    ),
    consent: Type.Optional(Consent),
    is_playground: Type.Optional(Type.Boolean({ default: false })),
    configurations_override: Type.Optional(
      Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], { description: 'Partial configuration; kept only when is_playground' }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        request_id: 'order-1042',
        template: 'appointment-confirmation',
        reseller_id: 'a-reseller-id',
        payload: { customer_mobile_number: '+14155550123', customer_name: 'Ada', appointment_date: 'Monday 10:00' },
        reporting_webhook_url: 'https://crm.example.com/dialer/webhook',
      },
    ],
  },
);
export type PushBody = Static<typeof PushBody>;

/**
 * The status of a push that fails its schema: 400 for a missing (or empty) required field or an
 * unknown execution_mode; 422 for everything else (type mismatches, unknown
 * fields, malformed URLs).
 */
export function pushValidationStatus(raw: ErrorObject[]): number {
  const is400 = (e: ErrorObject) =>
    (e.keyword === 'required' && e.instancePath === '' && (REQUIRED_FIELDS as readonly string[]).includes((e.params as { missingProperty: string }).missingProperty)) ||
    (e.keyword === 'minLength' && ['/request_id', '/template', '/reseller_id'].includes(e.instancePath)) ||
    e.instancePath === '/execution_mode' ||
    // The Idempotency-Key header (validated with the body's status rule, as the route's one setting).
    e.instancePath === '/idempotency-key';
  return raw.some(is400) ? 400 : 422;
}

export const PushResult = Type.Object({
  status: Type.Literal('queued'),
  lead_call_tracker_id: Type.String(),
  order_id: Type.String(),
  message: Type.String(),
});

export const BatchBody = Type.Object(
  {
    leads: Type.Array(Type.Unknown(), { minItems: 1, maxItems: 1000, description: 'Up to 1,000 bodies of POST /leads, each validated on its own' }),
    skip_duplicates: Type.Optional(
      Type.Boolean({
        description:
          'An extension: check the leads for duplicates (a number repeated earlier in the batch, one still waiting or live in the lead\'s campaign, one the reseller dialled in the last dedupe_days days). true: a duplicate is not queued (status 200, skipped); false: it is queued and its result says it is one',
      }),
    ),
    dedupe_days: Type.Optional(Type.Integer({ minimum: 0, maximum: 365, description: 'An extension: numbers dialled within this many days count as duplicates (0 or absent: not checked); setting it alone reports without skipping' })),
  },
  { additionalProperties: false },
);

export const DuplicateInfo = Type.Object({
  kind: Type.Union([Type.Literal('in_file'), Type.Literal('in_campaign'), Type.Literal('recent_call')], {
    description: 'in_file: repeated earlier in the file or batch; in_campaign: a lead of the campaign with this number waits or is live; recent_call: dialled within dedupe_days',
  }),
  phone_number: Type.String(),
  first_index: Type.Optional(Type.Integer({ description: 'in_file: the position of the row that keeps the number' })),
  lead_id: Type.Optional(Type.String({ description: 'in_campaign: the waiting lead; recent_call: the lead last dialled' })),
  called_at: Type.Optional(Type.String({ format: 'date-time', description: 'recent_call: when it was last dialled' })),
});

const Problem = Type.Ref('Problem');
export const BatchResult = Type.Object({
  queued: Type.Integer(),
  rejected: Type.Integer(),
  skipped: Type.Optional(Type.Integer({ description: 'With skip_duplicates: the duplicates not queued' })),
  results: Type.Array(
    Type.Object({
      index: Type.Integer({ description: 'Position in the request' }),
      status: Type.Integer({ description: 'What POST /leads would have answered for this item (200 for a duplicate skipped)' }),
      result: Type.Optional(PushResult),
      problem: Type.Optional(Problem),
      skipped: Type.Optional(Type.Boolean({ description: 'With skip_duplicates: a duplicate, not queued' })),
      duplicate: Type.Optional(DuplicateInfo),
    }),
  ),
});

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const Lead = Type.Object({
  id: Type.String({ description: 'Equals lead_call_tracker_id' }),
  reseller_id: Type.String(),
  merchant_id: Nullable(Type.String()),
  template: Type.String({ description: 'Template name' }),
  template_id: Type.String(),
  request_id: Type.String(),
  status: literalUnion(LEAD_STATUSES),
  outcome: Nullable(Type.String()),
  attempt_count: Type.Integer(),
  call_id: Nullable(Type.String()),
  call_initiated_time: NullableTimestamp,
  call_end_time: NullableTimestamp,
  duration_seconds: Nullable(Type.Integer()),
  recording_url: Nullable(Type.String()),
  cost: Nullable(Type.Number()),
  sentiment: Nullable(Type.Number()),
  provider: Nullable(Type.String()),
  execution_mode: Type.String(),
  call_direction: Type.String(),
  outbound_number_id: Nullable(Type.String()),
  trace_scores: Type.Record(Type.String(), Type.Number()),
  payload: Type.Object({}, { additionalProperties: true }),
  metaData: Type.Object({}, { additionalProperties: true, description:
      "transcription, call_ended_by, node_traversal, errors, pre_check_results; disclosure (an extension, on calls whose configuration has one): {text, language, completed, at_ms}, completed false when the call ended before it finished playing (the callee hung up during it); its transcript line is the first, with disclosure: true; on calls of a template that declares languages (agent.languages, extensions): each transcription line's language, and language_switches [{from, to, by: function|detected, at, refused?}]; warm_transfers (an extension, on calls whose flow briefed a human): [{to, node, function, briefing, briefing_source (template, llm, default), decision (accepted, declined, no_answer, busy, failed), via (key, voice, hangup, timeout), heard, events [{event, at}], callback_at}]; stt_fallback (an extension, on calls whose speech-to-text went over to its second service, STT_FALLBACK): {at, at_ms, from, to, reason}",
  }),
  is_playground: Type.Boolean(),
  configurations_override: Nullable(Type.Object({}, { additionalProperties: true })),
  cancellation_reason: Nullable(Type.String()),
  next_attempt_at: Type.Union([Timestamp, Type.Null()], { description: 'When the lead is next due; null when it will not be dialled' }),
  campaign_id: Type.Optional(Nullable(Type.String({ description: 'An extension: the campaign the lead joined' }))),
  consent: Type.Optional(Nullable(StoredConsent)),
  held_reason: Type.Optional(
    Type.String({
      description:
        'An extension, on GET /leads/{id} of a waiting lead that is held: by its campaign, campaign_paused, campaign_stopped, campaign_scheduled, campaign_ended, campaign_cap (its live calls are at max_concurrent_calls), campaign_pace (the next start waits for max_calls_per_second); or, on a due lead, configuration_cap (the live calls of its configuration are at its max_concurrent_calls), trunk_cap (its SIP trunk\'s channels are all in use, max_channels, and so are its failover trunk\'s), trunk_pace (its SIP trunk\'s next call waits for max_calls_per_second)',
    }),
  ),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const AbortBody = Type.Object(
  {
    leads: Type.Array(
      Type.Object(
        {
          lead_id: Type.String({ minLength: 1, maxLength: 64 }),
          cancellation_reason: Type.String({ minLength: 1, maxLength: 1000 }),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 1000 },
    ),
  },
  { additionalProperties: false, examples: [{ leads: [{ lead_id: 'a-lead-id', cancellation_reason: 'customer called in' }] }] },
);

export const AbortResult = Type.Object({
  leads: Type.Array(
    Type.Object({
      id: Type.String(),
      status: Type.Union([Type.Literal('success'), Type.Literal('already_aborted'), Type.Literal('processing'), Type.Literal('error')]),
      message: Type.String(),
    }),
  ),
});

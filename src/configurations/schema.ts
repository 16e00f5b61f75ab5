import { Type, type Static } from 'typebox';
import { Id, literalUnion, Timestamp } from '../http/index.js';
import { JURISDICTIONS } from '../lib/legal-hours.js';

/**
 * The call execution configuration as the API speaks it. One schema serves the create
 * body (defaults fill what is omitted), the full-object PUT body (the same plus `id`) and the
 * response, so the documented shape and the validated shape cannot drift apart.
 */

/** SIP (an extension): calls go through the reseller's own SIP trunk, named by trunk_id. */
export const PROVIDERS = ['PROVIDER_A', 'PROVIDER_B', 'PROVIDER_C', 'SIP'] as const;
export type Provider = (typeof PROVIDERS)[number];
/** REDIRECT: say the message, then dial inbound_redirect_number. REJECT (and MESSAGE): say it and hang up. HANGUP: hang up at once. */
export const INBOUND_BLOCK_ACTIONS = ['REDIRECT', 'REJECT', 'HANGUP', 'MESSAGE'] as const;
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
/** hang_up: end the call when a machine answers (the attempt is `voicemail`); leave_message: wait for the beep and speak voicemail_message. */
export const VOICEMAIL_ACTIONS = ['hang_up', 'leave_message'] as const;
/** configuration: the calling window is in call_timezone (or the lead's payload.timezone); recipient: in the callee's own zone. */
export const WINDOW_TIMEZONES = ['configuration', 'recipient'] as const;
/** An outcome named in a retry policy: the lifecycle's own or a flow's (letters, digits, _). */
export const OUTCOME_KEY = '^[A-Za-z][A-Za-z0-9_]{0,63}$';

const HhMm = (description: string) =>
  Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: `${description} (HH:MM, 24-hour)` });
const Seconds = (description: string, dflt: number) => Type.Integer({ minimum: 0, maximum: 31_536_000, default: dflt, description });
const Phone = Type.String({ minLength: 1, maxLength: 32, description: 'E.164, e.g. +14155550123' });

export const HttpRequest = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2000, description: 'May contain {variable} placeholders filled from the lead payload' }),
    method: literalUnion(HTTP_METHODS, { default: 'GET' }),
    headers: Type.Optional(Type.Record(Type.String(), Type.String())),
    query_params: Type.Optional(Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()]))),
    body: Type.Optional(Type.Unknown()),
    timeout: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 60, description: 'Seconds (default 5)' })),
  },
  { additionalProperties: false },
);

export const PreCheck = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    type: Type.Literal('external_api'),
    enabled: Type.Boolean({ default: true }),
    default_on_failure: Type.Union([Type.Literal('proceed'), Type.Literal('skip')], {
      default: 'proceed',
      description: 'What to do when the API errors or times out: dial anyway (proceed) or finish the lead PRECHECK_FAILED (skip)',
    }),
    http_request: HttpRequest,
    response_config: Type.Object(
      {
        response_field: Type.String({ minLength: 1, description: 'Dot path into the JSON response, e.g. data.allowed' }),
        response_field_value: Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()], {
          description: 'The check passes when the field equals this value',
        }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type PreCheck = Static<typeof PreCheck>;

export const RetryRule = Type.Object(
  {
    retry: Type.Boolean({ description: 'Whether a lead whose attempt ended so is called again (while max_retry allows)' }),
    after_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 31_536_000, description: 'Seconds until the next attempt (default retry_offset)' })),
  },
  { additionalProperties: false },
);
export type RetryRule = Static<typeof RetryRule>;

export const RetryPolicy = Type.Record(Type.String({ pattern: OUTCOME_KEY }), RetryRule, {
  description:
    'Per outcome (busy, no_answer, failed, error, voicemail, voicemail_left, or a flow\'s own such as callback_requested): retry or not, and after how long, within max_retry. Outcomes left out keep the default (unreached outcomes retry after retry_offset, the rest finish).',
  maxProperties: 100,
  additionalProperties: false,
});
export type RetryPolicy = Static<typeof RetryPolicy>;

/** A language code such as es or pt-BR. */
export const LANGUAGE_CODE = '^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$';

export const Disclosure = Type.Object(
  {
    text: Type.String({ minLength: 1, maxLength: 1000, description: 'Spoken when the call has no language of its own or none of `languages` matches it; {variable} placeholders from the lead payload' }),
    languages: Type.Optional(
      Type.Record(Type.String({ pattern: LANGUAGE_CODE }), Type.String({ minLength: 1, maxLength: 1000 }), {
        maxProperties: 50,
        additionalProperties: false,
        description: "The disclosure in other languages, by language code: the lead's payload.language picks one (es-MX matches es-MX, then es)",
      }),
    ),
  },
  { additionalProperties: false },
);
const DISCLOSURE_DESCRIPTION =
  "An extension: words spoken whole before the agent's first line on every outbound call (the callee cannot talk over them), first in the transcript and marked as the disclosure; the lead's metaData.disclosure says whether it finished playing (docs/compliance.md); null or absent: none";
export type Disclosure = Static<typeof Disclosure>;

/** Every writable field, with its default. */
export const ConfigurationFields = {
  reseller_id: Id,
  template: Type.String({ minLength: 1, maxLength: 64, description: 'The template id' }),
  merchant_id: Type.Optional(Type.Union([Id, Type.Null()], { description: 'Defaults to the template\'s merchant (null: reseller level)' })),
  initial_offset: Seconds('Seconds between the push and the first attempt', 0),
  retry_offset: Seconds('Seconds between a failed attempt and the next', 3600),
  call_start_time: HhMm('Start of the daily calling window'),
  call_end_time: HhMm('End of the daily calling window (exclusive); before the start: the window crosses midnight; equal to it: all day'),
  call_timezone: Type.String({ minLength: 1, maxLength: 64, default: 'UTC', description: 'IANA time zone of the calling window' }),
  max_retry: Type.Integer({ minimum: 0, maximum: 100, default: 2, description: 'Retries after the first attempt' }),
  calling_provider: literalUnion(PROVIDERS),
  enable_calling: Type.Boolean({
    default: true,
    description: "false holds the template's leads: they are not dialled, and a lead pushed meanwhile is due 5 minutes later and looked at again then. Switching it on makes the template's leads that were never attempted due at once (or initial_offset seconds after their push)",
  }),
  enable_international_call: Type.Boolean({ default: false }),
  enable_inbound: Type.Boolean({ default: false }),
  inbound_call_start_time: Type.Optional(Type.Union([HhMm('Inbound window start'), Type.Null()])),
  inbound_call_end_time: Type.Optional(Type.Union([HhMm('Inbound window end'), Type.Null()])),
  inbound_call_timezone: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()])),
  inbound_block_action: Type.Optional(Type.Union([literalUnion(INBOUND_BLOCK_ACTIONS), Type.Null()])),
  inbound_redirect_number: Type.Optional(Type.Union([Phone, Type.Null()])),
  inbound_block_message: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
  enforce_blacklist: Type.Boolean({ default: true }),
  rate_limit_enabled: Type.Boolean({ default: false }),
  rate_limit_max_calls: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 1_000_000 }), Type.Null()])),
  rate_limit_window_seconds: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 86_400 }), Type.Null()])),
  rate_limit_whitelist: Type.Array(Phone, { default: [], maxItems: 10_000 }),
  pre_checks: Type.Array(PreCheck, { default: [], maxItems: 20 }),
  voicemail_action: literalUnion(VOICEMAIL_ACTIONS, {
    default: 'hang_up',
    description: 'When a machine answers: hang_up (the attempt is voicemail) or leave_message (wait for the beep, speak voicemail_message, hang up: voicemail_left)',
  }),
  voicemail_message: Type.Optional(
    Type.Union([Type.String({ minLength: 1, maxLength: 2000 }), Type.Null()], { description: 'The message left on voicemail, with {variable} placeholders from the lead payload; required for leave_message' }),
  ),
  opt_out_enabled: Type.Boolean({
    default: true,
    description: 'Offer the agent a built-in opt_out function in every node: the callee who asks not to be called again is blacklisted and the lead finishes OPTED_OUT',
  }),
  retry_policy: Type.Optional(Type.Union([RetryPolicy, Type.Null()])),
  window_timezone: literalUnion(WINDOW_TIMEZONES, {
    default: 'configuration',
    description: "Whose clock the calling window follows: configuration (call_timezone, or the lead's payload.timezone) or recipient (payload.timezone, else the zone of the number, else call_timezone)",
  }),
  max_calls_per_number_per_day: Type.Optional(
    Type.Union([Type.Integer({ minimum: 1, maximum: 1000 }), Type.Null()], { description: "Dials of one number per day of the recipient's time, across all the reseller's leads; null: no limit" }),
  ),
  max_concurrent_calls: Type.Optional(
    Type.Union([Type.Integer({ minimum: 1, maximum: 100_000 }), Type.Null()], {
      description: "Live calls of the template's leads at most, across all workers (a waiting lead is held with held_reason configuration_cap); null: no cap",
    }),
  ),
  trunk_id: Type.Optional(
    Type.Union([Id, Type.Null()], { description: "An extension: the SIP trunk a SIP configuration dials through (a trunk of the same reseller); required when calling_provider is SIP, null otherwise" }),
  ),
  require_consent: Type.Boolean({
    default: false,
    description: 'A lead pushed without `consent` (the evidence of the callee\'s consent) is refused with 422 and never dialled (docs/compliance.md)',
  }),
  dnc_lists: Type.Array(Id, {
    default: [],
    maxItems: 50,
    uniqueItems: true,
    description: "Do-not-call lists (POST /dnc-lists) the template's leads are checked against, at push (403) and again at dial time (finished DNC_LISTED)",
  }),
  legal_hours: Type.Array(literalUnion(JURISDICTIONS), {
    default: [],
    maxItems: 20,
    uniqueItems: true,
    description: "Jurisdictions whose calling hours apply on top of the window, to numbers of their countries, in the recipient's local time (docs/compliance.md lists them)",
  }),
  local_presence: Type.Boolean({
    default: false,
    description:
      "Extension: call from a caller ID local to the callee when the provider's pool holds one: same NANP area code first, then same country calling code, else any free number",
  }),
  disclosure: Type.Optional(Type.Union([Disclosure, Type.Null()], { description: DISCLOSURE_DESCRIPTION })),
  service_callback_url: Type.Optional(
    Type.Union([Type.String({ minLength: 1, maxLength: 2000, pattern: '^https?://[^\\s]+$' }), Type.Null()], {
      description: "Where the final state of each conversation is POSTed; null: the deployment's DIALER_SERVICE_CALLBACK_URL",
    }),
  ),
};

const EXAMPLE = {
  reseller_id: 'a-reseller-id',
  template: 'a-template-id',
  merchant_id: null,
  initial_offset: 0,
  retry_offset: 1800,
  call_start_time: '09:00',
  call_end_time: '20:00',
  call_timezone: 'America/New_York',
  max_retry: 2,
  calling_provider: 'PROVIDER_A',
  enable_calling: true,
  enable_international_call: false,
  enable_inbound: false,
  enforce_blacklist: true,
  rate_limit_enabled: true,
  rate_limit_max_calls: 60,
  rate_limit_window_seconds: 60,
  rate_limit_whitelist: ['+14155550123'],
  voicemail_action: 'leave_message',
  voicemail_message: 'Hi {customer_name}, this is Acme about your order {order_id}. Please call us back at +14155550100.',
  opt_out_enabled: true,
  retry_policy: { busy: { retry: true, after_seconds: 600 }, voicemail_left: { retry: true, after_seconds: 86_400 }, callback_requested: { retry: true } },
  window_timezone: 'recipient',
  max_calls_per_number_per_day: 2,
  pre_checks: [
    {
      name: 'dnc-check',
      type: 'external_api',
      enabled: true,
      default_on_failure: 'proceed',
      http_request: { url: 'https://crm.example.com/dnc?phone={customer_mobile_number}', method: 'GET', timeout: 5 },
      response_config: { response_field: 'allowed', response_field_value: true },
    },
  ],
};

export const CreateConfigurationBody = Type.Object(
  { ...ConfigurationFields, call_start_time: { ...ConfigurationFields.call_start_time, default: '09:00' }, call_end_time: { ...ConfigurationFields.call_end_time, default: '21:00' } },
  { additionalProperties: false, examples: [EXAMPLE] },
);
export type CreateConfigurationBody = Static<typeof CreateConfigurationBody>;

export const ReplaceConfigurationBody = Type.Object(
  {
    id: Id,
    ...CreateConfigurationBody.properties,
    created_at: Type.Optional(Type.String({ description: 'Accepted and ignored' })),
    updated_at: Type.Optional(Type.String({ description: 'Accepted and ignored' })),
  },
  { additionalProperties: false, examples: [{ id: 'the-configuration-id', ...EXAMPLE }] },
);
export type ReplaceConfigurationBody = Static<typeof ReplaceConfigurationBody>;

/** A configuration as the API answers it: every field of the create body present (null when unset), with its id and times. */
const { trunk_id: TrunkId, disclosure: DisclosureField, ...answeredFields } = CreateConfigurationBody.properties;
/** trunk_id and disclosure (extensions) are answered only on the configurations that use them, so other clients see no new field. */
export const Configuration = Type.Object({
  ...Type.Required(Type.Object({ id: Type.String(), ...answeredFields, created_at: Timestamp, updated_at: Timestamp })).properties,
  trunk_id: TrunkId,
  disclosure: DisclosureField,
});

type Body = Static<typeof CreateConfigurationBody>;
/**
 * A configuration's stored fields, cut from the create body: `template` is stored as
 * `template_id`, and an optional field left out is stored as null.
 */
export type ConfigurationWrite = {
  [K in keyof Body as K extends 'template' ? 'template_id' : K]-?: Exclude<Body[K], undefined> | (undefined extends Body[K] ? null : never);
};
/** The stored columns written on create and replace: the fields' names, `template` as `template_id`. */
export const WRITTEN_COLUMNS = Object.keys(ConfigurationFields).map((field) => (field === 'template' ? 'template_id' : field)) as (keyof ConfigurationWrite)[];

/**
 * A playground lead's `configurations_override`: any of the scheduling and calling fields, none
 * required, no defaults (an omitted field keeps the configuration's value), unknown keys refused.
 */
// The cap is the configuration's across all its leads, and the trunk its reseller's: no single lead can move them.
const { reseller_id: _r, template: _t, merchant_id: _m, max_concurrent_calls: _cap, trunk_id: _k, ...overridable } = ConfigurationFields;
export const ConfigurationOverride = Type.Object(
  Object.fromEntries(
    Object.entries(overridable).map(([key, schema]) => {
      const { default: _d, ...rest } = schema as unknown as { default?: unknown } & Record<string, unknown>;
      return [key, Type.Optional(rest as unknown as typeof schema)];
    }),
  ),
  { additionalProperties: false, description: 'Fields of a configuration merged over it at run time (playground leads only)' },
);

/**
 * Terminology
 * - push: turning one POST /leads body into a lead row, or into the problem that refuses it.
 * - batch: up to 1,000 pushes checked independently and inserted by one statement.
 *
 * Checks run in this order: schema (400 missing field or bad execution_mode, 422 other
 * schema failures), scope (403), template under the reseller/merchant (404), the campaign it joins
 * (404 not there, 409 stopped, ended or of another template), payload variables the template needs
 * (422), consent (422 missing under require_consent, or captured in the future), the destination
 * number (422 malformed, 403 blacklisted or on a do-not-call list the configuration honours).
 */
import type { ErrorObject } from 'ajv';
import { assertOwnerInScope, can, type Principal } from '../auth/index.js';
import { campaignRefs, joinProblem, type CampaignRef } from '../campaigns/index.js';
import { consentProblem, findDncHits, type DncHit } from '../compliance/index.js';
import { ConfigurationOverride, findPushTargets, mayCall, type PushTarget, type PushTargetKey } from '../configurations/index.js';
import type { Queryable } from '../db/index.js';
import { compileBodyValidator } from '../http/index.js';
import { HELD_SECONDS, type NewLead } from '../lifecycle/index.js';
import { Batcher } from '../lib/batcher.js';
import { AppError, badRequest, forbidden, unprocessable, type FieldError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import type { OutboundPolicy } from '../lib/outbound/index.js';
import { phoneNumberProblem } from '../lib/phone.js';
import { DTMF_SEQUENCE } from '../lib/tones.js';
import { promptVariables } from '../templates/index.js';
import { PushBody, pushValidationStatus } from './schema.js';

const validatePush = compileBodyValidator(PushBody);
const validateOverride = compileBodyValidator(ConfigurationOverride);

export interface Pushed {
  lead: NewLead;
  message: string;
}

function schemaProblem(raw: ErrorObject[], errors: FieldError[]): AppError {
  const status = pushValidationStatus(raw);
  const first = errors[0]!;
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
  return new AppError(status, status === 400 ? 'validation_failed' : 'schema_validation_failed', `Request body: ${first.path} ${first.message}${more}`, errors);
}

const templateNotFound = (name: string, resellerId: string, merchantId: string | null) =>
  new AppError(404, 'template_not_found', `No template named ${JSON.stringify(name)} exists under reseller ${resellerId}${merchantId ? ` and merchant ${merchantId}` : ''}`, [
    { path: '/template', message: 'names no template in this reseller/merchant' },
  ]);

/** Looks up push targets; many lookups may be answered by one query (see targetLoader). */
export type TargetLookup = (key: PushTargetKey) => Promise<PushTarget | undefined>;

/**
 * Push targets for all pushes in flight: lookups that arrive while one query is under way are
 * answered together by the next (group lookup, as Batcher does for writes). Nothing is cached
 * beyond one query, so a template, configuration or blacklist change applies to the next push.
 */
export function targetLoader(db: Queryable): TargetLookup {
  const batcher = new Batcher<PushTargetKey, PushTarget | undefined>((keys) => findPushTargets(db, keys), { maxBatch: 1000 });
  return (key) => batcher.submit(key);
}

/** What one request's pushes need from the database, each distinct thing looked up once. */
export class PushContext {
  private readonly targets = new Map<string, Promise<PushTarget | undefined>>();
  private readonly merchants = new Map<string, Promise<string | undefined>>();
  private readonly campaigns = new Map<string, Promise<CampaignRef | undefined>>();
  private readonly dnc = new Map<string, Promise<DncHit | undefined>>();
  private readonly dncLookup = new Batcher<{ phone: string; lists: readonly string[] }, DncHit | undefined>((asks) => findDncHits(this.db, asks), { maxBatch: 1000 });

  constructor(
    private readonly db: Queryable,
    private readonly lookup: TargetLookup,
    /** The outbound URL policy: a reporting webhook at a refused address is refused when pushed. */
    readonly outbound: OutboundPolicy,
  ) {}

  /** The template by name, its configuration, and whether `phone` is blacklisted. */
  target(resellerId: string, templateName: string, phone: string | undefined) {
    return memo(this.targets, `${resellerId}\u0000${templateName}\u0000${phone ?? ''}`, () => this.lookup({ resellerId, templateName, phone }));
  }

  /** The first of `lists` that holds `phone` (the lookups of a batch answered together). */
  dncListed(phone: string, lists: readonly string[]) {
    return memo(this.dnc, `${lists.join(',')}\u0000${phone}`, () => this.dncLookup.submit({ phone, lists }));
  }

  campaign(id: string) {
    return memo(this.campaigns, id, async () => (await campaignRefs(this.db, [id]))[0]);
  }

  merchantReseller(merchantId: string) {
    return memo(this.merchants, merchantId, async () => {
      const { rows } = await this.db.query<{ reseller_id: string }>('SELECT reseller_id FROM merchants WHERE id = $1', [merchantId]);
      return rows[0]?.reseller_id;
    });
  }
}

/** The variables a flow's prompts use, worked out once per flow a lookup returned (the pushes of a batch to one template share it). */
const flowVariables = new WeakMap<object, readonly string[]>();
function variablesOf(flow: PushTarget['template']['flow']): readonly string[] {
  let variables = flowVariables.get(flow);
  if (!variables) {
    variables = promptVariables(flow);
    flowVariables.set(flow, variables);
  }
  return variables;
}

function memo<T>(cache: Map<string, Promise<T>>, key: string, load: () => Promise<T>): Promise<T> {
  let hit = cache.get(key);
  if (!hit) {
    hit = load();
    cache.set(key, hit);
  }
  return hit;
}

/**
 * A playground lead's `configurations_override` changes how its configuration dials (rate limits,
 * pre-checks, providers, URLs), so only a role that may change configurations may send one; any
 * other is refused, naming the fields, rather than quietly dialling past the configuration.
 */
function assertMayOverride(caller: Principal, override: Record<string, unknown>): void {
  const fields = Object.keys(override);
  if (fields.length === 0 || can(caller.role, 'configurations', 'write')) return;
  throw new AppError(
    403,
    'override_not_allowed',
    `configurations_override may only be sent by a role that may change configurations; a ${caller.role} token may not (${fields.join(', ')})`,
    fields.map((f) => ({ path: `/configurations_override/${f}`, message: `may not be overridden by a ${caller.role}` })),
  );
}

/** The outbound URL policy's write-time check on an override's URLs (pre-checks, service callback). */
function overrideUrlErrors(override: Record<string, unknown>, outbound: OutboundPolicy): FieldError[] {
  const errors: FieldError[] = [];
  const check = (path: string, url: unknown) => {
    const refusal = typeof url === 'string' ? outbound.urlRefusal(url) : undefined;
    if (refusal) errors.push({ path: `/configurations_override${path}`, message: refusal });
  };
  check('/service_callback_url', override.service_callback_url);
  if (Array.isArray(override.pre_checks)) {
    override.pre_checks.forEach((c: { http_request?: { url?: unknown } }, i) => check(`/pre_checks/${i}/http_request/url`, c?.http_request?.url));
  }
  return errors;
}

/** Checks one push body and builds its lead; throws the AppError POST /leads would answer. */
export async function preparePush(caller: Principal, raw: unknown, ctx: PushContext): Promise<Pushed> {
  const invalid = validatePush(raw);
  if (invalid) throw schemaProblem(invalid.raw, invalid.errors);
  const body = raw as PushBody;
  if (body.reporting_webhook_url !== undefined) {
    const refusal = ctx.outbound.urlRefusal(body.reporting_webhook_url);
    if (refusal) throw badRequest(`Request body: /reporting_webhook_url ${refusal}`, [{ path: '/reporting_webhook_url', message: refusal }], 'outbound_url_refused');
  }

  const merchantId = body.merchant_id ?? (caller.role === 'merchant' || caller.role === 'user' ? caller.merchantId : null);
  assertOwnerInScope(caller, body.reseller_id, merchantId);

  const rawPhone = body.payload.customer_mobile_number;
  const target = await ctx.target(body.reseller_id, body.template, typeof rawPhone === 'string' ? rawPhone : undefined);
  if (!target) throw templateNotFound(body.template, body.reseller_id, merchantId);
  const { template, configuration } = target;
  if (template.merchant_id !== null && template.merchant_id !== merchantId) throw templateNotFound(body.template, body.reseller_id, merchantId);
  if (merchantId !== null && template.merchant_id === null && (await ctx.merchantReseller(merchantId)) !== body.reseller_id) {
    throw templateNotFound(body.template, body.reseller_id, merchantId);
  }

  if (body.campaign_id !== undefined) {
    const refused = joinProblem(await ctx.campaign(body.campaign_id), body.campaign_id, { resellerId: body.reseller_id, merchantId, templateId: template.id });
    if (refused) throw refused;
  }

  const payload: Record<string, unknown> = { ...body.payload };
  if (body.reporting_webhook_url !== undefined) payload.reporting_webhook_url = body.reporting_webhook_url;

  const errors: FieldError[] = variablesOf(template.flow)
    .filter((v) => payload[v] === undefined || payload[v] === null)
    .map((v) => ({ path: `/payload/${v}`, message: `is required: template ${template.name} uses {${v}}` }));
  const phone = payload.customer_mobile_number as string | undefined;
  const phoneProblem = phone !== undefined ? phoneNumberProblem(phone) : undefined;
  if (phoneProblem) errors.unshift({ path: '/payload/customer_mobile_number', message: phoneProblem });
  const digits = payload.dial_digits;
  if (digits !== undefined && (typeof digits !== 'string' || !DTMF_SEQUENCE.test(digits) || digits.length > 64)) {
    errors.push({ path: '/payload/dial_digits', message: 'must be the keys to press after the answer: 0-9, * and #, w for a half-second pause (at most 64)' });
  }

  const isPlayground = body.is_playground ?? false;
  const override = isPlayground ? ((body.configurations_override ?? null) as Record<string, unknown> | null) : null;
  if (override !== null) {
    assertMayOverride(caller, override);
    const bad = validateOverride(structuredClone(override));
    if (bad) errors.push(...bad.errors.map((e) => ({ path: `/configurations_override${e.path === '/' ? '' : e.path}`, message: e.message })));
    const refused = bad ? [] : overrideUrlErrors(override, ctx.outbound);
    if (refused.length > 0) throw badRequest(`Request body: ${refused[0]!.path} ${refused[0]!.message}`, refused, 'outbound_url_refused');
  }
  const consentRefused = consentProblem(body.consent, configuration?.require_consent ?? false);
  if (consentRefused) errors.push(consentRefused);
  if (errors.length > 0) {
    throw unprocessable(`Request body: ${errors[0]!.path} ${errors[0]!.message}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}`, errors, 'schema_validation_failed');
  }

  if (phone !== undefined && (configuration?.enforce_blacklist ?? true) && target.blacklisted) {
    throw forbidden(`payload.customer_mobile_number ${phone} is blacklisted`, 'blacklisted');
  }
  const dnc = phone !== undefined && configuration && configuration.dnc_lists.length > 0 ? await ctx.dncListed(phone, configuration.dnc_lists) : undefined;
  if (dnc) throw forbidden(`payload.customer_mobile_number ${phone} is on the do-not-call list ${JSON.stringify(dnc.name)} (${dnc.list_id})`, 'dnc_listed');

  const notes: string[] = [];
  if (phone === undefined) notes.push('payload.customer_mobile_number is missing: the lead stays in BACKLOG and will not be dialled');
  const callable = mayCall(configuration, { is_playground: isPlayground });
  if (!configuration) notes.push(`no configuration exists yet for template ${template.name}: the lead waits until one is created`);
  else if (!callable) notes.push(`calling is disabled in the configuration of template ${template.name}: the lead waits until it is enabled`);
  if (body.configurations_override != null && !isPlayground) notes.push('configurations_override was ignored because is_playground is not true');
  return {
    lead: {
      id: newId(),
      reseller_id: body.reseller_id,
      merchant_id: merchantId,
      template_id: template.id,
      template_name: template.name,
      request_id: body.request_id,
      execution_mode: body.execution_mode ?? 'TELEPHONY',
      is_playground: isPlayground,
      configurations_override: override,
      payload,
      campaign_id: body.campaign_id ?? null,
      consent: body.consent ?? null,
      // Nothing may call it yet (no configuration, or calling disabled): it waits to be looked at
      // again, or until the configuration is created or enabled, instead of filling the queue head.
      due_in_seconds: phone === undefined ? null : callable ? (configuration?.initial_offset ?? 0) : HELD_SECONDS,
    },
    message: notes.length === 0 ? 'Lead queued' : `Lead queued; ${notes.join('; ')}`,
  };
}

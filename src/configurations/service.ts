import { assertOwnerInScope, inScope, scopeCondition, type Principal } from '../auth/index.js';
import type { Db, Queryable } from '../db/index.js';
import { compileBodyValidator } from '../http/index.js';
import { AppError, conflict, isUniqueViolation, notFound, type FieldError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { OutboundPolicy } from '../lib/outbound/index.js';
import { unknownDncLists } from '../compliance/index.js';
import { phoneNumberProblem } from '../lib/phone.js';
import { isTimeZone } from '../lib/time.js';
import { findTemplateById, type TemplateRef } from '../templates/index.js';
import { ConfigurationsRepository, type ConfigurationRow, type ConfigurationWrite } from './repository.js';
import { CreateConfigurationBody, WRITTEN_COLUMNS } from './schema.js';

export interface ConfigurationFilter {
  reseller_id?: string;
  template?: string;
  merchant_id?: string;
}

/** The configuration the scheduler dials a lead with: the one of its reseller and template. */
export async function findConfiguration(db: Queryable, resellerId: string, templateId: string): Promise<ConfigurationRow | undefined> {
  return new ConfigurationsRepository(db).byResellerTemplate(resellerId, templateId);
}

export interface PushTarget {
  template: TemplateRef;
  configuration: ConfigurationRow | undefined;
  /** Whether `phone` is on the reseller's or the platform blacklist (false without a phone). */
  blacklisted: boolean;
}

export interface PushTargetKey {
  resellerId: string;
  templateName: string;
  phone: string | undefined;
}

/**
 * Everything lead pushes need, for many pushes in one round trip: per key, the template by name
 * within the reseller, its configuration, and whether the destination number is blacklisted.
 * Answers one entry per key, in order (undefined: no such template).
 */
export async function findPushTargets(db: Queryable, keys: readonly PushTargetKey[]): Promise<(PushTarget | undefined)[]> {
  if (keys.length === 0) return [];
  const rows = await new ConfigurationsRepository(db).pushTargets(keys);
  // Rows come in any order; a template's flow and configuration are on its first key's row only.
  const shared = new Map<string, { template: TemplateRef; configuration: ConfigurationRow | undefined }>();
  for (const { id, name, reseller_id, merchant_id, flow, configuration, first } of rows) {
    if (first) shared.set(id, { template: { id, name, reseller_id, merchant_id, flow: flow! }, configuration: configuration ?? undefined });
  }
  const targets: (PushTarget | undefined)[] = keys.map(() => undefined);
  for (const { i, id, blacklisted } of rows) targets[i] = { ...shared.get(id)!, blacklisted };
  return targets;
}

const withDefaults = compileBodyValidator(CreateConfigurationBody);

const duplicate = () => conflict('A configuration for this reseller and template already exists', 'duplicate_configuration');

function invalid(errors: FieldError[]): AppError {
  const first = errors[0]!;
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
  return new AppError(400, 'invalid_configuration', `Invalid configuration: ${first.path} ${first.message}${more}`, errors);
}

/** Checks the schema cannot express: time zones, phone numbers, fields that go together. */
function fieldErrors(input: CreateConfigurationBody, outbound: OutboundPolicy): FieldError[] {
  const errors: FieldError[] = [];
  if (!isTimeZone(input.call_timezone)) {
    errors.push({ path: '/call_timezone', message: `${JSON.stringify(input.call_timezone)} is not an IANA time zone such as Europe/London` });
  }
  if (input.inbound_call_timezone != null && !isTimeZone(input.inbound_call_timezone)) {
    errors.push({ path: '/inbound_call_timezone', message: `${JSON.stringify(input.inbound_call_timezone)} is not an IANA time zone` });
  }
  const redirectProblem = input.inbound_redirect_number != null ? phoneNumberProblem(input.inbound_redirect_number) : undefined;
  if (redirectProblem) errors.push({ path: '/inbound_redirect_number', message: redirectProblem });
  if (input.inbound_block_action === 'REDIRECT' && input.inbound_redirect_number == null) {
    errors.push({ path: '/inbound_redirect_number', message: 'is required when inbound_block_action is REDIRECT' });
  }
  input.rate_limit_whitelist.forEach((n, i) => {
    const problem = phoneNumberProblem(n);
    if (problem) errors.push({ path: `/rate_limit_whitelist/${i}`, message: problem });
  });
  if (input.rate_limit_enabled) {
    if (input.rate_limit_max_calls == null) errors.push({ path: '/rate_limit_max_calls', message: 'is required when rate_limit_enabled is true' });
    if (input.rate_limit_window_seconds == null) {
      errors.push({ path: '/rate_limit_window_seconds', message: 'is required when rate_limit_enabled is true' });
    }
  }
  if (input.voicemail_action === 'leave_message' && (input.voicemail_message == null || input.voicemail_message.trim() === '')) {
    errors.push({ path: '/voicemail_message', message: 'is required when voicemail_action is leave_message (the words left on the machine)' });
  }
  const names = new Set<string>();
  input.pre_checks.forEach((check, i) => {
    if (names.has(check.name)) errors.push({ path: `/pre_checks/${i}/name`, message: `${JSON.stringify(check.name)} is used twice` });
    names.add(check.name);
    const url = check.http_request.url.replace(/\{[A-Za-z0-9_.]+\}/g, 'x');
    if (!/^https?:\/\//i.test(url) || !URL.canParse(url)) {
      errors.push({ path: `/pre_checks/${i}/http_request/url`, message: 'must be an http(s) URL' });
    } else {
      const refusal = outbound.urlRefusal(check.http_request.url);
      if (refusal) errors.push({ path: `/pre_checks/${i}/http_request/url`, message: refusal });
    }
  });
  if (input.service_callback_url != null) {
    const refusal = outbound.urlRefusal(input.service_callback_url);
    if (refusal) errors.push({ path: '/service_callback_url', message: refusal });
  }
  return errors;
}

/**
 * Called in the transaction that saves a configuration which calls where none did before (created
 * with calling enabled, calling switched on, or moved to another template): the template's leads
 * held while nothing could call them are brought forward (the lifecycle's `releaseHeld`). What it
 * returns, if anything, runs after the transaction commits, without holding up the response (the
 * rest of a long queue of held leads).
 */
export type OnCallingEnabled = (q: Queryable, configuration: ConfigurationRow) => Promise<(() => void) | undefined>;

export class ConfigurationsService {
  private readonly repo: ConfigurationsRepository;

  constructor(
    private readonly db: Db,
    /** The outbound URL policy: pre-check and callback URLs pointing at refused addresses are refused when written. */
    private readonly outbound: OutboundPolicy = new OutboundPolicy(),
    private readonly onCallingEnabled: OnCallingEnabled = async () => undefined,
  ) {
    this.repo = new ConfigurationsRepository(db);
  }

  async create(caller: Principal, input: CreateConfigurationBody): Promise<ConfigurationRow> {
    const row = await this.resolve(caller, input);
    let then: (() => void) | undefined;
    try {
      const created = await this.db.tx(async (q) => {
        const inserted = await new ConfigurationsRepository(q).insert(newId(), row);
        if (inserted.enable_calling) then = await this.onCallingEnabled(q, inserted);
        return inserted;
      });
      then?.();
      return created;
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicate();
      throw err;
    }
  }

  /**
   * The configuration of (reseller, template), made from `fields` over the schema's defaults when
   * there is none: checked and saved as a create is (the template's held leads are released). An
   * existing one is left as it is.
   */
  async ensure(caller: Principal, fields: Partial<CreateConfigurationBody> & Pick<CreateConfigurationBody, 'reseller_id' | 'template' | 'calling_provider'>): Promise<ConfigurationRow> {
    const found = await this.repo.byResellerTemplate(fields.reseller_id, fields.template);
    if (found) return found;
    const body: unknown = structuredClone(fields);
    const bad = withDefaults(body);
    if (bad) throw invalid(bad.errors);
    try {
      return await this.create(caller, body as CreateConfigurationBody);
    } catch (err) {
      if (!(err instanceof AppError && err.code === 'duplicate_configuration')) throw err;
    }
    return (await this.repo.byResellerTemplate(fields.reseller_id, fields.template))!;
  }

  list(caller: Principal, filter: ConfigurationFilter, limit: number, offset: number) {
    const params: unknown[] = [];
    const conds = [scopeCondition(caller, { reseller: 'c.reseller_id', merchant: 'c.merchant_id' }, params, { resellerWide: true })];
    const narrow = (column: string, value: string | undefined) => {
      if (value === undefined) return;
      params.push(value);
      conds.push(`${column} = $${params.length}`);
    };
    narrow('c.reseller_id', filter.reseller_id);
    narrow('c.template_id', filter.template);
    narrow('c.merchant_id', filter.merchant_id);
    return this.repo.list(conds.join(' AND '), params, limit, offset);
  }

  async get(caller: Principal, id: string): Promise<ConfigurationRow> {
    const row = await this.repo.byId(id);
    if (!row || !inScope(caller, row.reseller_id, row.merchant_id, { resellerWide: true })) throw notFound(`Configuration ${id}`);
    return row;
  }

  async replace(caller: Principal, id: string, input: CreateConfigurationBody & { id: string }): Promise<ConfigurationRow> {
    if (input.id !== id) throw invalid([{ path: '/id', message: `${JSON.stringify(input.id)} must equal the id in the path (${id})` }]);
    const current = await this.get(caller, id);
    if (input.reseller_id !== current.reseller_id) {
      throw invalid([{ path: '/reseller_id', message: `cannot be changed (is ${current.reseller_id}, got ${input.reseller_id})` }]);
    }
    const row = await this.resolve(caller, input);
    let then: (() => void) | undefined;
    try {
      const replaced = await this.db.tx(async (q) => {
        const repo = new ConfigurationsRepository(q);
        // Read again under a lock: of two edits at once, the second sees what the first wrote.
        const before = await repo.callingForUpdate(id);
        const updated = before && (await repo.update(id, row));
        if (!before || !updated) throw notFound(`Configuration ${id}`);
        if (updated.enable_calling && (!before.enable_calling || updated.template_id !== before.template_id)) then = await this.onCallingEnabled(q, updated);
        return updated;
      });
      then?.();
      return replaced;
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicate();
      throw err;
    }
  }

  async delete(caller: Principal, id: string): Promise<ConfigurationRow> {
    const row = await this.get(caller, id);
    if (!(await this.repo.delete(id))) throw notFound(`Configuration ${id}`);
    return row;
  }

  /** Validates a create or replace body and turns it into the row to write. */
  private async resolve(caller: Principal, input: CreateConfigurationBody): Promise<ConfigurationWrite> {
    assertOwnerInScope(caller, input.reseller_id, input.merchant_id ?? null);
    const errors = fieldErrors(input, this.outbound);
    const template = await findTemplateById(this.db, input.template);
    let merchantId = input.merchant_id ?? null;
    if (!template || template.reseller_id !== input.reseller_id) {
      errors.unshift({ path: '/template', message: `${JSON.stringify(input.template)} is not a template id of reseller ${input.reseller_id}` });
    } else {
      if (input.merchant_id === undefined) merchantId = template.merchant_id;
      if (template.merchant_id !== null && merchantId !== template.merchant_id) {
        errors.push({ path: '/merchant_id', message: `must be the template's merchant (${template.merchant_id})` });
      }
    }
    if (merchantId !== null && template && errors.every((e) => e.path !== '/merchant_id')) {
      const { rows } = await this.db.query('SELECT 1 FROM merchants WHERE id = $1 AND reseller_id = $2', [merchantId, input.reseller_id]);
      if (rows.length === 0) errors.push({ path: '/merchant_id', message: `${JSON.stringify(merchantId)} is not a merchant of reseller ${input.reseller_id}` });
    }
    if (input.calling_provider === 'SIP') {
      const trunk = input.trunk_id ? (await this.db.query<{ reseller_id: string }>('SELECT reseller_id FROM sip_trunks WHERE id = $1', [input.trunk_id])).rows[0] : undefined;
      if (!input.trunk_id) errors.push({ path: '/trunk_id', message: 'is required when calling_provider is SIP' });
      else if (trunk?.reseller_id !== input.reseller_id) errors.push({ path: '/trunk_id', message: `${JSON.stringify(input.trunk_id)} is not a trunk of reseller ${input.reseller_id}` });
    } else if (input.trunk_id) errors.push({ path: '/trunk_id', message: 'applies only when calling_provider is SIP' });
    // The do-not-call lists named must be the reseller's own or platform-wide ones.
    errors.push(...(await unknownDncLists(this.db, input.reseller_id, input.dnc_lists ?? [])));
    if (errors.length > 0) throw invalid(errors);
    const fields = input as unknown as Record<string, unknown>;
    const row = Object.fromEntries(WRITTEN_COLUMNS.map((column) => [column, fields[column === 'template_id' ? 'template' : column] ?? null]));
    return { ...(row as ConfigurationWrite), merchant_id: merchantId };
  }
}

import { assertOwnerInScope, inScope, merchantReseller, resellerExists, scopeCondition, type Principal } from '../auth/index.js';
import type { Db, Queryable } from '../db/index.js';
import { AppError, conflict, forbidden, isUniqueViolation, notFound, type FieldError } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { OutboundPolicy } from '../lib/outbound/index.js';
import { validateFlow, type Flow } from '../voice/flow/index.js';
import { agentChoiceErrors, flowLanguageErrors, type AgentChoice, type AgentOptions } from '../voice/index.js';
import { TemplatesRepository, type TemplateRow } from './repository.js';

export interface NewTemplate {
  name: string;
  reseller_id: string;
  /** Omitted: the caller's own merchant for a merchant token, reseller-level (null) otherwise. */
  merchant_id?: string | null;
  flow: unknown;
  /** The voice, model, temperature and language of its calls; omitted or null: the service defaults. */
  agent?: AgentChoice | null;
}

/** PUT body: the whole template; omitted merchant_id means reseller-level, as on create. */
export interface TemplateReplacement extends Omit<NewTemplate, 'reseller_id'> {
  id: string;
  /** When given, it must be the template's current reseller. */
  reseller_id?: string;
}

export interface TemplateFilter {
  reseller_id?: string;
  merchant_id?: string;
  name?: string;
}

/** What another feature needs of a template: a lead push resolves a name, the voice engine runs `flow`. */
export interface TemplateRef {
  id: string;
  name: string;
  reseller_id: string;
  merchant_id: string | null;
  flow: Flow;
  /** Its calls' choices of voice, model and language (absent where a lookup does not read them). */
  agent?: AgentChoice | null;
}

const refOf = (row: TemplateRow): TemplateRef => ({
  id: row.id,
  name: row.name,
  reseller_id: row.reseller_id,
  merchant_id: row.merchant_id,
  flow: row.flow,
  agent: row.agent,
});

/** A template by its name within a reseller (names are unique there); scope checks are the caller's. */
export async function findTemplateByName(db: Queryable, resellerId: string, name: string): Promise<TemplateRef | undefined> {
  const row = await new TemplatesRepository(db).byName(resellerId, name);
  return row && refOf(row);
}

/** A template by id, unscoped; scope checks are the caller's. */
export async function findTemplateById(db: Queryable, id: string): Promise<TemplateRef | undefined> {
  const row = await new TemplatesRepository(db).byId(id);
  return row && refOf(row);
}

const duplicate = (name: string) => conflict(`A template named "${name}" already exists in this reseller`, 'duplicate_template');

function invalid(errors: FieldError[]): AppError {
  const first = errors[0]!;
  const code = errors.some((e) => e.path.startsWith('/flow')) ? 'invalid_flow' : errors.some((e) => e.path.startsWith('/agent')) ? 'invalid_agent' : 'bad_request';
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
  return new AppError(400, code, `Invalid template: ${first.path} ${first.message}${more}`, errors);
}

export class TemplatesService {
  private readonly repo: TemplatesRepository;

  constructor(
    private readonly db: Db,
    /** The outbound URL policy: hook URLs pointing at refused addresses are refused when written. */
    private readonly outbound: OutboundPolicy = new OutboundPolicy(),
    /** What a template may choose of voice, model and language (GET /agent-options); none offered: only the local voices. */
    readonly agentOptions: AgentOptions = { voices: [], llm_models: [], stt_languages: [], stt_language_match: 'exact', temperature: null },
  ) {
    this.repo = new TemplatesRepository(db);
  }

  async create(caller: Principal, input: NewTemplate): Promise<TemplateRow> {
    const merchantId = this.ownerMerchant(caller, input.merchant_id);
    assertOwnerInScope(caller, input.reseller_id, merchantId);
    const errors = [...(await this.ownerErrors(input.reseller_id, merchantId, true)), ...validateFlow(input.flow, this.urlRefusal), ...agentChoiceErrors(input.agent, this.agentOptions), ...flowLanguageErrors(input.flow, input.agent)];
    if (errors.length > 0) throw invalid(errors);
    try {
      return await this.repo.insert({ id: newId(), name: input.name, reseller_id: input.reseller_id, merchant_id: merchantId, flow: input.flow, agent: input.agent ?? null });
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicate(input.name);
      throw err;
    }
  }

  /**
   * The reseller's template named `input.name`, created (its flow validated as on create) when
   * there is none; an existing one is left as it is. Two callers at once end with the same one.
   */
  async ensure(caller: Principal, input: NewTemplate): Promise<TemplateRow> {
    const found = await this.repo.byName(input.reseller_id, input.name);
    if (found) return this.visible(caller, input.name, found);
    try {
      return await this.create(caller, input);
    } catch (err) {
      if (!(err instanceof AppError && err.code === 'duplicate_template')) throw err;
    }
    return this.visible(caller, input.name, await this.repo.byName(input.reseller_id, input.name));
  }

  list(caller: Principal, filter: TemplateFilter, limit: number, offset: number) {
    const params: unknown[] = [];
    // Merchants and users also see their reseller's reseller-level templates (merchant_id NULL).
    const conds = [scopeCondition(caller, { reseller: 't.reseller_id', merchant: 't.merchant_id' }, params, { resellerWide: true })];
    const narrow = (column: string, value: string | undefined) => {
      if (value === undefined) return;
      params.push(value);
      conds.push(`${column} = $${params.length}`);
    };
    narrow('t.reseller_id', filter.reseller_id);
    narrow('t.merchant_id', filter.merchant_id);
    narrow('t.name', filter.name);
    return this.repo.list(conds.join(' AND '), params, limit, offset);
  }

  /** 404 both when missing and when out of scope, so that existence does not leak. */
  async get(caller: Principal, id: string): Promise<TemplateRow> {
    return this.visible(caller, id, await this.repo.byId(id));
  }

  /** The template, when the caller may change it (and what belongs to it, such as its test cases). */
  async changeable(caller: Principal, id: string): Promise<TemplateRow> {
    const row = await this.get(caller, id);
    this.assertMayChange(caller, row);
    return row;
  }

  async replace(caller: Principal, id: string, input: TemplateReplacement): Promise<TemplateRow> {
    if (input.id !== id) {
      throw invalid([{ path: '/id', message: `${JSON.stringify(input.id)} must equal the id in the path (${id})` }]);
    }
    const current = await this.get(caller, id);
    this.assertMayChange(caller, current);
    const merchantId = this.ownerMerchant(caller, input.merchant_id);
    assertOwnerInScope(caller, current.reseller_id, merchantId);
    const errors: FieldError[] = [];
    if (input.reseller_id !== undefined && input.reseller_id !== current.reseller_id) {
      errors.push({ path: '/reseller_id', message: `cannot be changed (is ${current.reseller_id}, got ${input.reseller_id})` });
    }
    errors.push(...(await this.ownerErrors(current.reseller_id, merchantId, false)), ...validateFlow(input.flow, this.urlRefusal), ...agentChoiceErrors(input.agent, this.agentOptions), ...flowLanguageErrors(input.flow, input.agent));
    if (errors.length > 0) throw invalid(errors);
    try {
      const row = await this.repo.update(id, { name: input.name, merchant_id: merchantId, flow: input.flow, agent: input.agent ?? null });
      if (!row) throw notFound(`Template ${id}`);
      return row;
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicate(input.name);
      throw err;
    }
  }

  /**
   * Deletes an unreferenced template. The row is locked first: a lead insert takes a key-share
   * lock on it through its foreign key, so a push either commits before the reference check (and
   * is seen) or waits and then fails its foreign key; it never slips in between check and delete.
   */
  delete(caller: Principal, id: string): Promise<TemplateRow> {
    return this.db.tx(async (q) => {
      const repo = new TemplatesRepository(q);
      const current = this.visible(caller, id, await repo.byIdForUpdate(id));
      this.assertMayChange(caller, current);
      const refs = await repo.references(id);
      const users = (['leads', 'configurations'] as const).filter((k) => refs[k]);
      if (users.length > 0) {
        throw conflict(`Template ${id} is still referenced by ${users.join(' and ')}; it cannot be deleted`, 'template_in_use');
      }
      await repo.delete(id);
      return current;
    });
  }

  private readonly urlRefusal = (url: string) => this.outbound.urlRefusal(url);

  private visible(caller: Principal, id: string, row: TemplateRow | undefined): TemplateRow {
    if (!row || !inScope(caller, row.reseller_id, row.merchant_id, { resellerWide: true })) throw notFound(`Template ${id}`);
    return row;
  }

  /** A merchant reads its reseller's shared templates but may change only its own. */
  private assertMayChange(caller: Principal, row: TemplateRow): void {
    if (row.merchant_id === null && (caller.role === 'merchant' || caller.role === 'user')) {
      throw forbidden(`Template ${row.id} belongs to the reseller; a ${caller.role} token cannot change it`);
    }
  }

  /** The merchant a write is for: a merchant token writes for itself unless it names another. */
  private ownerMerchant(caller: Principal, requested: string | null | undefined): string | null {
    if (requested !== undefined) return requested;
    return caller.role === 'merchant' || caller.role === 'user' ? caller.merchantId : null;
  }

  private async ownerErrors(resellerId: string, merchantId: string | null, checkReseller: boolean): Promise<FieldError[]> {
    if (checkReseller && !(await resellerExists(this.db, resellerId))) {
      return [{ path: '/reseller_id', message: `${JSON.stringify(resellerId)} is not a known reseller` }];
    }
    if (merchantId !== null && (await merchantReseller(this.db, merchantId)) !== resellerId) {
      return [{ path: '/merchant_id', message: `${JSON.stringify(merchantId)} is not a merchant of reseller ${resellerId}` }];
    }
    return [];
  }
}

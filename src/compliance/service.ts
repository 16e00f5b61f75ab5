import { scopeCondition, type Principal } from '../auth/index.js';
import type { Db } from '../db/index.js';
import { badRequest, conflict, forbidden, isUniqueViolation, notFound, unprocessable } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { E164_HINT, isE164 } from '../lib/phone.js';
import { readNumbers } from './csv-import.js';
import { DncRepository, type DncListRow } from './repository.js';
import type { CreateDncListBody, ImportResult } from './schema.js';

/**
 * Do-not-call lists. Each reseller keeps its own; an admin's lists without a reseller are
 * platform-wide: any reseller's configuration may honour them. Merchants read their reseller's and
 * the platform's lists; only admins and resellers change them, a reseller only its own. A list
 * outside the caller's scope is not found (404).
 */
export class DncService {
  private readonly repo: DncRepository;

  constructor(private readonly db: Db) {
    this.repo = new DncRepository(db);
  }

  private visible(caller: Principal, row: DncListRow): boolean {
    return caller.role === 'admin' || row.reseller_id === null || row.reseller_id === caller.resellerId;
  }

  async get(caller: Principal, id: string): Promise<DncListRow> {
    const row = await this.repo.byId(id);
    if (!row || !this.visible(caller, row)) throw notFound(`Do-not-call list ${id}`);
    return row;
  }

  /** A list the caller may change: 404 out of scope, 403 a platform-wide list for a reseller. */
  private async writable(caller: Principal, id: string, repo = this.repo): Promise<DncListRow> {
    const row = await repo.byId(id);
    if (!row || !this.visible(caller, row)) throw notFound(`Do-not-call list ${id}`);
    if (caller.role !== 'admin' && row.reseller_id !== caller.resellerId) {
      throw forbidden(`Do-not-call list ${id} is platform-wide: only an admin may change it`, 'out_of_scope');
    }
    return row;
  }

  async create(caller: Principal, body: CreateDncListBody): Promise<DncListRow> {
    let resellerId: string | null;
    if (caller.role === 'admin') resellerId = body.reseller_id ?? null;
    else {
      if (body.reseller_id != null && body.reseller_id !== caller.resellerId) {
        throw forbidden(`reseller_id ${body.reseller_id} is outside the scope of this token`, 'out_of_scope');
      }
      resellerId = caller.resellerId;
    }
    if (resellerId !== null) {
      const { rows } = await this.db.query('SELECT 1 FROM resellers WHERE id = $1', [resellerId]);
      if (rows.length === 0) throw badRequest(`reseller_id ${resellerId} is not a known reseller`, [{ path: '/reseller_id', message: 'is not a known reseller' }]);
    }
    try {
      return await this.repo.insert({ id: newId(), reseller_id: resellerId, name: body.name, source: body.source ?? null, version: body.version ?? null });
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict(`A do-not-call list named ${JSON.stringify(body.name)} exists already in this scope`, 'duplicate_dnc_list');
      throw err;
    }
  }

  list(caller: Principal, limit: number, offset: number) {
    const params: unknown[] = [];
    const where = caller.role === 'admin' ? 'TRUE' : `(${scopeCondition(caller, { reseller: 'reseller_id' }, params)} OR reseller_id IS NULL)`;
    return this.repo.list(where, params, limit, offset);
  }

  async delete(caller: Principal, id: string): Promise<DncListRow> {
    const row = await this.writable(caller, id);
    await this.repo.delete(id);
    return row;
  }

  /**
   * Imports a CSV body as it streams, in one transaction: every valid number is added (in batches
   * of multi-row statements), malformed lines are reported with their line numbers. A file
   * without a single valid number, or one that cannot be read, changes nothing (422).
   */
  async import(caller: Principal, id: string, body: AsyncIterable<Buffer | string>, options: { version?: string; mode?: 'append' | 'replace' }): Promise<ImportResult> {
    await this.writable(caller, id);
    return this.db.tx(async (q) => {
      const repo = new DncRepository(q);
      if (!(await repo.lock(id))) throw notFound(`Do-not-call list ${id}`);
      if (options.mode === 'replace') await repo.clear(id);
      let imported = 0;
      let tally;
      try {
        tally = await readNumbers(body, async (numbers) => {
          imported += await repo.addNumbers(id, numbers);
        });
      } catch (err) {
        if (err instanceof TypeError && /decode|encoding/i.test(err.message)) throw badRequest('The CSV body is not valid UTF-8', undefined, 'invalid_encoding');
        throw err;
      }
      if (tally.valid === 0) {
        const first = tally.errors[0];
        throw unprocessable(
          first ? `No valid number in the file: line ${first.line} ${JSON.stringify(first.value)} ${E164_HINT}${tally.malformed > 1 ? ` (and ${tally.malformed - 1} more lines)` : ''}` : 'The file holds no number',
          tally.errors.map((e) => ({ path: `/line/${e.line}`, message: `${JSON.stringify(e.value)} ${e.message}` })),
          'no_valid_numbers',
        );
      }
      const after = await repo.finishImport(id, options.version);
      return {
        list_id: id,
        version: after.version,
        lines: tally.lines,
        imported,
        already_listed: tally.valid - imported,
        malformed: tally.malformed,
        errors: tally.errors,
        number_count: Number(after.number_count),
      };
    });
  }

  async lookup(caller: Principal, id: string, phone: string): Promise<boolean> {
    await this.get(caller, id);
    if (!isE164(phone)) throw badRequest(`phone ${JSON.stringify(phone)} ${E164_HINT}`, [{ path: '/phone', message: E164_HINT }], 'invalid_phone_number');
    return this.repo.isListed(id, phone);
  }
}

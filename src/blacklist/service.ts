import { scopeCondition, type Principal } from '../auth/index.js';
import type { Db } from '../db/index.js';
import { badRequest, forbidden, type FieldError } from '../lib/errors.js';
import { phoneNumberProblem } from '../lib/phone.js';

export interface BlacklistEntry {
  id: string;
  reseller_id: string | null;
  phone_number: string;
  /** Set when the callee opted out during a call: the lead of that call and what they said. */
  lead_id: string | null;
  reason: string | null;
  created_at: Date;
}

export interface BlacklistChange {
  reseller_id: string | null;
  /** Numbers newly added (POST) or removed (DELETE). */
  changed: string[];
  /** Numbers already present (POST) or not present (DELETE): nothing to do for them. */
  unchanged: string[];
}

function checkNumbers(numbers: string[]): string[] {
  const errors: FieldError[] = [];
  numbers.forEach((n, i) => {
    const problem = phoneNumberProblem(n);
    if (problem) errors.push({ path: `/phone_numbers/${i}`, message: `${JSON.stringify(n)} ${problem}` });
  });
  if (errors.length > 0) {
    const first = errors[0]!;
    throw badRequest(`phone_numbers/${first.path.split('/')[2]}: ${first.message}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}`, errors, 'invalid_phone_number');
  }
  return [...new Set(numbers)];
}

/**
 * The blacklist. Each reseller keeps its own; an admin's entries without a
 * reseller_id form the platform-wide list that applies to every reseller. Merchants read their
 * reseller's list; only admins and resellers change it.
 */
export class BlacklistService {
  constructor(private readonly db: Db) {}

  /** The list a write goes to: a reseller's own; an admin's named one, or the platform list. */
  private target(caller: Principal, requested: string | null | undefined): string | null {
    if (caller.role === 'admin') return requested ?? null;
    if (requested != null && requested !== caller.resellerId) {
      throw forbidden(`reseller_id ${requested} is outside the scope of this token`, 'out_of_scope');
    }
    return caller.resellerId;
  }

  private async assertReseller(resellerId: string | null): Promise<void> {
    if (resellerId === null) return;
    const { rows } = await this.db.query('SELECT 1 FROM resellers WHERE id = $1', [resellerId]);
    if (rows.length === 0) throw badRequest(`reseller_id ${resellerId} is not a known reseller`, [{ path: '/reseller_id', message: 'is not a known reseller' }]);
  }

  /** Adds numbers in one statement; numbers already listed are reported, not duplicated. */
  async add(caller: Principal, phoneNumbers: string[], requested?: string | null): Promise<BlacklistChange> {
    const numbers = checkNumbers(phoneNumbers);
    const resellerId = this.target(caller, requested);
    await this.assertReseller(resellerId);
    const { rows } = await this.db.query<{ phone_number: string }>(
      `INSERT INTO blacklist (id, reseller_id, phone_number)
       SELECT gen_random_uuid()::text, $1, n FROM unnest($2::text[]) AS n
       ON CONFLICT (coalesce(reseller_id, ''), phone_number) DO NOTHING
       RETURNING phone_number`,
      [resellerId, numbers],
    );
    const added = new Set(rows.map((r) => r.phone_number));
    return { reseller_id: resellerId, changed: numbers.filter((n) => added.has(n)), unchanged: numbers.filter((n) => !added.has(n)) };
  }

  async remove(caller: Principal, phoneNumbers: string[], requested?: string | null): Promise<BlacklistChange> {
    const numbers = checkNumbers(phoneNumbers);
    const resellerId = this.target(caller, requested);
    const { rows } = await this.db.query<{ phone_number: string }>(
      `DELETE FROM blacklist WHERE coalesce(reseller_id, '') = coalesce($1, '') AND phone_number = ANY($2::text[]) RETURNING phone_number`,
      [resellerId, numbers],
    );
    const removed = new Set(rows.map((r) => r.phone_number));
    return { reseller_id: resellerId, changed: numbers.filter((n) => removed.has(n)), unchanged: numbers.filter((n) => !removed.has(n)) };
  }

  /** Entries the caller may see: its reseller's and the platform-wide ones (admins: all). */
  async list(
    caller: Principal,
    filter: { reseller_id?: string; phone_number?: string },
    limit: number,
    offset: number,
  ): Promise<{ rows: BlacklistEntry[]; total: number }> {
    const params: unknown[] = [];
    const conds = [caller.role === 'admin' ? 'TRUE' : `(${scopeCondition(caller, { reseller: 'reseller_id' }, params)} OR reseller_id IS NULL)`];
    if (filter.reseller_id !== undefined) {
      params.push(filter.reseller_id);
      conds.push(`reseller_id = $${params.length}`);
    }
    if (filter.phone_number !== undefined) {
      params.push(filter.phone_number);
      conds.push(`phone_number = $${params.length}`);
    }
    const where = conds.join(' AND ');
    const total = await this.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM blacklist WHERE ${where}`, params);
    const { rows } = await this.db.query<BlacklistEntry>(
      `SELECT id, reseller_id, phone_number, lead_id, reason, created_at FROM blacklist WHERE ${where}
       ORDER BY created_at, phone_number LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, limit, offset],
    );
    return { rows, total: total.rows[0]!.n };
  }
}


import type { Db } from '../db/index.js';
import { badRequest, conflict, isUniqueViolation, notFound } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { phoneNumberProblem } from '../lib/phone.js';
import type { NumberWithHealth, OutboundNumberRow } from './row.js';

/** A number and its health (outbound_number_health, kept by the workers' health rounds). */
const WITH_HEALTH = `SELECT n.*, h.calls, h.answered, h.short_calls, h.pool_calls, h.pool_answered, h.measured_at
  FROM outbound_numbers n LEFT JOIN outbound_number_health h ON h.number_id = n.id`;

export interface NumberInput {
  phone_number: string;
  provider: OutboundNumberRow['provider'];
  status: 'AVAILABLE' | 'IN_USE' | 'DISABLED';
  channel: string;
}

export interface NumberFilter {
  provider?: string;
  status?: string;
  phone_number?: string;
}

/** A number new to the pool: no health round has measured it yet. */
const NOT_MEASURED = { calls: null, answered: null, short_calls: null, pool_calls: null, pool_answered: null, measured_at: null } as const;

const inUse = (id: string, what: string) =>
  conflict(`Number ${id} is IN_USE by a live call; ${what} it once the call ends`, 'number_in_use');

function check(input: NumberInput): void {
  const problem = phoneNumberProblem(input.phone_number);
  if (problem) throw badRequest(`phone_number ${input.phone_number} ${problem}`, [{ path: '/phone_number', message: problem }], 'invalid_phone_number');
  if (input.status === 'IN_USE') {
    throw badRequest('status IN_USE is set by the dialler while a call holds the number; use AVAILABLE or DISABLED', [
      { path: '/status', message: 'must be AVAILABLE or DISABLED' },
    ]);
  }
}

const duplicate = (phone: string) => conflict(`The number ${phone} already exists`, 'duplicate_number');

/**
 * Outbound caller-ID numbers, shared by the platform: admins change them,
 * resellers read them. IN_USE belongs to the dialler: a number held by a call cannot be changed
 * or deleted (409), checked in the same statement that writes, so a call cannot take it in between.
 */
export class NumbersService {
  constructor(private readonly db: Db) {}

  async create(input: NumberInput): Promise<NumberWithHealth> {
    check(input);
    try {
      const { rows } = await this.db.query<OutboundNumberRow>(
        'INSERT INTO outbound_numbers (id, phone_number, provider, status, channel) VALUES ($1, $2, $3, $4, $5) RETURNING *',
        [newId(), input.phone_number, input.provider, input.status, input.channel],
      );
      return { ...rows[0]!, ...NOT_MEASURED };
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicate(input.phone_number);
      throw err;
    }
  }

  /**
   * The numbers a tool keeps in the pool under its own `channel` (the sandbox line's caller IDs):
   * `served` (provider to number) are made AVAILABLE, added when missing, and brought back when the
   * channel disabled them; the channel's numbers of `allProviders` it no longer serves are
   * DISABLED. A number of the channel in a call keeps its state until the call ends, and a number
   * of another channel is never touched.
   */
  async syncChannel(channel: string, served: ReadonlyMap<string, string>, allProviders: readonly string[]): Promise<void> {
    const rows = [...served].map(([provider, phone_number]) => ({ id: newId(), provider, phone_number }));
    await this.db.query(
      `INSERT INTO outbound_numbers (id, phone_number, provider, status, channel)
       SELECT x.id, x.phone_number, x.provider, 'AVAILABLE', $2 FROM jsonb_to_recordset($1::jsonb) AS x (id text, provider text, phone_number text)
       ON CONFLICT (phone_number) DO UPDATE SET status = 'AVAILABLE', updated_at = now()
         WHERE outbound_numbers.channel = $2 AND outbound_numbers.status = 'DISABLED'`,
      [JSON.stringify(rows), channel],
    );
    const gone = allProviders.filter((p) => !served.has(p));
    await this.db.query(
      `UPDATE outbound_numbers SET status = 'DISABLED', updated_at = now()
       WHERE channel = $2 AND status = 'AVAILABLE' AND provider = ANY($1::text[])`,
      [gone, channel],
    );
  }

  async list(filter: NumberFilter, limit: number, offset: number): Promise<{ rows: NumberWithHealth[]; total: number }> {
    const params: unknown[] = [];
    const conds = ['TRUE'];
    for (const key of ['provider', 'status', 'phone_number'] as const) {
      if (filter[key] === undefined) continue;
      params.push(filter[key]);
      conds.push(`n.${key} = $${params.length}`);
    }
    const where = conds.join(' AND ');
    const total = await this.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbound_numbers n WHERE ${where}`, params);
    const { rows } = await this.db.query<NumberWithHealth>(
      `${WITH_HEALTH} WHERE ${where} ORDER BY n.created_at, n.id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, limit, offset],
    );
    return { rows, total: total.rows[0]!.n };
  }

  async get(id: string): Promise<NumberWithHealth> {
    const { rows } = await this.db.query<NumberWithHealth>(`${WITH_HEALTH} WHERE n.id = $1`, [id]);
    if (!rows[0]) throw notFound(`Number ${id}`);
    return rows[0];
  }

  /**
   * An operator rests a number for `restSeconds` (the claim skips it until then), or ends its rest
   * (`restSeconds` null): either way its health is measured afresh from the rest's end, so the
   * calls before it are not held against it again.
   */
  async rest(id: string, restSeconds: number | null): Promise<NumberWithHealth> {
    const { rows } = await this.db.query<{ id: string }>(
      restSeconds === null
        ? `UPDATE outbound_numbers SET rested_until = NULL, rest_reason = NULL, health_since = now(), updated_at = now() WHERE id = $1 RETURNING id`
        : `UPDATE outbound_numbers SET rested_until = now() + make_interval(secs => $2), health_since = now() + make_interval(secs => $2),
             rest_reason = 'rested by an operator', updated_at = now() WHERE id = $1 RETURNING id`,
      restSeconds === null ? [id] : [id, restSeconds],
    );
    if (!rows[0]) throw notFound(`Number ${id}`);
    return this.get(id);
  }

  async replace(id: string, input: NumberInput): Promise<NumberWithHealth> {
    check(input);
    let rows: OutboundNumberRow[];
    try {
      ({ rows } = await this.db.query<OutboundNumberRow>(
        `UPDATE outbound_numbers SET phone_number = $2, provider = $3, status = $4, channel = $5, updated_at = now()
         WHERE id = $1 AND status <> 'IN_USE' RETURNING *`,
        [id, input.phone_number, input.provider, input.status, input.channel],
      ));
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicate(input.phone_number);
      throw err;
    }
    if (rows[0]) return this.get(id);
    await this.get(id); // 404 when missing
    throw inUse(id, 'change');
  }

  async delete(id: string): Promise<OutboundNumberRow> {
    const { rows } = await this.db.query<OutboundNumberRow>("DELETE FROM outbound_numbers WHERE id = $1 AND status <> 'IN_USE' RETURNING *", [id]);
    if (rows[0]) return rows[0];
    await this.get(id);
    throw inUse(id, 'delete');
  }
}

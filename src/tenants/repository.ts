import type { Queryable } from '../db/index.js';
import type { RoleName } from '../auth/index.js';

export interface ResellerRow {
  id: string;
  name: string;
  created_at: Date;
  updated_at: Date;
}

export interface MerchantRow {
  id: string;
  reseller_id: string;
  name: string;
  contact_email: string;
  created_at: Date;
  updated_at: Date;
}

export interface UserRecord {
  id: string;
  email: string;
  role: RoleName;
  reseller_id: string | null;
  merchant_id: string | null;
  created_at: Date;
  updated_at: Date;
}

const USER_COLUMNS = 'id, email, role, reseller_id, merchant_id, created_at, updated_at';

async function pageOf<T>(db: Queryable, table: string, where: string, params: unknown[], order: string, limit: number, offset: number, columns = '*') {
  const total = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE ${where}`, params);
  const { rows } = await db.query<T>(
    `SELECT ${columns} FROM ${table} WHERE ${where} ORDER BY ${order} LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, limit, offset],
  );
  return { rows, total: total.rows[0]!.n };
}

export class TenantsRepository {
  constructor(private readonly db: Queryable) {}

  async insertReseller(id: string, name: string): Promise<ResellerRow> {
    const { rows } = await this.db.query<ResellerRow>('INSERT INTO resellers (id, name) VALUES ($1, $2) RETURNING *', [id, name]);
    return rows[0]!;
  }

  async reseller(id: string): Promise<ResellerRow | undefined> {
    const { rows } = await this.db.query<ResellerRow>('SELECT * FROM resellers WHERE id = $1', [id]);
    return rows[0];
  }

  /** The reseller of this name, in any case (names are unique so). */
  async resellerByName(name: string): Promise<ResellerRow | undefined> {
    const { rows } = await this.db.query<ResellerRow>('SELECT * FROM resellers WHERE lower(name) = lower($1)', [name]);
    return rows[0];
  }

  /** The reseller's merchant of this name, in any case. */
  async merchantByName(resellerId: string, name: string): Promise<MerchantRow | undefined> {
    const { rows } = await this.db.query<MerchantRow>('SELECT * FROM merchants WHERE reseller_id = $1 AND lower(name) = lower($2)', [resellerId, name]);
    return rows[0];
  }

  listResellers(where: string, params: unknown[], limit: number, offset: number) {
    return pageOf<ResellerRow>(this.db, 'resellers', where, params, 'created_at, id', limit, offset);
  }

  async insertMerchant(row: Omit<MerchantRow, 'created_at' | 'updated_at'>): Promise<MerchantRow> {
    const { rows } = await this.db.query<MerchantRow>(
      'INSERT INTO merchants (id, reseller_id, name, contact_email) VALUES ($1, $2, $3, $4) RETURNING *',
      [row.id, row.reseller_id, row.name, row.contact_email],
    );
    return rows[0]!;
  }

  async merchant(id: string): Promise<MerchantRow | undefined> {
    const { rows } = await this.db.query<MerchantRow>('SELECT * FROM merchants WHERE id = $1', [id]);
    return rows[0];
  }

  listMerchants(where: string, params: unknown[], limit: number, offset: number) {
    return pageOf<MerchantRow>(this.db, 'merchants m', where, params, 'm.created_at, m.id', limit, offset, 'm.*');
  }

  async updateMerchant(id: string, name: string, contactEmail: string): Promise<MerchantRow | undefined> {
    const { rows } = await this.db.query<MerchantRow>(
      'UPDATE merchants SET name = $2, contact_email = $3, updated_at = now() WHERE id = $1 RETURNING *',
      [id, name, contactEmail],
    );
    return rows[0];
  }

  async deleteMerchant(id: string): Promise<boolean> {
    const { rowCount } = await this.db.query('DELETE FROM merchants WHERE id = $1', [id]);
    return rowCount > 0;
  }

  /** What still refers to a merchant, by kind; deletion is refused while any is non-zero. */
  async merchantReferences(id: string): Promise<Record<string, number>> {
    const { rows } = await this.db.query<Record<string, number>>(
      `SELECT
         (SELECT count(*)::int FROM templates WHERE merchant_id = $1) AS templates,
         (SELECT count(*)::int FROM leads WHERE merchant_id = $1) AS leads,
         (SELECT count(*)::int FROM configurations WHERE merchant_id = $1) AS configurations,
         (SELECT count(*)::int FROM users WHERE merchant_id = $1) AS users,
         (SELECT count(*)::int FROM s2s_tokens WHERE merchant_id = $1 AND revoked_at IS NULL) AS tokens`,
      [id],
    );
    return rows[0]!;
  }

  async insertUser(row: Omit<UserRecord, 'created_at' | 'updated_at'> & { password_hash: string }): Promise<UserRecord> {
    const { rows } = await this.db.query<UserRecord>(
      `INSERT INTO users (id, email, password_hash, role, reseller_id, merchant_id)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${USER_COLUMNS}`,
      [row.id, row.email, row.password_hash, row.role, row.reseller_id, row.merchant_id],
    );
    return rows[0]!;
  }

  async user(id: string): Promise<UserRecord | undefined> {
    const { rows } = await this.db.query<UserRecord>(`SELECT ${USER_COLUMNS} FROM users WHERE id = $1`, [id]);
    return rows[0];
  }

  listUsers(where: string, params: unknown[], limit: number, offset: number) {
    return pageOf<UserRecord>(this.db, 'users u', where, params, 'u.created_at, u.id', limit, offset, USER_COLUMNS.split(', ').map((c) => `u.${c}`).join(', '));
  }

  async updateUser(id: string, change: { email: string; role: RoleName; reseller_id: string | null; merchant_id: string | null }): Promise<UserRecord | undefined> {
    const { rows } = await this.db.query<UserRecord>(
      `UPDATE users SET email = $2, role = $3, reseller_id = $4, merchant_id = $5, updated_at = now() WHERE id = $1 RETURNING ${USER_COLUMNS}`,
      [id, change.email, change.role, change.reseller_id, change.merchant_id],
    );
    return rows[0];
  }

  /** A new password; the sessions opened before it end (to the second, as a token's issue time is kept). */
  async setPassword(id: string, passwordHash: string): Promise<UserRecord | undefined> {
    const { rows } = await this.db.query<UserRecord>(
      `UPDATE users SET password_hash = $2, sessions_since = date_trunc('second', now()), updated_at = now() WHERE id = $1 RETURNING ${USER_COLUMNS}`,
      [id, passwordHash],
    );
    return rows[0];
  }

  async deleteUser(id: string): Promise<boolean> {
    const { rowCount } = await this.db.query('DELETE FROM users WHERE id = $1', [id]);
    return rowCount > 0;
  }

  async adminCount(): Promise<number> {
    const { rows } = await this.db.query<{ n: number }>("SELECT count(*)::int AS n FROM users WHERE role = 'admin'");
    return rows[0]!.n;
  }
}

import type { Queryable } from '../db/index.js';
import type { RoleName } from './principal.js';

export interface UserRow {
  id: string;
  email: string;
  password_hash: string;
  role: RoleName;
  reseller_id: string | null;
  merchant_id: string | null;
}

export interface TokenRow {
  id: string;
  token_hint: string;
  name: string;
  role: Exclude<RoleName, 'admin'>;
  reseller_id: string;
  merchant_id: string | null;
  created_by: string | null;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

const TOKEN_COLUMNS = 'id, token_hint, name, role, reseller_id, merchant_id, created_by, created_at, last_used_at, revoked_at';

export class AuthRepository {
  constructor(private readonly db: Queryable) {}

  async userByEmail(email: string): Promise<UserRow | undefined> {
    const { rows } = await this.db.query<UserRow>(
      'SELECT id, email, password_hash, role, reseller_id, merchant_id FROM users WHERE lower(email) = lower($1)',
      [email],
    );
    return rows[0];
  }

  /** Users by ID, for many requests at once (see AuthService.authenticate). */
  async usersByIds(ids: string[]): Promise<UserRow[]> {
    const { rows } = await this.db.query<UserRow>(
      `SELECT id, email, password_hash, role, reseller_id, merchant_id FROM users
       WHERE id IN (SELECT jsonb_array_elements_text($1::jsonb))`,
      [JSON.stringify(ids)],
      { prepare: true },
    );
    return rows;
  }

  /** Unrevoked s2s tokens by the hash of their secret, for many requests at once. */
  async liveTokensByHashes(hashes: string[]): Promise<(TokenRow & { token_hash: string })[]> {
    const { rows } = await this.db.query<TokenRow & { token_hash: string }>(
      `SELECT ${TOKEN_COLUMNS}, token_hash FROM s2s_tokens
       WHERE token_hash IN (SELECT jsonb_array_elements_text($1::jsonb)) AND revoked_at IS NULL`,
      [JSON.stringify(hashes)],
      { prepare: true },
    );
    return rows;
  }

  async touchToken(id: string): Promise<void> {
    // At most one write a minute per token: the audit trail wants a date, not every request.
    await this.db.query(
      "UPDATE s2s_tokens SET last_used_at = now() WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')",
      [id],
    );
  }

  async insertToken(row: Omit<TokenRow, 'created_at' | 'last_used_at' | 'revoked_at'> & { token_hash: string }): Promise<TokenRow> {
    const { rows } = await this.db.query<TokenRow>(
      `INSERT INTO s2s_tokens (id, token_hash, token_hint, name, role, reseller_id, merchant_id, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${TOKEN_COLUMNS}`,
      [row.id, row.token_hash, row.token_hint, row.name, row.role, row.reseller_id, row.merchant_id, row.created_by],
    );
    return rows[0]!;
  }

  async listTokens(where: string, params: unknown[], limit: number, offset: number): Promise<{ rows: TokenRow[]; total: number }> {
    const total = await this.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM s2s_tokens t WHERE ${where}`, params);
    const { rows } = await this.db.query<TokenRow>(
      `SELECT ${TOKEN_COLUMNS} FROM s2s_tokens t WHERE ${where} ORDER BY created_at DESC, id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, limit, offset],
    );
    return { rows, total: total.rows[0]!.n };
  }

  async tokenById(id: string): Promise<TokenRow | undefined> {
    const { rows } = await this.db.query<TokenRow>(`SELECT ${TOKEN_COLUMNS} FROM s2s_tokens WHERE id = $1`, [id]);
    return rows[0];
  }

  async revokeToken(id: string): Promise<TokenRow | undefined> {
    const { rows } = await this.db.query<TokenRow>(
      `UPDATE s2s_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 RETURNING ${TOKEN_COLUMNS}`,
      [id],
    );
    return rows[0];
  }

  async resellerExists(id: string): Promise<boolean> {
    const { rows } = await this.db.query('SELECT 1 FROM resellers WHERE id = $1', [id]);
    return rows.length > 0;
  }

  async merchantReseller(id: string): Promise<string | undefined> {
    const { rows } = await this.db.query<{ reseller_id: string }>('SELECT reseller_id FROM merchants WHERE id = $1', [id]);
    return rows[0]?.reseller_id;
  }
}

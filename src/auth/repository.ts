import type { Queryable } from '../db/index.js';
import type { RoleName } from './principal.js';
import { merchantReseller, resellerExists } from './scope.js';

export interface UserRow {
  id: string;
  email: string;
  password_hash: string;
  role: RoleName;
  reseller_id: string | null;
  merchant_id: string | null;
  /** Access tokens issued before it are refused (a password reset sets it). */
  sessions_since?: Date | null;
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

  /** Whether a token's owners exist (scope.ts holds the lookups). */
  resellerExists(id: string): Promise<boolean> {
    return resellerExists(this.db, id);
  }

  merchantReseller(id: string): Promise<string | undefined> {
    return merchantReseller(this.db, id);
  }

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
      `SELECT id, email, password_hash, role, reseller_id, merchant_id, sessions_since FROM users
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


  /**
   * Counts a login attempt as a failure for each key, up front (a success undoes it), unless a key
   * is blocked: keys reaching their allowance are blocked for `baseSeconds * 2^(failures - allowed)`
   * (at most `maxSeconds`). Row locks serialise concurrent attempts, so parallel guesses cannot all
   * slip in before the count. Returns the keys charged; a key missing from the answer is blocked.
   */
  async chargeLoginAttempt(keys: { key: string; allowed: number }[], backoff: { baseSeconds: number; maxSeconds: number; forgetSeconds: number }): Promise<string[]> {
    const { rows } = await this.db.query<{ key: string }>(
      `WITH k AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS k(key text, allowed int))
       INSERT INTO login_failures AS f (key, failures, last_failure_at, blocked_until)
       SELECT key, 1, now(), CASE WHEN allowed <= 1 THEN now() + make_interval(secs => $2) END FROM k
       ON CONFLICT (key) DO UPDATE SET
         failures = CASE WHEN f.last_failure_at < now() - make_interval(secs => $4) THEN 1 ELSE f.failures + 1 END,
         last_failure_at = now(),
         blocked_until = (
           SELECT CASE WHEN n >= k.allowed THEN now() + make_interval(secs => least($3::float8, $2::float8 * power(2, n - k.allowed))) END
           FROM (SELECT CASE WHEN f.last_failure_at < now() - make_interval(secs => $4) THEN 1 ELSE f.failures + 1 END AS n) c, k
           WHERE k.key = f.key
         )
       WHERE f.blocked_until IS NULL OR f.blocked_until <= now()
       RETURNING key`,
      [JSON.stringify(keys), backoff.baseSeconds, backoff.maxSeconds, backoff.forgetSeconds],
    );
    return rows.map((r) => r.key);
  }

  /** Seconds until the last of these keys is unblocked (0: none is). */
  async loginBlockedSeconds(keys: string[]): Promise<number> {
    const { rows } = await this.db.query<{ seconds: number | null }>(
      `SELECT ceil(extract(epoch FROM max(blocked_until) - now()))::int AS seconds
       FROM login_failures WHERE key IN (SELECT jsonb_array_elements_text($1::jsonb)) AND blocked_until > now()`,
      [JSON.stringify(keys)],
    );
    return Math.max(0, rows[0]?.seconds ?? 0);
  }

  /** A login succeeded: the account starts afresh, and the address's charge for this attempt is undone. */
  async loginSucceeded(accountKey: string, addressKey: string, addressAllowed: number): Promise<void> {
    await this.db.query(
      `WITH gone AS (DELETE FROM login_failures WHERE key = $1)
       UPDATE login_failures SET failures = greatest(failures - 1, 0),
         blocked_until = CASE WHEN failures - 1 < $3 THEN NULL ELSE blocked_until END
       WHERE key = $2`,
      [accountKey, addressKey, addressAllowed],
    );
  }

  /** Forgets failures older than the forgetting time. */
  async pruneLoginFailures(forgetSeconds: number): Promise<number> {
    const { rows } = await this.db.query<{ n: number }>(
      `WITH gone AS (DELETE FROM login_failures WHERE last_failure_at < now() - make_interval(secs => $1)
         AND (blocked_until IS NULL OR blocked_until < now()) RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [forgetSeconds],
    );
    return rows[0]?.n ?? 0;
  }
}

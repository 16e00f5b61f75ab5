import type { Queryable } from '../db/index.js';

/** A key's first answer, as it was sent. */
export interface StoredAnswer {
  status: number;
  type: string;
  body: string;
}

export type ClaimResult =
  | { kind: 'claimed' }
  | { kind: 'answered'; fingerprint: string; answer: StoredAnswer }
  | { kind: 'under_way'; fingerprint: string };

/** The rows of idempotency_keys (migration 041). */
export class IdempotencyRepository {
  constructor(private readonly db: Queryable) {}

  /**
   * Claims `key` for a request with `token`: a new key, one whose 24 hours are over (it starts
   * afresh), or one whose claim was left unanswered for `abandonedSeconds` with the same body (its
   * request died; nothing it did was written, since writing answers the key). Otherwise says what
   * the key holds. Undefined when the row vanished between the two statements (a release): try again.
   */
  async claim(scope: string, key: string, fingerprint: string, token: string, ttlSeconds: number, abandonedSeconds: number): Promise<ClaimResult | undefined> {
    const { rows } = await this.db.query<{ claim_token: string }>(
      `INSERT INTO idempotency_keys AS k (scope, key, fingerprint, claim_token) VALUES ($1, $2, $3, $4)
       ON CONFLICT (scope, key) DO UPDATE
         SET claim_token = EXCLUDED.claim_token, claimed_at = now(), fingerprint = EXCLUDED.fingerprint,
             created_at = CASE WHEN k.created_at <= now() - $5 * interval '1 second' THEN now() ELSE k.created_at END,
             response_status = NULL, response_type = NULL, response_body = NULL
         WHERE k.created_at <= now() - $5 * interval '1 second'
            OR (k.response_status IS NULL AND k.fingerprint = EXCLUDED.fingerprint AND k.claimed_at <= now() - $6 * interval '1 second')
       RETURNING claim_token`,
      [scope, key, fingerprint, token, ttlSeconds, abandonedSeconds],
      { prepare: true },
    );
    if (rows[0]?.claim_token === token) return { kind: 'claimed' };
    const held = await this.db.query<{ fingerprint: string; response_status: number | null; response_type: string | null; response_body: string | null }>(
      'SELECT fingerprint, response_status, response_type, response_body FROM idempotency_keys WHERE scope = $1 AND key = $2',
      [scope, key],
      { prepare: true },
    );
    const row = held.rows[0];
    if (!row) return undefined;
    if (row.response_status === null) return { kind: 'under_way', fingerprint: row.fingerprint };
    return { kind: 'answered', fingerprint: row.fingerprint, answer: { status: row.response_status, type: row.response_type ?? 'application/json', body: row.response_body ?? '' } };
  }

  /**
   * Records the answer of the claim `token` holds (on `q`: the transaction that queues the leads);
   * false when the claim is no longer its own, or already answered.
   */
  async answer(scope: string, key: string, token: string, answer: StoredAnswer, q: Queryable = this.db): Promise<boolean> {
    const { rowCount } = await q.query(
      `UPDATE idempotency_keys SET response_status = $4, response_type = $5, response_body = $6
       WHERE scope = $1 AND key = $2 AND claim_token = $3 AND response_status IS NULL`,
      [scope, key, token, answer.status, answer.type, answer.body],
      { prepare: true },
    );
    return rowCount > 0;
  }

  /** Gives up an unanswered claim (its request failed with nothing written). */
  async release(scope: string, key: string, token: string): Promise<void> {
    await this.db.query('DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND claim_token = $3 AND response_status IS NULL', [scope, key, token]);
  }

  /** Deletes the keys first used more than `ttlSeconds` ago; returns how many. */
  async prune(ttlSeconds: number): Promise<number> {
    const { rowCount } = await this.db.query(`DELETE FROM idempotency_keys WHERE created_at <= now() - $1 * interval '1 second'`, [ttlSeconds]);
    return rowCount;
  }
}

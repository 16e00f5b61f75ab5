import type { Queryable } from '../db/index.js';

/** One audit entry as written (audit.ts decides what goes in it). */
export interface AuditEntry {
  principal_kind: 'user' | 's2s' | null;
  principal_id: string | null;
  principal_name: string | null;
  role: string | null;
  reseller_id: string | null;
  merchant_id: string | null;
  action: string;
  method: string;
  route: string;
  resource: string | null;
  resource_id: string | null;
  status: number;
  client_ip: string | null;
  request_id: string | null;
  details: Record<string, unknown> | null;
}

export interface AuditRow extends AuditEntry {
  id: string;
  at: Date;
}

const COLUMNS = [
  'principal_kind', 'principal_id', 'principal_name', 'role', 'reseller_id', 'merchant_id', 'action', 'method',
  'route', 'resource', 'resource_id', 'status', 'client_ip', 'request_id', 'details',
] as const;

export class AuditRepository {
  constructor(private readonly db: Queryable) {}

  /** Writes entries in one statement (many requests finishing together share it). */
  async insert(entries: AuditEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await this.db.query(
      `INSERT INTO audit_log (${COLUMNS.join(', ')})
       SELECT ${COLUMNS.join(', ')} FROM jsonb_to_recordset($1::jsonb) AS e(
         principal_kind text, principal_id text, principal_name text, role text, reseller_id text, merchant_id text, action text,
         method text, route text, resource text, resource_id text, status int, client_ip text, request_id text, details jsonb)`,
      [JSON.stringify(entries)],
      // Every write request adds to it: parsed and planned once per connection.
      { prepare: true },
    );
  }

  async list(where: string, params: unknown[], limit: number, offset: number): Promise<{ rows: AuditRow[]; total: number }> {
    const [rows, total] = await Promise.all([
      this.db.query<AuditRow>(
        `SELECT id::text AS id, at, ${COLUMNS.join(', ')} FROM audit_log a WHERE ${where} ORDER BY at DESC, id DESC LIMIT ${Number(limit)} OFFSET ${Number(offset)}`,
        params,
      ),
      this.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM audit_log a WHERE ${where}`, params),
    ]);
    return { rows: rows.rows, total: total.rows[0]?.n ?? 0 };
  }

  /** Deletes entries older than the retention; returns how many. */
  async prune(retentionDays: number): Promise<number> {
    const { rows } = await this.db.query<{ n: number }>(
      `WITH gone AS (DELETE FROM audit_log WHERE at < now() - make_interval(days => $1) RETURNING 1) SELECT count(*)::int AS n FROM gone`,
      [retentionDays],
    );
    return rows[0]?.n ?? 0;
  }
}

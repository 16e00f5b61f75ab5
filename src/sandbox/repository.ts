/**
 * What the sandbox line needs in the database: its caller IDs in the number pool, and per reseller
 * a template and a configuration that dial on it. Everything is made once and left for the
 * person to look at and change; nothing here touches a lead (the leads feature pushes them).
 */
import type { Queryable } from '../db/index.js';
import { newId } from '../lib/ids.js';

export const SANDBOX_RESELLER_NAME = 'Sandbox';
export const SANDBOX_TEMPLATE_NAME = 'Sandbox greeting';
/** Numbers the sandbox put in the pool carry this channel, so they can be told from real ones. */
export const SANDBOX_CHANNEL = 'sandbox';

export class SandboxRepository {
  constructor(private readonly db: Queryable) {}

  /**
   * The line's caller IDs: available for the providers it serves; disabled for those that now have
   * real credentials (a real call must never go out with a made-up caller ID). A number in a call
   * keeps its state until the call ends.
   */
  async syncNumbers(served: ReadonlyMap<string, string>, allProviders: readonly string[]): Promise<void> {
    const rows = [...served].map(([provider, phone_number]) => ({ id: newId(), provider, phone_number }));
    await this.db.query(
      `INSERT INTO outbound_numbers (id, phone_number, provider, status, channel)
       SELECT x.id, x.phone_number, x.provider, 'AVAILABLE', '${SANDBOX_CHANNEL}' FROM jsonb_to_recordset($1::jsonb) AS x (id text, provider text, phone_number text)
       ON CONFLICT (phone_number) DO UPDATE SET status = 'AVAILABLE', updated_at = now()
         WHERE outbound_numbers.channel = '${SANDBOX_CHANNEL}' AND outbound_numbers.status = 'DISABLED'`,
      [JSON.stringify(rows)],
    );
    const real = allProviders.filter((p) => !served.has(p));
    await this.db.query(
      `UPDATE outbound_numbers SET status = 'DISABLED', updated_at = now()
       WHERE channel = '${SANDBOX_CHANNEL}' AND status = 'AVAILABLE' AND provider = ANY($1::text[])`,
      [real],
    );
  }

  /** The reseller an admin's sandbox calls belong to (an admin has none of its own). */
  async sandboxReseller(): Promise<string> {
    await this.db.query(`INSERT INTO resellers (id, name) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [newId(), SANDBOX_RESELLER_NAME]);
    const { rows } = await this.db.query<{ id: string }>(`SELECT id FROM resellers WHERE lower(name) = lower($1)`, [SANDBOX_RESELLER_NAME]);
    return rows[0]!.id;
  }

  /** The reseller's sandbox template, made with `flow` the first time; its id. */
  async template(resellerId: string, flow: unknown): Promise<{ id: string; name: string }> {
    await this.db.query(
      `INSERT INTO templates (id, name, reseller_id, merchant_id, flow) VALUES ($1, $2, $3, NULL, $4::jsonb) ON CONFLICT (reseller_id, name) DO NOTHING`,
      [newId(), SANDBOX_TEMPLATE_NAME, resellerId, JSON.stringify(flow)],
    );
    const { rows } = await this.db.query<{ id: string; name: string }>(`SELECT id, name FROM templates WHERE reseller_id = $1 AND name = $2`, [resellerId, SANDBOX_TEMPLATE_NAME]);
    return rows[0]!;
  }

  /** The reseller's sandbox template, if it was made. */
  async findTemplate(resellerId: string): Promise<{ id: string; name: string } | undefined> {
    const { rows } = await this.db.query<{ id: string; name: string }>(`SELECT id, name FROM templates WHERE reseller_id = $1 AND name = $2`, [resellerId, SANDBOX_TEMPLATE_NAME]);
    return rows[0];
  }

  /** A configuration for (reseller, template) dialling on `provider` all day with no retries, unless one exists. */
  async configuration(resellerId: string, templateId: string, provider: string): Promise<void> {
    await this.db.query(
      `INSERT INTO configurations (id, reseller_id, template_id, merchant_id, calling_provider, call_start_time, call_end_time, max_retry, initial_offset)
       VALUES ($1, $2, $3, NULL, $4, '00:00', '00:00', 0, 0)
       ON CONFLICT (reseller_id, template_id) DO NOTHING`,
      [newId(), resellerId, templateId, provider],
    );
  }

  /** The template (visible in `scope`, over alias t) and the provider its configuration dials on. */
  async templateAndProvider(templateId: string, scope: string, params: unknown[]): Promise<{ id: string; name: string; reseller_id: string; merchant_id: string | null; provider: string | null } | undefined> {
    const { rows } = await this.db.query<{ id: string; name: string; reseller_id: string; merchant_id: string | null; provider: string | null }>(
      `SELECT t.id, t.name, t.reseller_id, t.merchant_id, c.calling_provider AS provider
       FROM templates t LEFT JOIN configurations c ON c.reseller_id = t.reseller_id AND c.template_id = t.id
       WHERE t.id = $${params.length + 1} AND ${scope}`,
      [...params, templateId],
    );
    return rows[0];
  }
}

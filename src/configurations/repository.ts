import type { Queryable } from '../db/index.js';
import { blacklistedSql } from '../blacklist/index.js';
import type { TemplateRef } from '../templates/index.js';
import { WRITTEN_COLUMNS, type ConfigurationWrite } from './schema.js';

export type { ConfigurationWrite } from './schema.js';

/** A row of `configurations`: the stored fields (from the API's schema) with the id and times. */
export interface ConfigurationRow extends ConfigurationWrite {
  id: string;
  created_at: Date;
  updated_at: Date;
}

/** A row of `pushTargets`: `flow` and `configuration` are set on the first row of each template only. */
export interface PushTargetRow extends Omit<TemplateRef, 'flow'> {
  i: number;
  blacklisted: boolean;
  first: boolean;
  flow: TemplateRef['flow'] | null;
  configuration: ConfigurationRow | null;
}

/** The written columns, in one order for INSERT and UPDATE. jsonb columns are passed as JSON text. */
const COLUMNS = WRITTEN_COLUMNS;
const JSONB = new Set<string>(['rate_limit_whitelist', 'pre_checks', 'retry_policy', 'dnc_lists', 'legal_hours', 'disclosure']);

const values = (row: ConfigurationWrite) => COLUMNS.map((c) => (JSONB.has(c) && row[c] !== null ? JSON.stringify(row[c]) : row[c]));
const placeholder = (c: string, i: number) => `$${i}${JSONB.has(c) ? '::jsonb' : ''}`;

/** What answering an inbound call needs of a configuration (and its template). */
export type InboundSettings = Pick<
  ConfigurationRow,
  | 'reseller_id' | 'merchant_id' | 'template_id' | 'enable_inbound' | 'inbound_call_start_time' | 'inbound_call_end_time'
  | 'inbound_call_timezone' | 'inbound_block_action' | 'inbound_redirect_number' | 'inbound_block_message'
> & { template_name: string };

const INBOUND_COLUMNS = `c.reseller_id, t.merchant_id, c.template_id, t.name AS template_name, c.enable_inbound, c.inbound_call_start_time,
  c.inbound_call_end_time, c.inbound_call_timezone, c.inbound_block_action, c.inbound_redirect_number, c.inbound_block_message`;

export class ConfigurationsRepository {
  constructor(private readonly db: Queryable) {}

  async insert(id: string, row: ConfigurationWrite): Promise<ConfigurationRow> {
    const { rows } = await this.db.query<ConfigurationRow>(
      `INSERT INTO configurations (id, ${COLUMNS.join(', ')})
       VALUES ($1, ${COLUMNS.map((c, i) => placeholder(c, i + 2)).join(', ')}) RETURNING *`,
      [id, ...values(row)],
    );
    return rows[0]!;
  }

  async update(id: string, row: ConfigurationWrite): Promise<ConfigurationRow | undefined> {
    const { rows } = await this.db.query<ConfigurationRow>(
      `UPDATE configurations SET ${COLUMNS.map((c, i) => `${c} = ${placeholder(c, i + 2)}`).join(', ')}, updated_at = now()
       WHERE id = $1 RETURNING *`,
      [id, ...values(row)],
    );
    return rows[0];
  }

  async byId(id: string): Promise<ConfigurationRow | undefined> {
    const { rows } = await this.db.query<ConfigurationRow>('SELECT * FROM configurations WHERE id = $1', [id]);
    return rows[0];
  }

  /** Whether it calls and for which template, locked until the caller's transaction ends (an update decides on it). */
  async callingForUpdate(id: string): Promise<{ enable_calling: boolean; template_id: string } | undefined> {
    const { rows } = await this.db.query<{ enable_calling: boolean; template_id: string }>(
      'SELECT enable_calling, template_id FROM configurations WHERE id = $1 FOR UPDATE',
      [id],
    );
    return rows[0];
  }

  async byResellerTemplate(resellerId: string, templateId: string): Promise<ConfigurationRow | undefined> {
    const { rows } = await this.db.query<ConfigurationRow>(
      'SELECT * FROM configurations WHERE reseller_id = $1 AND template_id = $2',
      [resellerId, templateId],
    );
    return rows[0];
  }

  /**
   * Per key (its index `i`): the template by name within the reseller, and whether the phone is on
   * the reseller's or the platform blacklist. A template's flow and its configuration come once, on
   * the first key naming it (`first`); the other keys of the same template carry only its id. Keys
   * naming no template have no row.
   */
  async pushTargets(keys: readonly { resellerId: string; templateName: string; phone: string | undefined }[]) {
    const { rows } = await this.db.query<PushTargetRow>(
      `SELECT k.i, t.id, t.name, t.reseller_id, t.merchant_id,
              k.phone IS NOT NULL AND ${blacklistedSql('k.phone', 'k.reseller_id')} AS blacklisted,
              row_number() OVER per_template = 1 AS first,
              CASE WHEN row_number() OVER per_template = 1 THEN t.flow END AS flow,
              CASE WHEN row_number() OVER per_template = 1 THEN to_jsonb(c) END AS configuration
       FROM jsonb_to_recordset($1::jsonb) AS k (i integer, reseller_id text, name text, phone text)
       JOIN templates t ON t.reseller_id = k.reseller_id AND t.name = k.name
       LEFT JOIN configurations c ON c.reseller_id = t.reseller_id AND c.template_id = t.id
       WINDOW per_template AS (PARTITION BY t.id ORDER BY k.i)`,
      [JSON.stringify(keys.map((k, i) => ({ i, reseller_id: k.resellerId, name: k.templateName, phone: k.phone ?? null })))],
      { prepare: true },
    );
    return rows;
  }

  /** The id of our number `phone` (one of the outbound pool; of `provider` when given), if it is ours. */
  async numberIdByPhone(phone: string, provider?: string): Promise<string | undefined> {
    const { rows } = await this.db.query<{ id: string }>('SELECT id FROM outbound_numbers WHERE phone_number = $1 AND ($2::text IS NULL OR provider = $2)', [phone, provider ?? null]);
    return rows[0]?.id;
  }

  /** The inbound settings of the configuration of the last lead called from number `numberId` at `caller` (a call back; of `resellerId` when given). */
  async inboundOfCallBack(numberId: string, caller: string, resellerId?: string): Promise<InboundSettings | undefined> {
    const { rows } = await this.db.query<InboundSettings>(
      `SELECT ${INBOUND_COLUMNS}
         FROM leads l JOIN configurations c ON c.reseller_id = l.reseller_id AND c.template_id = l.template_id
         JOIN templates t ON t.id = c.template_id
        WHERE l.outbound_number_id = $1 AND l.payload->>'customer_mobile_number' = $2 AND ($3::text IS NULL OR c.reseller_id = $3)
        ORDER BY l.created_at DESC LIMIT 1`,
      [numberId, caller, resellerId ?? null],
    );
    return rows[0];
  }

  /** The inbound settings of the most recently changed configuration with `enable_inbound` (of `resellerId` when given). */
  async latestInbound(resellerId?: string): Promise<InboundSettings | undefined> {
    const { rows } = await this.db.query<InboundSettings>(
      `SELECT ${INBOUND_COLUMNS} FROM configurations c JOIN templates t ON t.id = c.template_id
        WHERE c.enable_inbound AND ($1::text IS NULL OR c.reseller_id = $1) ORDER BY c.updated_at DESC LIMIT 1`,
      [resellerId ?? null],
    );
    return rows[0];
  }

  /** `where` is built by the service from scope and filters, over alias `c`. */
  async list(where: string, params: unknown[], limit: number, offset: number): Promise<{ rows: ConfigurationRow[]; total: number }> {
    const total = await this.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM configurations c WHERE ${where}`, params);
    const { rows } = await this.db.query<ConfigurationRow>(
      `SELECT c.* FROM configurations c WHERE ${where} ORDER BY c.created_at, c.id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, limit, offset],
    );
    return { rows, total: total.rows[0]!.n };
  }

  async delete(id: string): Promise<boolean> {
    const { rowCount } = await this.db.query('DELETE FROM configurations WHERE id = $1', [id]);
    return rowCount > 0;
  }
}

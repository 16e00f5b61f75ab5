import type { Queryable } from '../db/index.js';
import type { Flow } from '../voice/flow/index.js';
import type { AgentChoice } from '../voice/index.js';

export interface TemplateRow {
  id: string;
  name: string;
  reseller_id: string;
  /** NULL for a reseller-level template, visible to every merchant of the reseller. */
  merchant_id: string | null;
  flow: Flow;
  /** The voice, model, temperature and language its calls use; NULL: the service defaults. */
  agent: AgentChoice | null;
  created_at: Date;
  updated_at: Date;
}

export interface TemplateWrite {
  name: string;
  merchant_id: string | null;
  flow: unknown;
  agent: AgentChoice | null;
}

/** Which other rows refer to a template; deletion is refused while either is true. */
export interface TemplateReferences {
  leads: boolean;
  configurations: boolean;
}

/** An empty choice is stored as none: both mean the service defaults. */
const agentJson = (agent: AgentChoice | null): string | null => (agent && Object.keys(agent).length > 0 ? JSON.stringify(agent) : null);

export class TemplatesRepository {
  constructor(private readonly db: Queryable) {}

  async insert(row: TemplateWrite & { id: string; reseller_id: string }): Promise<TemplateRow> {
    const { rows } = await this.db.query<TemplateRow>(
      `INSERT INTO templates (id, name, reseller_id, merchant_id, flow, agent)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb) RETURNING *`,
      [row.id, row.name, row.reseller_id, row.merchant_id, JSON.stringify(row.flow), agentJson(row.agent)],
    );
    return rows[0]!;
  }

  async byId(id: string): Promise<TemplateRow | undefined> {
    const { rows } = await this.db.query<TemplateRow>('SELECT * FROM templates WHERE id = $1', [id]);
    return rows[0];
  }

  /** The row, locked until the transaction ends (deletion: no lead may take a reference meanwhile). */
  async byIdForUpdate(id: string): Promise<TemplateRow | undefined> {
    const { rows } = await this.db.query<TemplateRow>('SELECT * FROM templates WHERE id = $1 FOR UPDATE', [id]);
    return rows[0];
  }

  async byName(resellerId: string, name: string): Promise<TemplateRow | undefined> {
    const { rows } = await this.db.query<TemplateRow>('SELECT * FROM templates WHERE reseller_id = $1 AND name = $2', [resellerId, name]);
    return rows[0];
  }

  /** `where` is built by the service from scope and filters, over alias `t`. */
  async list(where: string, params: unknown[], limit: number, offset: number): Promise<{ rows: TemplateRow[]; total: number }> {
    const total = await this.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM templates t WHERE ${where}`, params);
    const { rows } = await this.db.query<TemplateRow>(
      `SELECT t.* FROM templates t WHERE ${where} ORDER BY t.created_at, t.id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, limit, offset],
    );
    return { rows, total: total.rows[0]!.n };
  }

  async update(id: string, row: TemplateWrite): Promise<TemplateRow | undefined> {
    const { rows } = await this.db.query<TemplateRow>(
      `UPDATE templates SET name = $2, merchant_id = $3, flow = $4::jsonb, agent = $5::jsonb, updated_at = now()
       WHERE id = $1 RETURNING *`,
      [id, row.name, row.merchant_id, JSON.stringify(row.flow), agentJson(row.agent)],
    );
    return rows[0];
  }

  async references(id: string): Promise<TemplateReferences> {
    const { rows } = await this.db.query<TemplateReferences>(
      `SELECT EXISTS (SELECT 1 FROM leads WHERE template_id = $1 LIMIT 1) AS leads,
              EXISTS (SELECT 1 FROM configurations WHERE template_id = $1 LIMIT 1) AS configurations`,
      [id],
    );
    return rows[0]!;
  }

  async delete(id: string): Promise<boolean> {
    const { rowCount } = await this.db.query('DELETE FROM templates WHERE id = $1', [id]);
    return rowCount > 0;
  }
}

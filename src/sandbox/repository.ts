/**
 * What the sandbox reads: the template a call asks for and the provider it dials on. What it makes
 * (its reseller, template, configuration and caller IDs) it makes through those features' services.
 */
import type { Queryable } from '../db/index.js';

export const SANDBOX_RESELLER_NAME = 'Sandbox';
export const SANDBOX_TEMPLATE_NAME = 'Sandbox greeting';
/** Numbers the sandbox put in the pool carry this channel, so they can be told from real ones. */
export const SANDBOX_CHANNEL = 'sandbox';

export interface SandboxTemplate {
  id: string;
  name: string;
  reseller_id: string;
  merchant_id: string | null;
  provider: string | null;
}

export class SandboxRepository {
  constructor(private readonly db: Queryable) {}

  /** The template (visible in `scope`, over alias t) and the provider its configuration dials on. */
  async templateAndProvider(templateId: string, scope: string, params: unknown[]): Promise<SandboxTemplate | undefined> {
    const { rows } = await this.db.query<SandboxTemplate>(
      `SELECT t.id, t.name, t.reseller_id, t.merchant_id, c.calling_provider AS provider
       FROM templates t LEFT JOIN configurations c ON c.reseller_id = t.reseller_id AND c.template_id = t.id
       WHERE t.id = $${params.length + 1} AND ${scope}`,
      [...params, templateId],
    );
    return rows[0];
  }
}

/**
 * What the sandbox reads: the template a call asks for and the provider it dials on. What it makes
 * (its reseller, template, configuration and caller IDs) it makes through those features' services.
 */
import type { Queryable } from '../db/index.js';

export const SANDBOX_RESELLER_NAME = 'Sandbox';
export const SANDBOX_TEMPLATE_NAME = 'Sandbox greeting';
/** The sandbox template that calls over SIP, through the reseller's sandbox trunk. */
export const SANDBOX_SIP_TEMPLATE_NAME = 'Sandbox greeting (SIP)';
/** Numbers the sandbox put in the pool carry this channel, so they can be told from real ones. */
export const SANDBOX_CHANNEL = 'sandbox';

export interface SandboxTemplate {
  id: string;
  name: string;
  reseller_id: string;
  merchant_id: string | null;
  provider: string | null;
  /** Its configuration dials through the sandbox line's trunk (provider SIP). */
  sandbox_trunk: boolean;
}

export class SandboxRepository {
  constructor(private readonly db: Queryable) {}

  /** Whether the pool holds numbers of `provider` that are not the sandbox's (and not disabled). */
  async hasRealNumbers(provider: string): Promise<boolean> {
    const { rows } = await this.db.query<{ found: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM outbound_numbers WHERE provider = $1 AND channel <> $2 AND status <> 'DISABLED') AS found`,
      [provider, SANDBOX_CHANNEL],
    );
    return rows[0]!.found;
  }

  /** The template (visible in `scope`, over alias t) and the provider its configuration dials on. */
  async templateAndProvider(templateId: string, scope: string, params: unknown[]): Promise<SandboxTemplate | undefined> {
    const { rows } = await this.db.query<SandboxTemplate>(
      `SELECT t.id, t.name, t.reseller_id, t.merchant_id, c.calling_provider AS provider, coalesce(st.sandbox, false) AS sandbox_trunk
       FROM templates t LEFT JOIN configurations c ON c.reseller_id = t.reseller_id AND c.template_id = t.id
       LEFT JOIN sip_trunks st ON st.id = c.trunk_id
       WHERE t.id = $${params.length + 1} AND ${scope}`,
      [...params, templateId],
    );
    return rows[0];
  }
}

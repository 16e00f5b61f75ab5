import type { ConfigurationRow } from './repository.js';

/**
 * The configuration a lead is dialled with: its configuration, with a playground lead's
 * `configurations_override` merged over it (other leads' overrides are ignored). Any part of a
 * configuration row (the recovery of a dead worker's leads reads only its retry policy).
 */
export function effectiveConfiguration<C extends Partial<ConfigurationRow>>(
  configuration: C,
  lead: { is_playground: boolean; configurations_override: Record<string, unknown> | null },
): C {
  if (!lead.is_playground || !lead.configurations_override) return configuration;
  const { id: _i, reseller_id: _r, template_id: _t, merchant_id: _m, created_at: _c, updated_at: _u, ...override } = lead.configurations_override as Partial<ConfigurationRow>;
  return { ...configuration, ...override };
}

/** The provider a lead is dialled through, as SQL over leads `l` and configurations `c`. */
export const EFFECTIVE_PROVIDER_SQL = `CASE WHEN l.is_playground AND l.configurations_override ? 'calling_provider'
  THEN l.configurations_override->>'calling_provider' ELSE c.calling_provider END`;

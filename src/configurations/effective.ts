import type { ConfigurationRow } from './repository.js';

/**
 * Whether a lead may be called: its template has a configuration and that configuration calls, or
 * it is a playground lead (a try of the template, called whatever `enable_calling` says). A lead
 * that may not be called waits (held, not failed); `MAY_CALL_SQL` is the same rule in SQL.
 */
export function mayCall(configuration: Pick<ConfigurationRow, 'enable_calling'> | null | undefined, lead: { is_playground: boolean }): boolean {
  return configuration != null && (configuration.enable_calling || lead.is_playground);
}

/**
 * `mayCall` as SQL over leads `l` joined to their configurations `c` (the join stands for "has a
 * configuration": over a LEFT JOIN, test `c.id IS NULL` beside it). Kept to the letter: the claim
 * statements are prepared, and their text is what the database plans once.
 */
export const MAY_CALL_SQL = '(c.enable_calling OR l.is_playground)';

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

import type { Db, Queryable } from '../db/index.js';
import type { FieldError } from '../lib/errors.js';
import type { App } from '../http/index.js';
import { foreignLists } from './repository.js';
import { registerDncRoutes } from './routes.js';
import { DncService } from './service.js';

export { Consent, StoredConsent, CONSENT_CLOCK_SKEW_MS } from './schema.js';
export { findDncHits, type DncHit } from './repository.js';
export { consentProblem } from './consent.js';

/** The compliance feature's only door: the do-not-call lists' API, and what push, dial and configurations ask of it. */
export async function registerCompliance(app: App, db: Db): Promise<void> {
  await registerDncRoutes(app, new DncService(db));
}

/** A configuration's `dnc_lists` that are neither the reseller's nor platform-wide: field errors. */
export async function unknownDncLists(q: Queryable, resellerId: string, ids: readonly string[]): Promise<FieldError[]> {
  const foreign = new Set(await foreignLists(q, resellerId, ids));
  return ids.flatMap((id, i) => (foreign.has(id) ? [{ path: `/dnc_lists/${i}`, message: `${JSON.stringify(id)} is not a do-not-call list of reseller ${resellerId} or a platform-wide one` }] : []));
}

/**
 * The consent rule, written once: what push refuses. A configuration with `require_consent`
 * refuses a lead without consent; a consent captured in the future (beyond a little clock skew)
 * is refused whatever the configuration says.
 */
import type { FieldError } from '../lib/errors.js';
import { CONSENT_CLOCK_SKEW_MS, type Consent } from './schema.js';

export function consentProblem(consent: Consent | undefined, requireConsent: boolean, now: Date = new Date()): FieldError | undefined {
  if (consent === undefined) {
    return requireConsent ? { path: '/consent', message: 'is required: the configuration of this template has require_consent' } : undefined;
  }
  const captured = Date.parse(consent.captured_at);
  if (!Number.isFinite(captured)) return { path: '/consent/captured_at', message: 'must be an ISO 8601 date-time' };
  if (captured > now.getTime() + CONSENT_CLOCK_SKEW_MS) return { path: '/consent/captured_at', message: `${consent.captured_at} is in the future` };
  return undefined;
}

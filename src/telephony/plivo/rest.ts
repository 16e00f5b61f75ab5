/**
 * Plivo's REST API (v1): JSON bodies with HTTP basic auth (Auth ID and auth token), JSON answers;
 * errors come as `{ api_id, error }`.
 */
import { ProviderRest } from '../rest.js';

export interface PlivoCredentials {
  authId: string;
  authToken: string;
  /** https://api.plivo.com by default. */
  apiBaseUrl: string;
  /** How long Plivo may take to start answering, per try (default REST_TIMEOUT_MS). */
  timeoutMs?: number | undefined;
}

/** The REST API of one Plivo account: `{base}/v1/Account/{auth_id}/…`. */
export function plivoRest(credentials: PlivoCredentials): ProviderRest {
  return new ProviderRest({
    label: 'Plivo',
    baseUrl: credentials.apiBaseUrl || 'https://api.plivo.com',
    accountPath: `/v1/Account/${encodeURIComponent(credentials.authId)}`,
    username: credentials.authId,
    password: credentials.authToken,
    timeoutMs: credentials.timeoutMs,
    errorText(answer) {
      const error = answer.body?.error ?? answer.body?.message;
      return typeof error === 'string' ? error : error !== undefined ? JSON.stringify(error) : undefined;
    },
  });
}

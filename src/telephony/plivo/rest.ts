/**
 * Plivo's REST API (v1): JSON bodies with HTTP basic auth (Auth ID and auth token), JSON answers;
 * errors come as `{ api_id, error }`.
 */
import { ProviderRest, type RestSettings } from '../rest.js';

export interface PlivoCredentials extends RestSettings {
  authId: string;
  authToken: string;
}

/** The REST API of one Plivo account: `{base}/v1/Account/{auth_id}/…`. */
export function plivoRest(credentials: PlivoCredentials): ProviderRest {
  return new ProviderRest(credentials, {
    label: 'Plivo',
    defaultBaseUrl: 'https://api.plivo.com',
    accountPath: `/v1/Account/${encodeURIComponent(credentials.authId)}`,
    basicAuth: [credentials.authId, credentials.authToken],
    errorText: (answer) => {
      const error = answer.body?.error ?? answer.body?.message;
      return typeof error === 'string' ? error : error !== undefined ? JSON.stringify(error) : undefined;
    },
  });
}

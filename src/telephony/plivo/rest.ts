/**
 * Plivo's REST API (v1): JSON bodies with HTTP basic auth (Auth ID and auth token), JSON answers;
 * errors come as `{ api_id, error }`.
 */
import { ProviderError } from '../provider.js';

const TIMEOUT_MS = 10_000;

export interface PlivoCredentials {
  authId: string;
  authToken: string;
  /** https://api.plivo.com by default, no trailing slash. */
  apiBaseUrl: string;
}

export interface PlivoAnswer {
  status: number;
  ok: boolean;
  body: Record<string, unknown> | undefined;
  text: string;
}

/** `{base}/v1/Account/{auth_id}/{resource}` with `method`; network failures throw a retryable ProviderError. */
export async function plivoRequest(credentials: PlivoCredentials, method: 'POST' | 'DELETE', resource: string, json?: Record<string, unknown>): Promise<PlivoAnswer> {
  const url = `${credentials.apiBaseUrl}/v1/Account/${encodeURIComponent(credentials.authId)}/${resource}`;
  const auth = Buffer.from(`${credentials.authId}:${credentials.authToken}`).toString('base64');
  const headers: Record<string, string> = { authorization: `Basic ${auth}`, accept: 'application/json' };
  if (json !== undefined) headers['content-type'] = 'application/json';
  try {
    const response = await fetch(url, {
      method,
      headers,
      body: json === undefined ? undefined : JSON.stringify(json),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const text = await response.text();
    let body: Record<string, unknown> | undefined;
    try {
      const parsed: unknown = text ? JSON.parse(text) : undefined;
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
    } catch {
      body = undefined;
    }
    return { status: response.status, ok: response.ok, body, text };
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new ProviderError(`Plivo could not be reached (${method} ${resource}): ${reason}`, undefined, true, { cause: err });
  }
}

/** The ProviderError for a non-2xx answer, with Plivo's own error text. */
export function plivoFailure(action: string, answer: PlivoAnswer): ProviderError {
  const error = answer.body?.error ?? answer.body?.message;
  const message =
    typeof error === 'string' ? error : error !== undefined ? JSON.stringify(error) : answer.text.trim().slice(0, 300) || 'no details';
  const retryable = answer.status === 429 || answer.status >= 500;
  return new ProviderError(`Plivo ${action} failed with HTTP ${answer.status}: ${message}`, answer.status, retryable);
}

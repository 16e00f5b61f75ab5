/**
 * Twilio's REST API (2010-04-01): form-encoded requests with HTTP basic auth (Account SID and auth
 * token), JSON answers; errors come as `{ code, message, more_info, status }`.
 */
import { send } from '../../lib/http-client.js';
import { ProviderError } from '../provider.js';

const TIMEOUT_MS = 10_000;

export interface TwilioCredentials {
  accountSid: string;
  authToken: string;
  /** https://api.twilio.com by default, no trailing slash. */
  apiBaseUrl: string;
}

export interface TwilioAnswer {
  status: number;
  ok: boolean;
  body: Record<string, unknown> | undefined;
  text: string;
}

/** POSTs a form to `{base}/2010-04-01/Accounts/{sid}/{resource}`. Network failures throw a retryable ProviderError. */
export async function twilioPost(credentials: TwilioCredentials, resource: string, form: URLSearchParams): Promise<TwilioAnswer> {
  const base = credentials.apiBaseUrl.replace(/\/+$/, '');
  const url = `${base}/2010-04-01/Accounts/${encodeURIComponent(credentials.accountSid)}/${resource}`;
  const auth = Buffer.from(`${credentials.accountSid}:${credentials.authToken}`).toString('base64');
  try {
    const response = await send(url, {
      method: 'POST',
      headers: { authorization: `Basic ${auth}`, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form.toString(),
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
    throw new ProviderError(`Twilio could not be reached (POST ${resource}): ${reason}`, undefined, true, { cause: err });
  }
}

/** Twilio's error code (e.g. 21220), when the answer has one. */
export function twilioErrorCode(answer: TwilioAnswer): number | undefined {
  const code = answer.body?.code;
  return typeof code === 'number' ? code : typeof code === 'string' && /^\d+$/.test(code) ? Number(code) : undefined;
}

/** The ProviderError for a non-2xx answer, with Twilio's own message. */
export function twilioFailure(action: string, answer: TwilioAnswer): ProviderError {
  const message = typeof answer.body?.message === 'string' ? answer.body.message : answer.text.trim().slice(0, 300) || 'no details';
  const code = twilioErrorCode(answer);
  const retryable = answer.status === 429 || answer.status >= 500;
  return new ProviderError(`Twilio ${action} failed with HTTP ${answer.status}: ${message}${code !== undefined ? ` (error ${code})` : ''}`, answer.status, retryable);
}

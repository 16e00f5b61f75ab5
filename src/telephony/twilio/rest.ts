/**
 * Twilio's REST API (2010-04-01): form-encoded requests with HTTP basic auth (Account SID and auth
 * token), JSON answers; errors come as `{ code, message, more_info, status }`.
 */
import { ProviderRest, type RestAnswer } from '../rest.js';

export interface TwilioCredentials {
  accountSid: string;
  authToken: string;
  /** https://api.twilio.com by default. */
  apiBaseUrl: string;
  /** How long Twilio may take to start answering, per try (default REST_TIMEOUT_MS). */
  timeoutMs?: number | undefined;
}

/** The REST API of one Twilio account: `{base}/2010-04-01/Accounts/{sid}/…`. */
export function twilioRest(credentials: TwilioCredentials): ProviderRest {
  return new ProviderRest({
    label: 'Twilio',
    baseUrl: credentials.apiBaseUrl || 'https://api.twilio.com',
    accountPath: `/2010-04-01/Accounts/${encodeURIComponent(credentials.accountSid)}`,
    username: credentials.accountSid,
    password: credentials.authToken,
    timeoutMs: credentials.timeoutMs,
    errorText(answer) {
      if (typeof answer.body?.message !== 'string') return undefined;
      const code = twilioErrorCode(answer);
      return `${answer.body.message}${code !== undefined ? ` (error ${code})` : ''}`;
    },
  });
}

/** Twilio's error code (e.g. 21220), when the answer has one. */
export function twilioErrorCode(answer: RestAnswer): number | undefined {
  const code = answer.body?.code;
  return typeof code === 'number' ? code : typeof code === 'string' && /^\d+$/.test(code) ? Number(code) : undefined;
}

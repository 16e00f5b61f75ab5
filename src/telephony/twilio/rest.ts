/**
 * Twilio's REST API (2010-04-01): form-encoded requests with HTTP basic auth (Account SID and auth
 * token), JSON answers; errors come as `{ code, message, more_info, status }`.
 */
import { ProviderRest, type RestAnswer, type RestSettings } from '../rest.js';

export interface TwilioCredentials extends RestSettings {
  accountSid: string;
  authToken: string;
}

/** The REST API of one Twilio account: `{base}/2010-04-01/Accounts/{sid}/…`. */
export function twilioRest(credentials: TwilioCredentials): ProviderRest {
  return new ProviderRest(credentials, {
    label: 'Twilio',
    defaultBaseUrl: 'https://api.twilio.com',
    accountPath: `/2010-04-01/Accounts/${encodeURIComponent(credentials.accountSid)}`,
    basicAuth: [credentials.accountSid, credentials.authToken],
    errorText: (answer) => {
      const code = twilioErrorCode(answer);
      return typeof answer.body?.message === 'string' ? `${answer.body.message}${code !== undefined ? ` (error ${code})` : ''}` : undefined;
    },
  });
}

/** Twilio's error code (e.g. 21220), when the answer has one. */
export function twilioErrorCode(answer: RestAnswer): number | undefined {
  const code = answer.body?.code;
  return typeof code === 'number' ? code : typeof code === 'string' && /^\d+$/.test(code) ? Number(code) : undefined;
}

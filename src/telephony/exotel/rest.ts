/**
 * Exotel's REST API (Voice v1): placing a call with Calls/connect. Exotel has no request that ends
 * or moves a live v1 call (see index.ts).
 */
import type { Context } from '@opentelemetry/api';
import { ProviderError, type PlaceCallRequest } from '../provider.js';
import { ProviderRest, type RestSettings } from '../rest.js';

export interface ExotelRestOptions extends RestSettings {
  accountSid: string;
  apiKey: string;
  apiToken: string;
  flowUrl: string;
}

/** Exotel caps TimeLimit at 4 hours. */
const MAX_TIME_LIMIT_SECONDS = 14_400;

/** The REST API of one Exotel account: `{base}/v1/Accounts/{sid}/…`, basic auth api_key:api_token. */
export function exotelRest(options: ExotelRestOptions): ProviderRest {
  return new ProviderRest(options, {
    label: 'Exotel',
    defaultBaseUrl: 'https://api.exotel.com',
    accountPath: `/v1/Accounts/${encodeURIComponent(options.accountSid)}`,
    basicAuth: [options.apiKey, options.apiToken],
    // Exotel's error body: `{"RestException":{"Status","Message"}}`.
    errorText: (answer) => {
      const message = (answer.body?.RestException as { Message?: unknown } | undefined)?.Message;
      return typeof message === 'string' ? message : undefined;
    },
  });
}

export async function placeExotelCall(rest: ProviderRest, options: ExotelRestOptions, request: PlaceCallRequest, traceContext?: Context): Promise<{ callSid: string }> {
  const form = new URLSearchParams();
  form.set('From', request.to);
  form.set('CallerId', request.from);
  form.set('Url', options.flowUrl);
  form.set('CallType', 'trans');
  form.set('TimeLimit', String(Math.min(MAX_TIME_LIMIT_SECONDS, Math.max(1, Math.round(request.maxDurationSeconds)))));
  form.set('TimeOut', String(Math.max(1, Math.round(request.ringTimeoutSeconds))));
  form.set('CustomField', request.token);
  form.set('StatusCallback', request.statusUrl);
  form.append('StatusCallbackEvents[0]', 'terminal');
  form.append('StatusCallbackEvents[1]', 'answered');
  form.set('StatusCallbackContentType', 'application/json');
  // Exotel has no answering-machine detection on Calls/connect: request.machineDetection is
  // not sent (a machine that answers simply talks to the agent).
  // A call may have been placed even when its answer was lost: sent again only if it never left.
  const answer = await rest.expectOk({ method: 'POST', resource: 'Calls/connect.json', form, idempotent: false, action: 'call creation', traceContext });
  const sid = (answer.body?.Call as { Sid?: unknown } | undefined)?.Sid;
  if (typeof sid !== 'string' || sid === '') throw new ProviderError('Exotel answered without Call.Sid', answer.status, false);
  return { callSid: sid };
}

/**
 * Exotel's REST API (Voice v1): placing a call with Calls/connect. Exotel has no request that ends
 * or moves a live v1 call (see index.ts).
 */
import { ProviderError, type PlaceCallRequest } from '../provider.js';

export interface ExotelRestOptions {
  accountSid: string;
  apiKey: string;
  apiToken: string;
  apiBaseUrl: string;
  flowUrl: string;
}

/** Exotel caps TimeLimit at 4 hours. */
const MAX_TIME_LIMIT_SECONDS = 14_400;

/** The message of Exotel's error body (`{"RestException":{"Status","Message"}}`), or the raw text. */
function errorMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { RestException?: { Message?: unknown } };
    if (typeof body?.RestException?.Message === 'string') return body.RestException.Message;
  } catch {
    // not JSON
  }
  return text.slice(0, 200);
}

export async function placeExotelCall(options: ExotelRestOptions, request: PlaceCallRequest): Promise<{ callSid: string }> {
  const base = options.apiBaseUrl.replace(/\/+$/, '');
  const auth = `Basic ${Buffer.from(`${options.apiKey}:${options.apiToken}`).toString('base64')}`;
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
  const url = `${base}/v1/Accounts/${encodeURIComponent(options.accountSid)}/Calls/connect.json`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form.toString(),
      signal: AbortSignal.timeout(15_000),
    });
  } catch (err) {
    throw new ProviderError(`Exotel could not be reached: ${(err as Error).message}`, undefined, true, { cause: err });
  }
  const text = await res.text().catch(() => '');
  if (!res.ok) {
    const retryable = res.status === 429 || res.status >= 500;
    throw new ProviderError(`Exotel refused the call (HTTP ${res.status}): ${errorMessage(text)}`, res.status, retryable);
  }
  let sid: unknown;
  try {
    sid = (JSON.parse(text) as { Call?: { Sid?: unknown } }).Call?.Sid;
  } catch {
    sid = undefined;
  }
  if (typeof sid !== 'string' || sid === '') throw new ProviderError('Exotel answered without Call.Sid', res.status, false);
  return { callSid: sid };
}

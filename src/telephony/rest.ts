/**
 * What the providers' REST APIs have in common: HTTP basic auth, a form or JSON body, a JSON
 * answer, sent through the shared HTTP client (src/lib/http-client.ts) with its timeout, its
 * retry where a request is safe to repeat, and a span under the call's trace that the request
 * carries as `traceparent`. What differs stays in each driver: the account's URL, the requests and
 * their fields, which of them may be repeated, and how the provider words its errors.
 */
import type { Context } from '@opentelemetry/api';
import { send } from '../lib/http-client.js';
import { ProviderError } from './provider.js';

/** How long a provider may keep Dialer waiting for the start of its answer, per try. */
export const REST_TIMEOUT_MS = 10_000;
/** Tries in all for one request (a request that is not safe to repeat is sent again only when it never left). */
const ATTEMPTS = 3;

export interface RestAnswer {
  status: number;
  ok: boolean;
  /** The answer's JSON object, when it is one. */
  body: Record<string, unknown> | undefined;
  text: string;
}

export interface RestRequest {
  method: 'POST' | 'DELETE';
  /** The path below the account's URL (`Calls.json`, `Call/{uuid}/`). */
  resource: string;
  form?: URLSearchParams;
  json?: Record<string, unknown>;
  /**
   * Repeating the request does no harm (ending a call, a DELETE): it is sent again after a timeout,
   * a broken connection, 429 or a 5xx. Otherwise (creating a call, new instructions, keys) only
   * when the connection could not be made, since the first may have taken effect.
   */
  idempotent: boolean;
  /** What the request does, in words (`call creation`, `hang-up`): its span's name and its errors'. */
  action: string;
  /** The call's trace: the request gets a span under it. */
  traceContext?: Context | undefined;
}

/** What a driver's options say of its REST API. */
export interface RestSettings {
  /** The API's base URL (the provider's own when empty; a trailing slash is dropped). */
  apiBaseUrl: string;
  /** How long the provider may take to start answering, per try (default REST_TIMEOUT_MS). */
  timeoutMs?: number | undefined;
}

/** A provider's REST API, as its driver describes it. */
export interface RestApi {
  /** Twilio, Plivo, Exotel. */
  label: string;
  defaultBaseUrl: string;
  /** The account's path below the base URL (`/2010-04-01/Accounts/AC…`), already encoded. */
  accountPath: string;
  /** HTTP basic auth: user and password. */
  basicAuth: readonly [string, string];
  /** The provider's own words for a failed answer (its error JSON), when it has them. */
  errorText(answer: RestAnswer): string | undefined;
}

/** One provider account's REST API. */
export class ProviderRest {
  private readonly accountUrl: string;
  private readonly authorization: string;

  constructor(
    private readonly settings: RestSettings,
    private readonly api: RestApi,
  ) {
    this.accountUrl = `${(settings.apiBaseUrl || api.defaultBaseUrl).replace(/\/+$/, '')}${api.accountPath}`;
    this.authorization = `Basic ${Buffer.from(api.basicAuth.join(':')).toString('base64')}`;
  }

  /** Sends the request; a network failure or a timeout throws a retryable ProviderError, any answer resolves. */
  async request(request: RestRequest): Promise<RestAnswer> {
    const { label } = this.api;
    const headers: Record<string, string> = { authorization: this.authorization, accept: 'application/json' };
    let body: string | undefined;
    if (request.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = request.form.toString();
    } else if (request.json) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(request.json);
    }
    try {
      const response = await send(`${this.accountUrl}/${request.resource}`, {
        method: request.method,
        headers,
        ...(body === undefined ? {} : { body }),
        timeoutMs: this.settings.timeoutMs ?? REST_TIMEOUT_MS,
        retry: { attempts: ATTEMPTS, idempotent: request.idempotent },
        trace: { parent: request.traceContext, name: `${label} ${request.action}`, attributes: { 'dialer.provider_label': label } },
      });
      const text = await response.text();
      return { status: response.status, ok: response.ok, body: jsonObject(text), text };
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      throw new ProviderError(`${label} could not be reached (${request.method} ${request.resource}): ${reason}`, undefined, true, { cause: err });
    }
  }

  /** Sends the request and throws the provider's failure unless it answered 2xx. */
  async expectOk(request: RestRequest): Promise<RestAnswer> {
    const answer = await this.request(request);
    if (!answer.ok) throw this.failure(request.action, answer);
    return answer;
  }

  /** The ProviderError for a non-2xx answer, in the provider's own words; worth trying again later for 429 and 5xx. */
  failure(action: string, answer: RestAnswer): ProviderError {
    const message = this.api.errorText(answer) ?? (answer.text.trim().slice(0, 300) || 'no details');
    const retryable = answer.status === 429 || answer.status >= 500;
    return new ProviderError(`${this.api.label} ${action} failed with HTTP ${answer.status}: ${message}`, answer.status, retryable);
  }
}

function jsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = text ? JSON.parse(text) : undefined;
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

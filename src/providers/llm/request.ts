/** What the LLM clients share: a streamed request posted, and its failures in ServiceError's words. */
import { send, type ClientResponse } from '../../lib/http-client.js';
import { ServiceError } from '../../voice/services.js';

/** Statuses worth another try (by the fallback): rate limits, overload, timeouts, conflicts, the server's own failures. */
export const retryableStatus = (status: number) => status === 408 || status === 409 || status === 429 || status >= 500;

/**
 * POSTs `body` (JSON) to `url` for a server-sent event stream. The timeout is for the answer to
 * begin and for each piece after: a stream that keeps coming takes as long as the reply, one that
 * goes quiet is given up. A connection that fails is a retryable ServiceError; an answer that is
 * not 2xx one with its status and the provider's message (`{error: {message}}`, as both OpenAI and
 * Anthropic write it).
 */
export async function postStream(label: string, url: URL, options: { headers: Record<string, string>; body: unknown; signal: AbortSignal; timeoutMs: number }): Promise<ClientResponse> {
  let res: ClientResponse;
  try {
    res = await send(url, {
      method: 'POST',
      headers: { ...options.headers, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify(options.body),
      signal: options.signal,
      timeoutMs: options.timeoutMs,
    });
  } catch (err) {
    if (options.signal.aborted) throw err;
    throw new ServiceError(label, (err as Error).message, true, { cause: err });
  }
  if (!res.ok) {
    const text = await res.text().catch(() => '');
    let message = text.slice(0, 300);
    try {
      message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? message;
    } catch {
      /* not JSON */
    }
    throw new ServiceError(label, `HTTP ${res.status}: ${message}`, retryableStatus(res.status), { status: res.status });
  }
  return res;
}

/**
 * Requests to the services a call talks to over HTTP (the LLM, the TTS, the telephony providers'
 * REST APIs): undici's request API, on one connection pool for the process (warm-ups leave their
 * connections there). Node's fetch costs several times the CPU per request (web streams, resource
 * timing entries): 431 to 877 µs against 91 to 178 µs for the same local POST, server included,
 * and a call makes a dozen such requests. Redirects are not followed: none of these APIs sends one.
 * The provider emulator's callbacks to Dialer use it too (at 125 calls, fetch was 8% of its CPU).
 * Requests a tenant can steer do not come here: they go through src/lib/outbound. (The
 * speech-to-text upload, a multipart form once per utterance, still goes through fetch.)
 */
import { request, type Dispatcher } from 'undici';

export interface ClientResponse {
  status: number;
  ok: boolean;
  /** The answer's content type ('' when it has none). */
  contentType: string;
  /** The body as it arrives; read it, or `text()` it, so the connection goes back to the pool. */
  body: AsyncIterable<Uint8Array>;
  text(): Promise<string>;
}

export interface ClientRequest {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Aborts the request and the reading of its body. */
  signal?: AbortSignal;
  /**
   * Gives up when nothing arrives for this long: the answer's start (status and headers), with the
   * error `no answer within N ms`, or the next piece of its body, with `nothing more of the answer
   * within N ms`. A body that keeps coming may take longer in all (a long reply, a long sentence's
   * audio): a deadline on the whole request would cut it off mid-stream.
   */
  timeoutMs?: number;
}

export async function send(url: string | URL, init: ClientRequest = {}): Promise<ClientResponse> {
  let res: Dispatcher.ResponseData;
  const timeouts = init.timeoutMs === undefined ? {} : { headersTimeout: init.timeoutMs, bodyTimeout: init.timeoutMs };
  try {
    res = await request(url, { method: init.method ?? 'GET', headers: init.headers, body: init.body, signal: init.signal, ...timeouts });
  } catch (err) {
    if ((err as { code?: unknown }).code === 'UND_ERR_HEADERS_TIMEOUT') throw new Error(`no answer within ${init.timeoutMs} ms`, { cause: err });
    throw err;
  }
  const body = res.body;
  return {
    status: res.statusCode,
    ok: res.statusCode >= 200 && res.statusCode < 300,
    contentType: String(res.headers['content-type'] ?? ''),
    body: init.timeoutMs === undefined ? body : quietAfter(body, init.timeoutMs),
    text: () => body.text(),
  };
}

/** The body, its idle timeout said plainly. */
async function* quietAfter(body: AsyncIterable<Uint8Array>, ms: number): AsyncIterable<Uint8Array> {
  try {
    yield* body;
  } catch (err) {
    if ((err as { code?: unknown }).code === 'UND_ERR_BODY_TIMEOUT') throw new Error(`nothing more of the answer within ${ms} ms`, { cause: err });
    throw err;
  }
}

/**
 * Requests to the services a call talks to over HTTP (the LLM, the TTS, the telephony providers'
 * REST APIs): undici's request API, on one connection pool for the process (warm-ups leave their
 * connections there). Node's fetch costs several times the CPU per request (web streams, resource
 * timing entries): 431 to 877 µs against 91 to 178 µs for the same local POST, server included,
 * and a call makes a dozen such requests. Redirects are not followed: none of these APIs sends one.
 * Requests a tenant can steer do not come here: they go through src/lib/outbound. (The
 * speech-to-text upload, a multipart form once per utterance, still goes through fetch.)
 */
import { request, type Dispatcher } from 'undici';

export interface ClientResponse {
  status: number;
  ok: boolean;
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
   * Gives up when the answer has not begun (status and headers) within this long, with the error
   * `no answer within N ms`. A streamed body that began in time may take longer (a long reply, a
   * long sentence's audio): a deadline on the whole request would cut it off mid-stream.
   */
  headersTimeoutMs?: number;
}

export async function send(url: string | URL, init: ClientRequest = {}): Promise<ClientResponse> {
  let res: Dispatcher.ResponseData;
  try {
    res = await request(url, { method: init.method ?? 'GET', headers: init.headers, body: init.body, signal: init.signal, headersTimeout: init.headersTimeoutMs });
  } catch (err) {
    if ((err as { code?: unknown }).code === 'UND_ERR_HEADERS_TIMEOUT') throw new Error(`no answer within ${init.headersTimeoutMs} ms`, { cause: err });
    throw err;
  }
  return {
    status: res.statusCode,
    ok: res.statusCode >= 200 && res.statusCode < 300,
    body: res.body,
    text: () => res.body.text(),
  };
}

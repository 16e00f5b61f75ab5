/**
 * Requests to the services a call talks to over HTTP (the LLM, the TTS, the telephony providers'
 * REST APIs): undici's request API, on one connection pool for the process (warm-ups leave their
 * connections there). Node's fetch costs several times the CPU per request (web streams, resource
 * timing entries): 431 to 877 µs against 91 to 178 µs for the same local POST, server included,
 * and a call makes a dozen such requests. Redirects are not followed: none of these APIs sends one.
 * Requests a tenant can steer do not come here: they go through src/lib/outbound. (The
 * speech-to-text upload, a multipart form once per utterance, still goes through fetch.)
 */
import { request } from 'undici';

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
}

export async function send(url: string | URL, init: ClientRequest = {}): Promise<ClientResponse> {
  const res = await request(url, { method: init.method ?? 'GET', headers: init.headers, body: init.body, signal: init.signal });
  return {
    status: res.statusCode,
    ok: res.statusCode >= 200 && res.statusCode < 300,
    body: res.body,
    text: () => res.body.text(),
  };
}

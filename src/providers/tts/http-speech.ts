/**
 * A voice whose service answers one POST with the sentence's audio as headerless 16-bit PCM in the
 * response body (OpenAI-compatible speech, Azure Speech): the samples are yielded as the body
 * arrives, a sample split across two pieces joined. The timeout is for the audio to begin and for
 * each piece after, not for the whole (a long sentence streams for as long as it takes). A refused
 * request is a ServiceError, retryable on 429 and 5xx; a failed or broken connection is retryable.
 */
import { bytesToPcm } from '../../lib/audio.js';
import { send, type ClientResponse } from '../../lib/http-client.js';
import { ServiceError } from '../../voice/services.js';

export interface SpeechRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  signal: AbortSignal;
}

export async function* httpSpeech(label: string, request: SpeechRequest): AsyncIterable<Int16Array> {
  let res: ClientResponse;
  try {
    res = await send(request.url, { method: 'POST', headers: request.headers, body: request.body, signal: request.signal, timeoutMs: request.timeoutMs });
  } catch (err) {
    if (request.signal.aborted) return;
    throw new ServiceError(label, (err as Error).message, true, { cause: err });
  }
  if (!res.ok) {
    const body = await res.text().catch(() => '');
    throw new ServiceError(label, `HTTP ${res.status}${body ? `: ${body.slice(0, 200)}` : ''}`, res.status === 429 || res.status >= 500, { status: res.status });
  }
  let odd: number | undefined;
  try {
    for await (const chunk of res.body) {
      let bytes = chunk;
      if (odd !== undefined) {
        const joined = new Uint8Array(chunk.length + 1);
        joined[0] = odd;
        joined.set(chunk, 1);
        bytes = joined;
        odd = undefined;
      }
      if (bytes.length % 2 === 1) {
        odd = bytes[bytes.length - 1];
        bytes = bytes.subarray(0, bytes.length - 1);
      }
      if (bytes.length) yield bytesToPcm(bytes);
    }
  } catch (err) {
    if (request.signal.aborted) return;
    throw new ServiceError(label, `the audio stream broke: ${(err as Error).message}`, true, { cause: err });
  }
}

/**
 * Requests to the services a call talks to over HTTP (the LLM, the TTS, the telephony providers'
 * REST APIs): undici's request API, on one connection pool for the process (warm-ups leave their
 * connections there). Node's fetch costs several times the CPU per request (web streams, resource
 * timing entries): 431 to 877 µs against 91 to 178 µs for the same local POST, server included,
 * and a call makes a dozen such requests. Redirects are not followed: none of these APIs sends one.
 * The provider emulator's callbacks to Dialer use it too (at 125 calls, fetch was 8% of its CPU).
 * Requests a tenant can steer do not come here: they go through src/lib/outbound. (The
 * speech-to-text upload, a multipart form once per utterance, still goes through fetch.)
 *
 * Besides the timeout, a request may ask to be sent again (`retry`) and to be traced (`trace`):
 * it then gets a client span under the given context and carries it as the W3C `traceparent`
 * header, so a traced receiver continues the call's trace.
 */
import { SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';
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

/**
 * When a failed request is sent again. Only failures after which the server surely did nothing
 * are retried for any request: the connection could not be made (refused, the name did not
 * resolve, the connect timed out). A request that may be repeated without harm (`idempotent`: a
 * DELETE, setting a status it may already have) is also retried after a timeout, a broken
 * connection, 429 and 500/502/503/504; one that creates something (a call) is not, since the first
 * may have succeeded.
 */
export interface RetryPolicy {
  /** Tries in all, the first one included (1: none again). */
  attempts: number;
  idempotent: boolean;
  /** The pause before the second try, doubled before each next one (default 200 ms). */
  backoffMs?: number;
}

export interface ClientRequest {
  method?: 'GET' | 'POST' | 'DELETE';
  headers?: Record<string, string>;
  body?: string;
  /** Aborts the request, the reading of its body, and any further try. */
  signal?: AbortSignal;
  /**
   * Gives up when nothing arrives for this long: the answer's start (status and headers), with the
   * error `no answer within N ms`, or the next piece of its body, with `nothing more of the answer
   * within N ms`. A body that keeps coming may take longer in all (a long reply, a long sentence's
   * audio): a deadline on the whole request would cut it off mid-stream. Each try has its own.
   */
  timeoutMs?: number;
  /** Sends the request again after some failures (default: one try). */
  retry?: RetryPolicy;
  /**
   * Traces the request: a client span `name` under `parent` (when that context has a recording
   * span), ended once the answer's status is known, and the `traceparent` header.
   */
  trace?: { parent: Context | undefined; name: string; attributes?: Attributes };
}

const TRACER_NAME = 'dialer.http';

/** Connection failures: the request never reached the server. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);
/** Answers that say "not now" without a verdict on the request. */
const TRANSIENT_STATUS = new Set([429, 500, 502, 503, 504]);

export async function send(url: string | URL, init: ClientRequest = {}): Promise<ClientResponse> {
  const method = init.method ?? 'GET';
  const span = startSpan(url, method, init.trace);
  const headers = span ? { ...init.headers, traceparent: traceparent(span) } : init.headers;
  const attempts = Math.max(1, init.retry?.attempts ?? 1);
  let pauseMs = init.retry?.backoffMs ?? 200;
  let attempt = 0;
  try {
    for (;;) {
      attempt++;
      const outcome = await sendOnce(url, { ...init, method, headers }).then(
        (response) => ({ response }),
        (error: unknown) => ({ error }),
      );
      const again =
        attempt < attempts &&
        !init.signal?.aborted &&
        ('error' in outcome ? retryableFailure(outcome.error, init.retry!) : init.retry!.idempotent && TRANSIENT_STATUS.has(outcome.response.status));
      if (!again) {
        if ('error' in outcome) throw outcome.error;
        const { status } = outcome.response;
        span?.setAttribute('http.response.status_code', status);
        if (status >= 400) span?.setStatus({ code: SpanStatusCode.ERROR, message: `HTTP ${status}` });
        return outcome.response;
      }
      // Read what it said, so the connection goes back to the pool.
      if ('response' in outcome) await outcome.response.text().catch(() => undefined);
      await pause(pauseMs, init.signal);
      pauseMs *= 2;
    }
  } catch (err) {
    if (span) {
      const error = err instanceof Error ? err : new Error(String(err));
      span.recordException(error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
    }
    throw err;
  } finally {
    span?.setAttribute('http.request.resend_count', attempt - 1);
    span?.end();
  }
}

async function sendOnce(url: string | URL, init: ClientRequest & { method: NonNullable<ClientRequest['method']> }): Promise<ClientResponse> {
  let res: Dispatcher.ResponseData;
  const timeouts = init.timeoutMs === undefined ? {} : { headersTimeout: init.timeoutMs, bodyTimeout: init.timeoutMs };
  try {
    res = await request(url, { method: init.method, headers: init.headers, body: init.body, signal: init.signal, ...timeouts });
  } catch (err) {
    if (errorCode(err) === 'UND_ERR_HEADERS_TIMEOUT') throw new Error(`no answer within ${init.timeoutMs} ms`, { cause: err });
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

function errorCode(err: unknown): unknown {
  return (err as { code?: unknown } | undefined)?.code;
}

function retryableFailure(err: unknown, policy: RetryPolicy): boolean {
  // A timeout is thrown as a plain Error with undici's as its cause.
  const code = errorCode(err) ?? errorCode((err as { cause?: unknown } | undefined)?.cause);
  return (typeof code === 'string' && NOT_SENT.has(code)) || policy.idempotent;
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

function startSpan(url: string | URL, method: string, options: ClientRequest['trace']): Span | undefined {
  if (!options?.parent || !trace.getSpan(options.parent)?.isRecording()) return undefined;
  const target = new URL(url);
  return trace.getTracer(TRACER_NAME).startSpan(
    options.name,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'http.request.method': method,
        'server.address': target.hostname,
        'server.port': Number(target.port) || (target.protocol === 'https:' ? 443 : 80),
        'url.path': target.pathname,
        ...options.attributes,
      },
    },
    options.parent,
  );
}

/** The W3C trace context header naming `span` as the parent of what the receiver does. */
function traceparent(span: Span): string {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, '0')}`;
}

/** The body, its idle timeout said plainly. */
async function* quietAfter(body: AsyncIterable<Uint8Array>, ms: number): AsyncIterable<Uint8Array> {
  try {
    yield* body;
  } catch (err) {
    if (errorCode(err) === 'UND_ERR_BODY_TIMEOUT') throw new Error(`nothing more of the answer within ${ms} ms`, { cause: err });
    throw err;
  }
}

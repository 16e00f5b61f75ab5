/**
 * Template hooks: an HTTP request with `{variable}` substitution in the URL, query,
 * headers and body, a timeout, one retry for network errors and 5xx, and a result for the record.
 * A hook never throws and never outlives its timeout. It is sent through the fetch it is given
 * (the outbound URL policy's): a refused address is recorded as `blocked` and nothing is sent. At
 * most HOOK_MAX_RESPONSE_BYTES of a response is kept (the record and the LLM see no more).
 */
import { SpanStatusCode, type Context } from '@opentelemetry/api';
import type { FlowHook } from './schema.js';
import { describeOutboundFailure, OutboundBlockedError, readTextLimited, type OutboundFetch } from '../../lib/outbound/index.js';
import { childSpan } from '../tracing.js';
import { substitute } from './substitute.js';
import type { FunctionCallRecord } from './types.js';

type HookResult = FunctionCallRecord['hooks'][number];

/** The most of a hook's response that is kept in the call record and given to the LLM. */
export const HOOK_MAX_RESPONSE_BYTES = 8 * 1024;

/** Substitutes inside every string of a JSON value; other values are kept as they are. */
function deep(value: unknown, fill: (text: string) => string): unknown {
  if (typeof value === 'string') return fill(value);
  if (Array.isArray(value)) return value.map((v) => deep(v, fill));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, deep(v, fill)]));
  return value;
}

export async function runHook(
  hook: FlowHook,
  vars: Record<string, unknown>,
  options: {
    fetch: OutboundFetch;
    defaultTimeoutMs: number;
    /** Told each `{placeholder}` that has no value (it stays as written). */
    missing?: (name: string) => void;
    /** Cuts the hook short (the timeout applies anyway). */
    signal?: AbortSignal;
    /** The turn's context: the hook gets a `hook` span under it. */
    traceParent?: Context | undefined;
    /** The function the hook belongs to (for its span). */
    functionName?: string;
  },
): Promise<HookResult> {
  const span = childSpan(options.traceParent, 'hook', { 'dialer.hook.name': hook.name, ...(options.functionName ? { 'dialer.hook.function': options.functionName } : {}) });
  if (!span) return (await request(hook, vars, options)).result;
  // W3C trace context: a traced receiver continues the call's trace under this hook.
  const { traceId, spanId, traceFlags } = span.spanContext();
  const outcome = await request(hook, vars, options, `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, '0')}`);
  span.setAttributes({
    'http.request.method': outcome.method,
    ...(outcome.url ? { 'server.address': outcome.url.hostname, 'server.port': Number(outcome.url.port) || (outcome.url.protocol === 'https:' ? 443 : 80) } : {}),
    ...(outcome.result.status !== undefined ? { 'http.response.status_code': outcome.result.status } : {}),
    'dialer.hook.attempts': outcome.attempts,
    'dialer.hook.ok': outcome.result.ok,
    'dialer.duration_ms': outcome.result.durationMs,
  });
  if (!outcome.result.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.result.error ?? `HTTP ${outcome.result.status}` });
  span.end();
  return outcome.result;
}

async function request(
  hook: FlowHook,
  vars: Record<string, unknown>,
  options: Parameters<typeof runHook>[2],
  traceparent?: string,
): Promise<{ result: HookResult; method: string; url?: URL; attempts: number }> {
  const spec = hook.http_request;
  const started = performance.now();
  const method = spec.method ?? 'POST';
  const fill = (text: string) => substitute(text, vars, options.missing);
  let url: URL;
  try {
    // Values are encoded in the URL, so a "/" or "?" in a value cannot change the path.
    url = new URL(substitute(spec.url, vars, options.missing, encodeURIComponent));
  } catch {
    return { result: { name: hook.name, ok: false, durationMs: 0, error: `bad URL ${spec.url}` }, method, attempts: 0 };
  }
  for (const [k, v] of Object.entries(spec.query_params ?? {})) url.searchParams.set(k, fill(String(v)));
  const headers: Record<string, string> = { 'user-agent': 'Dialer hooks', accept: 'application/json' };
  if (traceparent) headers.traceparent = traceparent;
  for (const [k, v] of Object.entries(spec.headers ?? {})) headers[k.toLowerCase()] = fill(v);
  let body: string | undefined;
  if (method !== 'GET' && spec.body !== undefined) {
    body = JSON.stringify(deep(spec.body, fill));
    headers['content-type'] ??= 'application/json';
  }
  const timeoutMs = spec.timeout ? spec.timeout * 1000 : options.defaultTimeoutMs;
  const timeout = AbortSignal.timeout(timeoutMs);
  const deadline = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  let last: HookResult | undefined;
  const done = (attempts: number) => ({ result: last!, method, url, attempts });
  for (let attempt = 1; attempt <= 2; attempt++) {
    try {
      const res = await options.fetch(url, { method, headers, ...(body === undefined ? {} : { body }), signal: deadline });
      const { text, truncated } = await readTextLimited(res, HOOK_MAX_RESPONSE_BYTES);
      let response: unknown = text;
      try {
        response = truncated ? text : text ? JSON.parse(text) : undefined;
      } catch {
        /* not JSON: keep the text */
      }
      last = {
        name: hook.name,
        status: res.status,
        ok: res.ok,
        durationMs: Math.round(performance.now() - started),
        response,
        ...(truncated ? { truncated: true } : {}),
        ...(res.ok ? {} : { error: `HTTP ${res.status}` }),
      };
      if (res.status < 500) return done(attempt);
    } catch (err) {
      const blocked = err instanceof OutboundBlockedError;
      last = {
        name: hook.name,
        ok: false,
        durationMs: Math.round(performance.now() - started),
        error: timeout.aborted ? `timed out after ${timeoutMs} ms` : describeOutboundFailure(err),
        ...(blocked ? { blocked: true } : {}),
      };
      // A refused address stays refused: no second attempt.
      if (deadline.aborted || blocked) return done(attempt);
    }
  }
  return done(2);
}

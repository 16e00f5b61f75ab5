/**
 * Template hooks (spec 6.3): an HTTP request with `{variable}` substitution in the URL, query,
 * headers and body, a timeout, one retry for network errors and 5xx, and a result for the record.
 * A hook never throws and never outlives its timeout.
 */
import type { FlowHook } from '../../templates/index.js';
import { substitute } from './substitute.js';
import type { FunctionCallRecord } from './types.js';

type HookResult = FunctionCallRecord['hooks'][number];

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
    fetch: typeof fetch;
    defaultTimeoutMs: number;
    /** Told each `{placeholder}` that has no value (it stays as written). */
    missing?: (name: string) => void;
    /** Cuts the hook short (the timeout applies anyway). */
    signal?: AbortSignal;
  },
): Promise<HookResult> {
  const spec = hook.http_request;
  const started = performance.now();
  const method = spec.method ?? 'POST';
  const fill = (text: string) => substitute(text, vars, options.missing);
  let url: URL;
  try {
    // Values are encoded in the URL, so a "/" or "?" in a value cannot change the path.
    url = new URL(substitute(spec.url, vars, options.missing, encodeURIComponent));
  } catch {
    return { name: hook.name, ok: false, durationMs: 0, error: `bad URL ${spec.url}` };
  }
  for (const [k, v] of Object.entries(spec.query_params ?? {})) url.searchParams.set(k, fill(String(v)));
  const headers: Record<string, string> = { 'user-agent': 'Dialer hooks', accept: 'application/json' };
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
  for (let attempt = 1; attempt <= 2; attempt++) {
    try {
      const res = await options.fetch(url, { method, headers, body, signal: deadline });
      const text = await res.text();
      let response: unknown = text;
      try {
        response = text ? JSON.parse(text) : undefined;
      } catch {
        /* not JSON: keep the text */
      }
      last = { name: hook.name, status: res.status, ok: res.ok, durationMs: Math.round(performance.now() - started), response, ...(res.ok ? {} : { error: `HTTP ${res.status}` }) };
      if (res.status < 500) return last;
    } catch (err) {
      const timedOut = timeout.aborted;
      last = { name: hook.name, ok: false, durationMs: Math.round(performance.now() - started), error: timedOut ? `timed out after ${timeoutMs} ms` : `request failed: ${((err as Error).cause as Error | undefined)?.message ?? (err as Error).message}` };
      if (deadline.aborted) return last;
    }
  }
  return last!;
}

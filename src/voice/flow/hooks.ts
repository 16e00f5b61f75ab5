/**
 * Template hooks (spec 6.3): an HTTP request with `{variable}` substitution in the URL, query,
 * headers and body, a timeout, one retry for network errors and 5xx, and a result for the record.
 * A hook never throws and never outlives its timeout.
 */
import type { FlowHook } from '../../templates/index.js';
import { substitute } from './substitute.js';
import type { FunctionCallRecord } from './types.js';

type HookResult = FunctionCallRecord['hooks'][number];

function deep(value: unknown, vars: Record<string, unknown>): unknown {
  if (typeof value === 'string') return substitute(value, vars);
  if (Array.isArray(value)) return value.map((v) => deep(v, vars));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, deep(v, vars)]));
  return value;
}

export async function runHook(
  hook: FlowHook,
  vars: Record<string, unknown>,
  options: { fetch: typeof fetch; defaultTimeoutMs: number; signal: AbortSignal },
): Promise<HookResult> {
  const spec = hook.http_request;
  const started = performance.now();
  const method = spec.method ?? 'POST';
  let url: URL;
  try {
    url = new URL(substitute(spec.url, vars, undefined));
  } catch {
    return { name: hook.name, ok: false, durationMs: 0, error: `bad URL ${spec.url}` };
  }
  for (const [k, v] of Object.entries(spec.query_params ?? {})) url.searchParams.set(k, substitute(String(v), vars));
  const headers: Record<string, string> = { 'user-agent': 'Dialer hooks' };
  for (const [k, v] of Object.entries(spec.headers ?? {})) headers[k.toLowerCase()] = substitute(v, vars);
  let body: string | undefined;
  if (method !== 'GET' && method !== 'DELETE' && spec.body !== undefined) {
    body = JSON.stringify(deep(spec.body, vars));
    headers['content-type'] ??= 'application/json';
  }
  const timeoutMs = spec.timeout ? spec.timeout * 1000 : options.defaultTimeoutMs;
  const deadline = AbortSignal.any([options.signal, AbortSignal.timeout(timeoutMs)]);
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
      const timedOut = deadline.aborted && !options.signal.aborted;
      last = { name: hook.name, ok: false, durationMs: Math.round(performance.now() - started), error: timedOut ? `timed out after ${timeoutMs} ms` : (err as Error).message };
      if (deadline.aborted) return last;
    }
  }
  return last!;
}

/**
 * Pre-dial checks (configuration `pre_checks`): each an HTTP request to the client's API, with
 * `{variable}` placeholders filled from the lead, whose JSON response decides whether to dial.
 * - the response's `response_field` (a dot path) equals `response_field_value`: passed;
 * - it differs: failed, and the lead finishes PRECHECK_FAILED;
 * - the API errors, times out, answers non-2xx or non-JSON: `default_on_failure` decides,
 *   `proceed` (dial anyway) or `skip` (finish PRECHECK_FAILED).
 * Checks run in order and stop at the first that stops the lead.
 */
import { SpanStatusCode, trace, type Context } from '@opentelemetry/api';
import type { PreCheck } from '../configurations/index.js';
import { TRACER_NAME } from '../tracing/index.js';
import { substitute } from '../voice/flow/index.js';

export interface PreCheckResult {
  name: string;
  /** passed / failed: the API answered; error: it did not (see action); disabled: not run. */
  result: 'passed' | 'failed' | 'error' | 'disabled';
  /** What the check decided for the lead. */
  action: 'proceed' | 'skip';
  status_code?: number;
  value?: unknown;
  error?: string;
  duration_ms?: number;
}

export interface PreCheckOutcome {
  proceed: boolean;
  results: PreCheckResult[];
}

function substituteDeep(value: unknown, vars: Record<string, unknown>): unknown {
  if (typeof value === 'string') return substitute(value, vars);
  if (Array.isArray(value)) return value.map((v) => substituteDeep(v, vars));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substituteDeep(v, vars)]));
  return value;
}

/** The value at a dot path (`data.items.0.ok`), or undefined. */
export function pick(body: unknown, path: string): unknown {
  let at: unknown = body;
  for (const key of path.split('.')) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

/** Equal as JSON values, or as text when one side is text ("true" matches true, "1" matches 1). */
function matches(actual: unknown, expected: unknown): boolean {
  if (actual === expected) return true;
  if (actual === undefined || actual === null || expected === null) return false;
  if (typeof actual === 'object' || typeof expected === 'object') return JSON.stringify(actual) === JSON.stringify(expected);
  return String(actual) === String(expected);
}

async function runOne(check: PreCheck, vars: Record<string, unknown>, signal?: AbortSignal): Promise<PreCheckResult> {
  const started = Date.now();
  const req = check.http_request;
  const onError = (error: string, status_code?: number): PreCheckResult => ({
    name: check.name,
    result: 'error',
    action: check.default_on_failure,
    error,
    ...(status_code === undefined ? {} : { status_code }),
    duration_ms: Date.now() - started,
  });
  let url: URL;
  try {
    url = new URL(substitute(req.url, vars, undefined, encodeURIComponent));
    for (const [k, v] of Object.entries(req.query_params ?? {})) url.searchParams.set(k, substitute(String(v), vars));
  } catch {
    return onError('the URL is invalid after substitution');
  }
  const method = req.method ?? 'GET';
  const headers: Record<string, string> = { accept: 'application/json' };
  for (const [k, v] of Object.entries(req.headers ?? {})) headers[k] = substitute(v, vars);
  let body: string | undefined;
  if (req.body !== undefined && method !== 'GET') {
    body = typeof req.body === 'string' ? substitute(req.body, vars) : JSON.stringify(substituteDeep(req.body, vars));
    headers['content-type'] ??= 'application/json';
  }
  const timeout = AbortSignal.timeout(Math.round((req.timeout ?? 5) * 1000));
  let res: Response;
  try {
    res = await fetch(url, { method, headers, ...(body === undefined ? {} : { body }), signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
  } catch (err) {
    const e = err as Error;
    return onError(e.name === 'TimeoutError' ? `timed out after ${req.timeout ?? 5} s` : `request failed: ${(e.cause as Error | undefined)?.message ?? e.message}`);
  }
  let json: unknown;
  try {
    const text = await res.text();
    if (!res.ok) return onError(`the API answered ${res.status}`, res.status);
    json = JSON.parse(text);
  } catch {
    return onError('the response is not JSON', res.status);
  }
  const value = pick(json, check.response_config.response_field);
  const passed = matches(value, check.response_config.response_field_value);
  return {
    name: check.name,
    result: passed ? 'passed' : 'failed',
    action: passed ? 'proceed' : 'skip',
    status_code: res.status,
    value: value ?? null,
    duration_ms: Date.now() - started,
  };
}

/** `traceParent`: the attempt's call span, when traced: each check run is a `pre_check` span under it. */
export async function runPreChecks(checks: PreCheck[], vars: Record<string, unknown>, signal?: AbortSignal, traceParent?: Context): Promise<PreCheckOutcome> {
  const results: PreCheckResult[] = [];
  const traced = traceParent !== undefined && trace.getSpan(traceParent)?.isRecording() === true;
  for (const check of checks) {
    if (check.enabled === false) {
      results.push({ name: check.name, result: 'disabled', action: 'proceed' });
      continue;
    }
    const span = traced ? trace.getTracer(TRACER_NAME).startSpan('pre_check', { attributes: { 'dialer.pre_check.name': check.name } }, traceParent) : undefined;
    const r = await runOne(check, vars, signal);
    if (span) {
      span.setAttributes({
        'dialer.pre_check.result': r.result,
        'dialer.pre_check.action': r.action,
        'http.request.method': check.http_request.method ?? 'GET',
        ...(r.status_code !== undefined ? { 'http.response.status_code': r.status_code } : {}),
        ...(r.duration_ms !== undefined ? { 'dialer.duration_ms': r.duration_ms } : {}),
      });
      if (r.result === 'error') span.setStatus({ code: SpanStatusCode.ERROR, ...(r.error ? { message: r.error } : {}) });
      span.end();
    }
    results.push(r);
    if (r.action === 'skip') return { proceed: false, results };
  }
  return { proceed: true, results };
}

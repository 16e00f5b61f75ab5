/**
 * Pre-dial checks (configuration `pre_checks`): each an HTTP request to the client's API, with
 * `{variable}` placeholders filled from the lead, whose JSON response decides whether to dial.
 * - the response's `response_field` (a dot path) equals `response_field_value`: passed;
 * - it differs: failed, and the lead finishes PRECHECK_FAILED;
 * - the API errors, times out, answers non-2xx or non-JSON: `default_on_failure` decides,
 *   `proceed` (dial anyway) or `skip` (finish PRECHECK_FAILED).
 * Checks run in order and stop at the first that stops the lead. Requests go through the outbound
 * URL policy (a refused address is recorded as `blocked`); at most 64 kB of a response is read, and
 * a result keeps the compared value only when it matched or is a short scalar.
 */
import { SpanStatusCode, trace, type Context } from '@opentelemetry/api';
import type { PreCheck } from '../configurations/index.js';
import { describeOutboundFailure, OutboundBlockedError, readTextLimited, type OutboundFetch } from '../lib/outbound/index.js';
import { TRACER_NAME } from '../tracing/index.js';
import { substitute } from '../voice/flow/index.js';

export interface PreCheckResult {
  name: string;
  /**
   * passed / failed: the API answered; error: it did not; blocked: the outbound URL policy refused
   * the address, nothing was sent (both: see action); disabled: not run.
   */
  result: 'passed' | 'failed' | 'error' | 'blocked' | 'disabled';
  /** What the check decided for the lead. */
  action: 'proceed' | 'skip';
  status_code?: number;
  /** The compared field's value: kept when it matched or is a short scalar, else left out. */
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

/** The largest pre-check response read; a check needs one field, not a document. */
export const PRE_CHECK_MAX_RESPONSE_BYTES = 64 * 1024;
/** A compared value that did not match is kept only when it is a scalar this short. */
const MAX_KEPT_TEXT = 64;

export interface PreCheckOptions {
  /** Sends the check's request: the outbound URL policy's fetch. */
  fetch: OutboundFetch;
  signal?: AbortSignal | undefined;
  /** The attempt's call span, when traced: each check run is a `pre_check` span under it. */
  traceParent?: Context | undefined;
}

/**
 * What a result keeps of the compared value: the value when it matched or is a short scalar;
 * never an object or a long text (a check must not read an internal service back to the tenant).
 */
function keptValue(value: unknown, passed: boolean): { value?: unknown } {
  if (value === undefined || value === null) return { value: null };
  if (passed) return { value };
  if (typeof value === 'boolean' || typeof value === 'number') return { value };
  if (typeof value === 'string' && value.length <= MAX_KEPT_TEXT) return { value };
  return {};
}

async function runOne(check: PreCheck, vars: Record<string, unknown>, options: PreCheckOptions): Promise<PreCheckResult> {
  const started = Date.now();
  const req = check.http_request;
  const onError = (error: string, status_code?: number, result: 'error' | 'blocked' = 'error'): PreCheckResult => ({
    name: check.name,
    result,
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
  const timeoutMs = Math.round((req.timeout ?? 5) * 1000);
  const timeout = AbortSignal.timeout(timeoutMs);
  let res: Response;
  try {
    res = await options.fetch(url, { method, headers, ...(body === undefined ? {} : { body }), signal: options.signal ? AbortSignal.any([options.signal, timeout]) : timeout });
  } catch (err) {
    const error = describeOutboundFailure(err, timeoutMs);
    return onError(error, undefined, err instanceof OutboundBlockedError ? 'blocked' : 'error');
  }
  let json: unknown;
  try {
    const { text, truncated } = await readTextLimited(res, PRE_CHECK_MAX_RESPONSE_BYTES);
    if (!res.ok) return onError(`the API answered ${res.status}`, res.status);
    if (truncated) return onError(`the response is larger than ${PRE_CHECK_MAX_RESPONSE_BYTES / 1024} kB`, res.status);
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
    ...keptValue(value, passed),
    duration_ms: Date.now() - started,
  };
}

export async function runPreChecks(checks: PreCheck[], vars: Record<string, unknown>, options: PreCheckOptions): Promise<PreCheckOutcome> {
  const { traceParent } = options;
  const results: PreCheckResult[] = [];
  const traced = traceParent !== undefined && trace.getSpan(traceParent)?.isRecording() === true;
  for (const check of checks) {
    if (check.enabled === false) {
      results.push({ name: check.name, result: 'disabled', action: 'proceed' });
      continue;
    }
    const span = traced ? trace.getTracer(TRACER_NAME).startSpan('pre_check', { attributes: { 'dialer.pre_check.name': check.name } }, traceParent) : undefined;
    const r = await runOne(check, vars, options);
    if (span) {
      span.setAttributes({
        'dialer.pre_check.result': r.result,
        'dialer.pre_check.action': r.action,
        'http.request.method': check.http_request.method ?? 'GET',
        ...(r.status_code !== undefined ? { 'http.response.status_code': r.status_code } : {}),
        ...(r.duration_ms !== undefined ? { 'dialer.duration_ms': r.duration_ms } : {}),
      });
      if (r.result === 'error' || r.result === 'blocked') span.setStatus({ code: SpanStatusCode.ERROR, ...(r.error ? { message: r.error } : {}) });
      span.end();
    }
    results.push(r);
    if (r.action === 'skip') return { proceed: false, results };
  }
  return { proceed: true, results };
}

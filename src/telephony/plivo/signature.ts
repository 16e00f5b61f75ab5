/**
 * Plivo V3 request signatures (X-Plivo-Signature-V3, nonce in X-Plivo-Signature-V3-Nonce):
 * base64 HMAC-SHA256, keyed with the auth token, of `<base>.<nonce>` where <base> is built from
 * the URL as Plivo's SDKs build it:
 * - scheme://host[:port]/path, then the query parameters as `name=value` (decoded), sorted by name
 *   and value and joined with `&`;
 * - GET: the request's parameters join the query ones, and `?` + that string is appended when not empty;
 * - POST: `?` + the sorted query (when there is a query or there are POST parameters), a `.` when
 *   there are both, then every POST parameter as name+value, sorted by name and value.
 * X-Plivo-Signature-V3 may hold several signatures, comma-separated (one per auth token in rotation).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { parse as parseQuery } from 'node:querystring';
import type { CallbackRequest } from '../provider.js';

type ParamValues = Map<string, string[]>;

function add(map: ParamValues, name: string, value: string): void {
  const values = map.get(name);
  if (values) values.push(value);
  else map.set(name, [value]);
}

/** scheme://host[:port]/path (no user info, query or fragment), and the raw query string. */
function splitUrl(url: string): { base: string; query: string } {
  const noFragment = url.split('#')[0]!;
  const match = /^(?:([a-z][a-z0-9+.-]*):)?(?:\/\/)?([^/?]*)([^?]*)(?:\?(.*))?$/is.exec(noFragment);
  if (!match) return { base: noFragment, query: '' };
  const scheme = match[1] || 'http';
  const authority = match[2] ?? '';
  const hostPort = authority.slice(authority.lastIndexOf('@') + 1);
  let path = match[3] ?? '';
  if (path !== '' && !path.startsWith('/')) path = `/${path}`;
  return { base: `${scheme}://${hostPort}${path}`, query: match[4] ?? '' };
}

function queryValues(query: string): ParamValues {
  const map: ParamValues = new Map();
  for (const [name, value] of Object.entries(parseQuery(query))) {
    for (const v of Array.isArray(value) ? value : [value ?? '']) add(map, name, v);
  }
  return map;
}

function sortedQuery(params: ParamValues): string {
  const parts: string[] = [];
  for (const name of [...params.keys()].sort()) for (const value of [...params.get(name)!].sort()) parts.push(`${name}=${value}`);
  return parts.join('&');
}

function sortedParams(params: ParamValues): string {
  let out = '';
  for (const name of [...params.keys()].sort()) for (const value of [...params.get(name)!].sort()) out += name + value;
  return out;
}

function signatureBase(method: string, url: string, params: ParamValues): string {
  const { base, query } = splitUrl(url);
  const fromQuery = queryValues(query);
  if (method.toUpperCase() === 'GET') {
    for (const [name, values] of params) for (const v of values) add(fromQuery, name, v);
    const q = sortedQuery(fromQuery);
    return q.length > 0 ? `${base}?${q}` : base;
  }
  const q = sortedQuery(fromQuery);
  const hasParams = params.size > 0;
  let out = base;
  if (q.length > 0 || hasParams) out += `?${q}`;
  if (q.length > 0 && hasParams) out += '.';
  return out + sortedParams(params);
}

function sign(authToken: string, method: string, url: string, nonce: string, params: ParamValues): string {
  return createHmac('sha256', authToken).update(`${signatureBase(method, url, params)}.${nonce}`, 'utf8').digest('base64');
}

export function plivoSignatureV3(authToken: string, method: string, url: string, nonce: string, params: Readonly<Record<string, string>>): string {
  return sign(authToken, method, url, nonce, new Map(Object.entries(params).map(([k, v]) => [k, [v]])));
}


function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The POST parameters Plivo signed: the form body's fields (JSON bodies: their top-level fields). */
function bodyParams(contentType: string | undefined, rawBody: string): ParamValues {
  const params: ParamValues = new Map();
  if (rawBody === '') return params;
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json') {
    try {
      const parsed: unknown = JSON.parse(rawBody);
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
        for (const [k, v] of Object.entries(parsed)) if (v !== null && v !== undefined) add(params, k, typeof v === 'object' ? JSON.stringify(v) : String(v));
      }
    } catch {
      /* an unreadable body signs as none; the signature will not match */
    }
    return params;
  }
  for (const [name, value] of new URLSearchParams(rawBody)) add(params, name, value);
  return params;
}

/** True when one of the request's V3 signatures is Plivo's signature of it. */
export function verifyPlivoRequest(authToken: string, request: CallbackRequest): boolean {
  const nonce = request.headers['x-plivo-signature-v3-nonce']?.trim();
  const given = (request.headers['x-plivo-signature-v3'] ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (!nonce || given.length === 0) return false;
  const method = request.method.toUpperCase();
  const params = method === 'GET' ? new Map<string, string[]>() : bodyParams(request.headers['content-type'], request.rawBody);
  const expected = sign(authToken, method, request.url, nonce, params);
  // Check every candidate (no early exit) so timing says nothing about which one matched.
  let matched = false;
  for (const signature of given) matched = safeEqual(signature, expected) || matched;
  return matched;
}

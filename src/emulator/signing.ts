/**
 * How the emulated providers sign the requests they send, written from the providers' own
 * descriptions and kept apart from Dialer's drivers on purpose: were both to share one reading of
 * a provider's protocol, a mistake in it would pass every test. The emulator's test checks these
 * signatures with the providers' official SDKs.
 */
import { createHmac } from 'node:crypto';

/**
 * X-Twilio-Signature: base64 HMAC-SHA1 (key: the auth token) of the URL Twilio requested, followed,
 * for a form POST, by each parameter's name and value in the order of the names.
 */
export function twilioRequestSignature(authToken: string, url: string, postParams: Readonly<Record<string, string>>): string {
  const data = Object.keys(postParams)
    .sort()
    .reduce((acc, name) => acc + name + postParams[name], url);
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

/** `name=value` pairs of a map of values, ordered by name then value, joined with `&`. */
function orderedPairs(values: Map<string, string[]>): string {
  return [...values.keys()]
    .sort()
    .flatMap((name) => [...values.get(name)!].sort().map((value) => `${name}=${value}`))
    .join('&');
}

/**
 * X-Plivo-Signature-V3: base64 HMAC-SHA256 (key: the auth token) of `<signed URL>.<nonce>`. The
 * signed URL is scheme://host[:port]/path with the query's parameters ordered by name and value;
 * a GET adds its parameters to the query; a POST writes `?<query>` (when it has a query or a body),
 * a `.` between a query and a body, then the body's parameters as name+value, ordered.
 */
export function plivoRequestSignatureV3(authToken: string, method: 'GET' | 'POST', url: string, nonce: string, params: Readonly<Record<string, string>>): string {
  const parsed = new URL(url);
  const query = new Map<string, string[]>();
  for (const [name, value] of parsed.searchParams) query.set(name, [...(query.get(name) ?? []), value]);
  const base = `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  let signed: string;
  if (method === 'GET') {
    for (const [name, value] of Object.entries(params)) query.set(name, [...(query.get(name) ?? []), value]);
    const q = orderedPairs(query);
    signed = q ? `${base}?${q}` : base;
  } else {
    const q = orderedPairs(query);
    const body = Object.keys(params)
      .sort()
      .map((name) => name + params[name])
      .join('');
    signed = base + (q || body ? `?${q}` : '') + (q && body ? '.' : '') + body;
  }
  return createHmac('sha256', authToken).update(`${signed}.${nonce}`, 'utf8').digest('base64');
}

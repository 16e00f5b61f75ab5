/**
 * Twilio request signatures (X-Twilio-Signature): base64 HMAC-SHA1, keyed with the auth token, of
 * the full URL followed by every POST parameter's name and value, sorted by name. GET requests and
 * JSON bodies sign the URL alone; JSON bodies are then covered by the URL's `bodySHA256` parameter
 * (hex SHA-256 of the body).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { CallbackRequest } from '../provider.js';

/** Parameter name to its values (form posts may repeat a name). */
type ParamValues = ReadonlyMap<string, readonly string[]>;

function sign(authToken: string, url: string, params: ParamValues): string {
  let data = url;
  for (const name of [...params.keys()].sort()) {
    // Repeated names: each distinct value once, in sorted order (as Twilio's own libraries do).
    for (const value of [...new Set(params.get(name))].sort()) data += name + value;
  }
  return createHmac('sha1', authToken).update(Buffer.from(data, 'utf8')).digest('base64');
}

export function twilioSignature(authToken: string, url: string, params: Readonly<Record<string, string>>): string {
  return sign(authToken, url, new Map(Object.entries(params).map(([k, v]) => [k, [v]])));
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The URL with its default port spelled out, and without any port: Twilio may have signed either. */
function portVariants(url: string): string[] {
  const match = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/is.exec(url);
  if (!match) return [url];
  const scheme = match[1] ?? '';
  const authority = match[2] ?? '';
  const rest = match[3] ?? '';
  const at = authority.lastIndexOf('@');
  const userInfo = authority.slice(0, at + 1);
  const hostPort = authority.slice(at + 1);
  const colon = hostPort.indexOf(':', hostPort.lastIndexOf(']') + 1);
  const host = colon === -1 ? hostPort : hostPort.slice(0, colon);
  const defaultPort = scheme.toLowerCase() === 'https://' ? ':443' : ':80';
  const withPort = colon === -1 ? scheme + userInfo + host + defaultPort + rest : url;
  const withoutPort = scheme + userInfo + host + rest;
  return [...new Set([url, withoutPort, withPort])];
}

/** True when the request's X-Twilio-Signature is Twilio's signature of it. */
export function verifyTwilioRequest(authToken: string, request: CallbackRequest): boolean {
  const signature = request.headers['x-twilio-signature']?.trim();
  if (!signature) return false;
  let bodyHash: string | null = null;
  try {
    bodyHash = new URL(request.url).searchParams.get('bodySHA256');
  } catch {
    return false;
  }
  const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  const params = new Map<string, string[]>();
  if (bodyHash !== null) {
    const actual = createHash('sha256').update(Buffer.from(request.rawBody, 'utf8')).digest('hex');
    if (!safeEqual(actual, bodyHash.toLowerCase())) return false;
  } else if (request.method.toUpperCase() === 'POST' && type !== 'application/json') {
    for (const [name, value] of new URLSearchParams(request.rawBody)) {
      const values = params.get(name);
      if (values) values.push(value);
      else params.set(name, [value]);
    }
  }
  return portVariants(request.url).some((url) => safeEqual(sign(authToken, url, params), signature));
}

/**
 * HTTP digest authentication as SIP uses it (RFC 3261 section 22, RFC 2617): the answer to a 401's
 * WWW-Authenticate or a 407's Proxy-Authenticate challenge, MD5 with or without qop=auth.
 */
import { createHash, randomBytes } from 'node:crypto';

export interface Challenge {
  realm: string;
  nonce: string;
  opaque?: string;
  algorithm?: string;
  qop?: string;
}

function md5(text: string): string {
  return createHash('md5').update(text).digest('hex');
}

/** Reads `Digest realm="x", nonce="y", ...`; undefined when it is not a digest challenge. */
export function parseChallenge(value: string | undefined): Challenge | undefined {
  if (!value || !/^digest\s/i.test(value)) return undefined;
  const fields: Record<string, string> = {};
  for (const match of value.slice(7).matchAll(/([a-z-]+)\s*=\s*(?:"([^"]*)"|([^,\s]+))/gi)) fields[match[1]!.toLowerCase()] = match[2] ?? match[3] ?? '';
  if (fields.realm === undefined || fields.nonce === undefined) return undefined;
  return { realm: fields.realm, nonce: fields.nonce, ...(fields.opaque !== undefined ? { opaque: fields.opaque } : {}), ...(fields.algorithm ? { algorithm: fields.algorithm } : {}), ...(fields.qop ? { qop: fields.qop } : {}) };
}

/** The Authorization (or Proxy-Authorization) value answering `challenge` for one request. */
export function authorization(challenge: Challenge, credentials: { username: string; password: string }, method: string, uri: string, nonceCount = 1): string {
  if (challenge.algorithm && challenge.algorithm.toUpperCase() !== 'MD5') throw new Error(`digest algorithm ${challenge.algorithm} is not supported (MD5 only)`);
  const ha1 = md5(`${credentials.username}:${challenge.realm}:${credentials.password}`);
  const ha2 = md5(`${method}:${uri}`);
  const auth = challenge.qop?.split(',').map((q) => q.trim()).includes('auth');
  const parts = [`username="${credentials.username}"`, `realm="${challenge.realm}"`, `nonce="${challenge.nonce}"`, `uri="${uri}"`];
  if (auth) {
    const nc = nonceCount.toString(16).padStart(8, '0');
    const cnonce = randomBytes(8).toString('hex');
    parts.push(`response="${md5(`${ha1}:${challenge.nonce}:${nc}:${cnonce}:auth:${ha2}`)}"`, 'qop=auth', `nc=${nc}`, `cnonce="${cnonce}"`);
  } else {
    parts.push(`response="${md5(`${ha1}:${challenge.nonce}:${ha2}`)}"`);
  }
  parts.push('algorithm=MD5');
  if (challenge.opaque !== undefined) parts.push(`opaque="${challenge.opaque}"`);
  return `Digest ${parts.join(', ')}`;
}

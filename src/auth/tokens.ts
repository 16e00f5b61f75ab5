import { createHash, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { unauthorized } from '../lib/errors.js';

export const S2S_PREFIX = 's2s_';
const ISSUER = 'dialer';

export interface AccessClaims {
  sub: string;
}

/** What a verified access token says: whose it is and when it was issued. */
export interface VerifiedToken {
  userId: string;
  issuedAtMs: number;
}

export class JwtSigner {
  // A KeyObject, made once: jose would otherwise import the raw secret on every verification.
  private readonly key: KeyObject;
  /**
   * Tokens whose signature has been checked, until they expire. A signature that verified once
   * verifies again until `exp` (nothing else in the token can change), so a client sending the
   * same token with every request pays for the HMAC once. Bounded: the oldest entries go first.
   */
  private readonly verified = new Map<string, VerifiedToken & { expiresAtMs: number }>();

  constructor(secret: string, readonly ttlSeconds: number, private readonly maxVerified = 10_000) {
    this.key = createSecretKey(Buffer.from(secret, 'utf8'));
  }

  private remember(token: string, verified: VerifiedToken, expiresAtMs: number): void {
    if (this.verified.size >= this.maxVerified) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(token, { ...verified, expiresAtMs });
  }

  sign(userId: string): Promise<string> {
    return new SignJWT({ typ: 'access' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(userId)
      .setIssuer(ISSUER)
      .setIssuedAt()
      .setExpirationTime(`${this.ttlSeconds}s`)
      .sign(this.key);
  }

  /** The user ID and issue time of a valid, unexpired access token; 401 otherwise. */
  async verify(token: string): Promise<VerifiedToken> {
    const known = this.verified.get(token);
    if (known && Date.now() < known.expiresAtMs) return { userId: known.userId, issuedAtMs: known.issuedAtMs };
    if (known) this.verified.delete(token);
    try {
      const { payload } = await jwtVerify(token, this.key, { issuer: ISSUER, algorithms: ['HS256'] });
      if (payload.typ !== 'access' || typeof payload.sub !== 'string') throw unauthorized('The token is not an access token');
      const verified = { userId: payload.sub, issuedAtMs: (payload.iat ?? 0) * 1000 };
      this.remember(token, verified, (payload.exp ?? 0) * 1000);
      return verified;
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw unauthorized('The access token has expired; log in again');
      if (err instanceof joseErrors.JOSEError) throw unauthorized('The access token is malformed or its signature is invalid');
      throw err;
    }
  }
}

/** A new s2s secret: `s2s_` and 43 characters of base64url (256 random bits). */
export function newS2sToken(): string {
  return S2S_PREFIX + randomBytes(32).toString('base64url');
}

/** s2s secrets are long random strings, so a fast hash is as safe as a slow one and keeps lookups O(1). */
export function hashS2sToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

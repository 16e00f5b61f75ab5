/**
 * Short-lived links that carry their own permission: an HMAC over the path and an expiry, for
 * the places a browser cannot send a bearer token (an <audio> element reading a recording with
 * Range requests).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface SignedLink {
  expires: number;
  signature: string;
}

function mac(key: Buffer, subject: string, expires: number): string {
  return createHmac('sha256', key).update(`${subject}\n${expires}`).digest('base64url');
}

/** A signature for `subject` (what the link opens) valid until `expiresAt`. */
export function signLink(key: Buffer, subject: string, expiresAt: Date): SignedLink {
  const expires = Math.floor(expiresAt.getTime() / 1000);
  return { expires, signature: mac(key, subject, expires) };
}

/** Whether the link is genuine and not expired. */
export function verifyLink(key: Buffer, subject: string, link: { expires: number; signature: string }, now = new Date()): boolean {
  if (!Number.isSafeInteger(link.expires) || link.expires * 1000 < now.getTime()) return false;
  const expected = Buffer.from(mac(key, subject, link.expires));
  const given = Buffer.from(link.signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The flag system's webhook signature: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw
 * body>`, the scheme of GO Feature Flag's webhook notifier (and GitHub's). Compared in constant time.
 */
export function signFlagWebhook(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export function verifyFlagWebhook(secret: string, header: string | undefined, body: string): boolean {
  const m = /^sha256=([0-9a-f]{64})$/i.exec(header?.trim() ?? '');
  if (!m) return false;
  const expected = createHmac('sha256', secret).update(body).digest();
  return timingSafeEqual(expected, Buffer.from(m[1]!, 'hex'));
}

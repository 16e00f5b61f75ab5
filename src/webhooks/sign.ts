import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * `X-Dialer-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. The
 * timestamp is signed with the body, so a receiver can refuse replays older than its tolerance.
 */
export function signWebhook(secret: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', secret).update(`${timestampSeconds}.${body}`).digest('hex');
  return `t=${timestampSeconds},v1=${mac}`;
}

/** For receivers: whether `header` signs `body` with `secret`, made within `toleranceSeconds`. */
export function verifyWebhookSignature(secret: string, header: string | undefined, body: string, toleranceSeconds = 300, nowSeconds = Math.floor(Date.now() / 1000)): boolean {
  if (!header) return false;
  const parts = new Map(header.split(',').map((p) => p.trim().split('=', 2) as [string, string]));
  const t = Number(parts.get('t'));
  const v1 = parts.get('v1');
  if (!Number.isInteger(t) || !v1 || !/^[0-9a-f]{64}$/.test(v1)) return false;
  if (Math.abs(nowSeconds - t) > toleranceSeconds) return false;
  const expected = Buffer.from(signWebhook(secret, t, body).split('v1=')[1]!, 'hex');
  return timingSafeEqual(expected, Buffer.from(v1, 'hex'));
}

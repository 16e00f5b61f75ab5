/** The reporting webhook's and service callback's delivery: signing, attempts, pauses, timeout. */
import { ConfigError, type Env } from './env.js';

export interface WebhookSettings {
  /** HMAC key for X-Dialer-Signature; unset: deliveries are not signed. */
  secret: string | undefined;
  /** Attempts per delivery (3 by default). */
  attempts: number;
  /** Pause before each retry, in ms (by default none: back-to-back). */
  delaysMs: number[];
  /** Per-attempt timeout. */
  timeoutMs: number;
}

export function webhookSettings(env: Env): WebhookSettings {
  const int = (name: string, fallback: number, min: number, max: number) => {
    const raw = env[name]?.trim();
    if (!raw) return fallback;
    if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
    const n = Number(raw);
    if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
    return n;
  };
  const attempts = int('DIALER_WEBHOOK_ATTEMPTS', 3, 1, 10);
  const rawDelays = env.DIALER_WEBHOOK_RETRY_DELAYS_MS?.trim();
  let delaysMs: number[] = [];
  if (rawDelays) {
    delaysMs = rawDelays.split(',').map((d) => {
      const v = d.trim();
      if (!/^\d+$/.test(v) || Number(v) > 600_000) {
        throw new ConfigError(`DIALER_WEBHOOK_RETRY_DELAYS_MS must be comma-separated milliseconds (each at most 600000), got "${rawDelays}"`);
      }
      return Number(v);
    });
  }
  const secret = env.DIALER_WEBHOOK_SECRET || undefined;
  if (secret !== undefined && secret.length < 16) throw new ConfigError('DIALER_WEBHOOK_SECRET must be at least 16 characters');
  return { secret, attempts, delaysMs, timeoutMs: int('DIALER_WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000) };
}

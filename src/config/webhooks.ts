/**
 * The reporting webhook's and service callback's delivery: signing, the back-to-back attempts, the
 * backoff after them and how long it goes on, timeouts, and how many deliveries run at once.
 */
import { ConfigError, type Env } from './env.js';

export interface WebhookSettings {
  /** HMAC key for X-Dialer-Signature; unset: deliveries are not signed. */
  secret: string | undefined;
  /** The first attempts of a delivery, made back-to-back (3 by default). */
  attempts: number;
  /** Pause before each of those first retries, in ms (by default none: back-to-back). */
  delaysMs: number[];
  /** Per-attempt timeout. */
  timeoutMs: number;
  /**
   * How long after a delivery is queued it is still retried once its first attempts failed (24
   * hours by default; 0: never, the delivery fails after its first attempts).
   */
  retryForMs: number;
  /** The first pause of the backoff; each later one doubles, with jitter, up to `backoffMaxMs`. */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** Deliveries one worker runs at once, in all and to one receiver (host and port). */
  concurrency: number;
  hostConcurrency: number;
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
  const backoffBaseMs = int('DIALER_WEBHOOK_BACKOFF_BASE_MS', 10_000, 10, 3_600_000);
  const backoffMaxMs = int('DIALER_WEBHOOK_BACKOFF_MAX_MS', 3_600_000, 10, 86_400_000);
  if (backoffMaxMs < backoffBaseMs) {
    throw new ConfigError(`DIALER_WEBHOOK_BACKOFF_MAX_MS (${backoffMaxMs}) must be at least DIALER_WEBHOOK_BACKOFF_BASE_MS (${backoffBaseMs})`);
  }
  const concurrency = int('DIALER_WEBHOOK_CONCURRENCY', 32, 1, 1000);
  return {
    secret,
    attempts,
    delaysMs,
    timeoutMs: int('DIALER_WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
    retryForMs: int('DIALER_WEBHOOK_RETRY_FOR_SECONDS', 86_400, 0, 30 * 86_400) * 1000,
    backoffBaseMs,
    backoffMaxMs,
    concurrency,
    hostConcurrency: Math.min(concurrency, int('DIALER_WEBHOOK_HOST_CONCURRENCY', 4, 1, 1000)),
  };
}

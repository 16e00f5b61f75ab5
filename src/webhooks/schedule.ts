/**
 * When a failed delivery is tried again: the first `attempts` go back-to-back (or with the
 * configured pauses), then the pauses double from `backoffBaseMs` up to `backoffMaxMs`, each with
 * jitter (between half and all of it, so receivers coming back from an outage are not hit by every
 * worker at the same instant), for as long as the delivery is younger than `retryForMs`.
 */
import type { WebhookSettings } from '../config/webhooks.js';

export type AfterFailure = { kind: 'retry'; delayMs: number } | { kind: 'give_up' };

/** What follows failed attempt number `attempt` (1-based) of a delivery queued at `queuedAt`. */
export function afterFailure(settings: WebhookSettings, attempt: number, queuedAt: Date, now: Date, random: () => number = Math.random): AfterFailure {
  if (attempt < settings.attempts) return { kind: 'retry', delayMs: firstRetryDelayMs(settings, attempt) };
  const doublings = Math.min(attempt - settings.attempts, 30);
  const ceilingMs = Math.min(settings.backoffMaxMs, settings.backoffBaseMs * 2 ** doublings);
  const delayMs = Math.round(ceilingMs / 2 + random() * (ceilingMs / 2));
  if (now.getTime() + delayMs > queuedAt.getTime() + settings.retryForMs) return { kind: 'give_up' };
  return { kind: 'retry', delayMs };
}

/** Pause before attempt number `attempt + 1` of the first ones: the last configured pause repeats. */
function firstRetryDelayMs(settings: WebhookSettings, attempt: number): number {
  if (settings.delaysMs.length === 0) return 0;
  return settings.delaysMs[Math.min(attempt - 1, settings.delaysMs.length - 1)] ?? 0;
}

/**
 * Delivers queued reporting webhooks: any number of dispatchers (one per worker process) take
 * pending deliveries with SKIP LOCKED and a lease, POST them, and record every attempt. Attempts
 * go back-to-back by default, only 2xx counts. A dispatcher that dies mid-delivery
 * leaves its lease to lapse; another resumes with the attempts left. It never blocks callers:
 * finishing a lead only queues a row. Every request goes through the outbound URL policy: a refused
 * address is recorded as a blocked attempt (nothing is sent, and no retry follows). Errors are
 * recorded in words that do not map the network (no addresses, no ports).
 */
import type { FastifyBaseLogger } from 'fastify';
import { VERSION } from '../lib/version.js';
import type { Db } from '../db/index.js';
import { describeOutboundFailure, OutboundBlockedError, strictOutbound, type OutboundClient } from '../lib/outbound/index.js';
import type { WebhookSettings } from '../config/webhooks.js';
import { WebhooksRepository, type Delivery } from './repository.js';
import { signWebhook } from './sign.js';
import { webhookAttempts, webhookFailures } from '../metrics/index.js';


export interface DispatcherOptions {
  db: Db;
  log: FastifyBaseLogger;
  settings: WebhookSettings;
  workerId: string;
  pollMs?: number;
  batchSize?: number;
  /** Deliveries are sent through it (the outbound URL policy); default: public addresses only. */
  outbound?: OutboundClient;
}

export class WebhookDispatcher {
  private running = false;
  private loop: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private wakeUp: (() => void) | undefined;

  constructor(private readonly options: DispatcherOptions) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Delivers what is pending now (a lead just finished). */
  wake(): void {
    this.wakeUp?.();
  }

  /** Finishes the deliveries in hand, then stops. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.wake();
    await this.loop;
  }

  /** One round: takes the due deliveries and delivers them. Returns how many it took. */
  async runOnce(): Promise<number> {
    const { settings, workerId } = this.options;
    const rows = await new WebhooksRepository(this.options.db).takeDue(workerId, leaseSeconds(settings), this.options.batchSize ?? 20);
    await Promise.all(rows.map((d) => this.deliver(d).catch((err: unknown) => this.options.log.error({ err, deliveryId: d.id, leadId: d.lead_id }, 'webhook delivery failed'))));
    return rows.length;
  }

  private async run(): Promise<void> {
    while (this.running) {
      let taken = 0;
      try {
        taken = await this.runOnce();
      } catch (err) {
        this.options.log.error({ err }, 'webhook round failed');
      }
      if (taken > 0) continue;
      await new Promise<void>((resolve) => {
        this.wakeUp = resolve;
        this.timer = setTimeout(resolve, this.options.pollMs ?? 500);
      });
      clearTimeout(this.timer);
      this.wakeUp = undefined;
    }
  }

  private async deliver(d: Delivery): Promise<void> {
    const { db, settings, log } = this.options;
    const body = JSON.stringify(d.payload);
    let attempt = d.attempts;
    while (attempt < settings.attempts) {
      // Before a retry: its delay (the last one repeats; none by default: back-to-back).
      const delay = retryDelayMs(settings, attempt);
      if (delay > 0) await new Promise((r) => setTimeout(r, delay));
      attempt++;
      const startedAt = new Date();
      const started = performance.now();
      let statusCode: number | null = null;
      let error: string | null = null;
      let blocked = false;
      try {
        const headers: Record<string, string> = {
          'content-type': 'application/json',
          'user-agent': `Dialer/${VERSION}`,
          'x-dialer-event': event(d.kind),
          // The same id on every attempt of one notification, across restarts: receivers deduplicate by it.
          'x-dialer-delivery-id': d.id,
          'x-dialer-attempt': String(attempt),
        };
        if (settings.secret) headers['x-dialer-signature'] = signWebhook(settings.secret, Math.floor(Date.now() / 1000), body);
        const outbound = this.options.outbound ?? strictOutbound();
        const res = await outbound.fetch(d.url, { method: 'POST', headers, body, redirect: 'manual', signal: AbortSignal.timeout(settings.timeoutMs) });
        statusCode = res.status;
        await res.body?.cancel().catch(() => {});
        if (res.status < 200 || res.status > 299) error = `the receiver answered ${res.status}`;
      } catch (err) {
        blocked = err instanceof OutboundBlockedError;
        error = describeOutboundFailure(err, settings.timeoutMs);
      }
      const latency = Math.round(performance.now() - started);
      const delivered = error === null;
      // A refused address stays refused: the delivery ends with this attempt.
      const final = delivered || blocked || attempt >= settings.attempts;
      // Guarded by the attempt count: a dispatcher that lost its lease (it stalled past it and
      // another took over) records nothing and stops, instead of overwriting the newer state.
      const recorded = await db.tx((q) =>
        new WebhooksRepository(q).recordAttempt(d.id, { number: attempt, startedAt, statusCode, latencyMs: latency, error, delivered, final }),
      );
      webhookAttempts.inc({ kind: event(d.kind), result: delivered ? 'delivered' : 'failed' });
      if (final && !delivered) webhookFailures.inc({ kind: event(d.kind) });
      if (!recorded) {
        log.warn({ deliveryId: d.id, leadId: d.lead_id, attempt }, 'webhook delivery taken over by another dispatcher; stopping');
        return;
      }
      if (delivered) return;
      log.warn({ deliveryId: d.id, leadId: d.lead_id, kind: event(d.kind), attempt, statusCode, error }, 'webhook attempt failed');
    }
  }
}

/** `X-Dialer-Event`: which notification this is (the reporting webhook's success and failure bodies are one event). */
function event(kind: Delivery['kind']): 'reporting' | 'service_callback' {
  return kind === 'service_callback' ? 'service_callback' : 'reporting';
}

/** Pause before attempt number `attempt + 1` (after `attempt` failed ones): the last delay repeats. */
function retryDelayMs(settings: WebhookSettings, attempt: number): number {
  if (attempt === 0 || settings.delaysMs.length === 0) return 0;
  return settings.delaysMs[Math.min(attempt - 1, settings.delaysMs.length - 1)] ?? 0;
}

/** A lease long enough for every attempt and pause of one delivery, with a margin. */
function leaseSeconds(settings: WebhookSettings): number {
  let totalMs = 0;
  for (let attempt = 0; attempt < settings.attempts; attempt++) totalMs += retryDelayMs(settings, attempt) + settings.timeoutMs;
  return Math.ceil(totalMs / 1000) + 30;
}

/**
 * Delivers queued reporting webhooks and service callbacks. Any number of dispatchers (one per
 * worker process) claim due deliveries one attempt at a time with SKIP LOCKED: the claim counts the
 * attempt and leases it for the attempt's timeout and a margin, so a dispatcher that dies
 * mid-attempt leaves a short lease that another takes over, with the next attempt number. Each
 * delivery runs on its own: a dispatcher has a bounded number in flight, in all and per receiver,
 * and takes more as each one settles, so a slow or dead receiver delays only its own deliveries.
 * The first attempts go back-to-back, later ones back off (`schedule.ts`); only 2xx counts. It never
 * blocks callers: finishing a lead only queues a row. Every request goes through the outbound URL
 * policy: a refused address is recorded as a blocked attempt (nothing is sent, and no retry
 * follows). Errors are recorded in words that do not map the network (no addresses, no ports).
 */
import type { FastifyBaseLogger } from 'fastify';
import { VERSION } from '../lib/version.js';
import type { Db } from '../db/index.js';
import { describeOutboundFailure, OutboundBlockedError, strictOutbound, type OutboundClient } from '../lib/outbound/index.js';
import type { WebhookSettings } from '../config/webhooks.js';
import { WebhooksRepository, type Delivery } from './repository.js';
import { afterFailure } from './schedule.js';
import { signWebhook } from './sign.js';
import { webhookAttempts, webhookFailures } from '../metrics/index.js';

export interface DispatcherOptions {
  db: Db;
  log: FastifyBaseLogger;
  settings: WebhookSettings;
  workerId: string;
  pollMs?: number;
  /** Added to the attempt timeout to make an attempt's lease (default 10 s): time to record the answer. */
  leaseMarginMs?: number;
  /** Deliveries are sent through it (the outbound URL policy); default: public addresses only. */
  outbound?: OutboundClient;
}

interface AttemptResult {
  startedAt: Date;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  blocked: boolean;
}

export class WebhookDispatcher {
  private running = false;
  private stopping = false;
  private loop: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private wakeUp: (() => void) | undefined;
  /** The deliveries in hand, by id, and how many of them go to each receiver. */
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly perReceiver = new Map<string, number>();

  constructor(private readonly options: DispatcherOptions) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopping = false;
    this.loop = this.run();
  }

  /** Delivers what is pending now (a lead just finished, a delivery settled, a retry fell due). */
  wake(): void {
    this.wakeUp?.();
  }

  /** Finishes the attempts in hand (no further ones: their deliveries wait for the next claim), then stops. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.running) {
      this.running = false;
      this.wake();
      await this.loop;
    }
    await Promise.all(this.inFlight.values());
  }

  /**
   * One round: claims what is due (as many as the bounds allow) and waits until each of those
   * deliveries has settled: delivered, failed, or waiting for a later retry. Returns how many it took.
   */
  async runOnce(): Promise<number> {
    const started = await this.take();
    await Promise.all(started);
    return started.length;
  }

  /** Claims due deliveries within the bounds and starts each; returns their promises. */
  private async take(): Promise<Promise<void>[]> {
    const { settings, workerId, db } = this.options;
    const free = settings.concurrency - this.inFlight.size;
    if (free <= 0) return [];
    const rows = await new WebhooksRepository(db).takeDue(workerId, this.leaseSeconds(), free, settings.hostConcurrency, this.perReceiver);
    return rows.map((d) => this.launch(d));
  }

  private launch(d: Delivery): Promise<void> {
    this.perReceiver.set(d.receiver, (this.perReceiver.get(d.receiver) ?? 0) + 1);
    const settled = this.deliver(d)
      .catch((err: unknown) => this.options.log.error({ err, deliveryId: d.id, leadId: d.lead_id }, 'webhook delivery failed'))
      .finally(() => {
        this.inFlight.delete(d.id);
        const left = (this.perReceiver.get(d.receiver) ?? 1) - 1;
        if (left > 0) this.perReceiver.set(d.receiver, left);
        else this.perReceiver.delete(d.receiver);
        this.wake();
      });
    this.inFlight.set(d.id, settled);
    return settled;
  }

  private async run(): Promise<void> {
    while (this.running) {
      let taken = 0;
      try {
        taken = (await this.take()).length;
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

  /** Makes the claimed attempt, and the next ones while they are due at once; records each. */
  private async deliver(d: Delivery): Promise<void> {
    const { db, settings, log, workerId } = this.options;
    let attempt = d.attempt;
    for (;;) {
      const result = await this.attempt(d, attempt);
      const delivered = result.error === null;
      // A refused address stays refused: the delivery ends with this attempt.
      const after = delivered ? undefined : result.blocked ? ({ kind: 'give_up' } as const) : afterFailure(settings, attempt, d.created_at, new Date());
      const next = delivered
        ? ({ kind: 'delivered' } as const)
        : after!.kind === 'give_up'
          ? ({ kind: 'failed' } as const)
          : {
              kind: 'retry' as const,
              delayMs: after!.delayMs,
              // Due at once: this dispatcher goes on with it (and leases that attempt) unless stopping.
              ...(after!.delayMs === 0 && !this.stopping ? { continueLeaseSeconds: this.leaseSeconds() } : {}),
            };
      // Guarded by the attempt number and the holder: a dispatcher that lost its lease (it stalled
      // past it and another took over) logs its attempt but changes nothing else, and stops.
      const recorded = await db.tx((q) => new WebhooksRepository(q).recordAttempt(d.id, workerId, { number: attempt, ...result }, next));
      webhookAttempts.inc({ kind: event(d.kind), result: delivered ? 'delivered' : 'failed' });
      if (!recorded.recorded) {
        log.warn({ deliveryId: d.id, leadId: d.lead_id, attempt }, 'webhook delivery settled or taken over by another dispatcher; stopping');
        return;
      }
      if (delivered) return;
      if (next.kind === 'failed') webhookFailures.inc({ kind: event(d.kind) });
      const retryInMs = next.kind === 'retry' ? next.delayMs : undefined;
      log.warn({ deliveryId: d.id, leadId: d.lead_id, kind: event(d.kind), attempt, statusCode: result.statusCode, error: result.error, retryInMs }, 'webhook attempt failed');
      if (recorded.nextAttempt === undefined) {
        // Wake up when it falls due, rather than at the next poll.
        if (retryInMs !== undefined && this.running) setTimeout(() => this.wake(), retryInMs).unref();
        return;
      }
      attempt = recorded.nextAttempt;
    }
  }

  /** One HTTP attempt. */
  private async attempt(d: Delivery, attempt: number): Promise<AttemptResult> {
    const { settings } = this.options;
    const body = JSON.stringify(d.payload);
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
        // The same id on every attempt of one notification, across restarts and redeliveries by
        // hand: receivers deduplicate by it.
        'x-dialer-delivery-id': d.notification_id,
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
    return { startedAt, statusCode, latencyMs: Math.round(performance.now() - started), error, blocked };
  }

  /** An attempt's lease: its timeout and a margin to record the answer. */
  private leaseSeconds(): number {
    return (this.options.settings.timeoutMs + (this.options.leaseMarginMs ?? 10_000)) / 1000;
  }
}

/** `X-Dialer-Event`: which notification this is (the reporting webhook's success and failure bodies are one event). */
function event(kind: Delivery['kind']): 'reporting' | 'service_callback' {
  return kind === 'service_callback' ? 'service_callback' : 'reporting';
}

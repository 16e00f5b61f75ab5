/**
 * The leases of a runner's live attempts (a scheduler's calls, a process's WebRTC sessions). Each claimed lead carries a lease (`locked_until`) that
 * lapses unless renewed: another worker then recovers the lead. The leases of all the worker's live
 * calls are renewed together, one statement every third of the lease while any call is live (a
 * timer and a statement per call cost more than the rest of a call's bookkeeping). A call whose
 * lease was lost is hung up at once: its lead and number may already be someone else's.
 */
import type { Db } from '../db/index.js';
import type { FastifyBaseLogger as Logger } from 'fastify';
import { renewLeases } from '../lifecycle/index.js';

/** A claimed lead being carried. */
export interface LiveCall {
  /** Hangs the call up (the lease was lost, or shutdown's grace period is over). */
  hangUp(reason: Error): void;
  /** Its call is over (its outcome is being written): a lease lost now hangs up nothing. */
  ended: boolean;
  /** The lease was lost: hang up (unless ended). */
  lost(): void;
}

export class Leases {
  /** Every claimed lead being carried, by lead id, until its outcome is written. */
  private readonly calls = new Map<string, LiveCall>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly workerId: string,
    private readonly leaseSeconds: number,
    private readonly log: Logger,
  ) {}

  /** A claimed lead is being carried: its lease is renewed with the others' until it is let go. */
  hold(leadId: string, call: LiveCall): void {
    this.calls.set(leadId, call);
    this.timer ??= setInterval(() => void this.renew(), (this.leaseSeconds * 1000) / 3);
  }

  /** Its outcome is written (or it was given back): its lease is no longer renewed. */
  letGo(leadId: string, call: LiveCall): void {
    if (this.calls.get(leadId) === call) this.calls.delete(leadId);
    if (this.calls.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /** Hangs up every live call (shutdown's grace period is over). */
  hangUpAll(reason: Error): void {
    for (const call of this.calls.values()) call.hangUp(reason);
  }

  /**
   * Renews every held lease now (a recovery is about to run: after an outage longer than the lease,
   * this runner's own leads, whose ends are still being written, must not look abandoned to it).
   */
  renewNow(): Promise<void> {
    return this.calls.size > 0 ? this.renew() : Promise.resolve();
  }

  private renew(): Promise<void> {
    const sent = [...this.calls];
    return renewLeases(this.db, sent.map(([leadId]) => leadId), this.workerId, this.leaseSeconds)
      .then((held) => {
        // (A lead carried again meanwhile, for its next attempt, is another call.)
        for (const [leadId, call] of sent) if (!held.has(leadId) && this.calls.get(leadId) === call) call.lost();
      })
      .catch((err: unknown) => this.log.warn({ err, calls: sent.length }, 'lease renewal failed'));
  }
}

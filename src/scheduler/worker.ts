/**
 * The scheduler of one worker process: a loop that recovers expired leases, claims due leads up
 * to its free call slots, and runs each claimed lead (pre-checks, dial through the provider's
 * driver, outcome) while the leases of all its live calls are renewed together. Any number of
 * workers share one PostgreSQL.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../db/index.js';
import { Attempts } from '../attempts/index.js';
import { strictOutbound, type OutboundClient } from '../lib/outbound/index.js';
import type { Drivers } from '../telephony/index.js';
import { dials } from '../metrics/index.js';
import { claimBatch, type Claimed, type StoppedResellers } from './claim-rules.js';
import { callOptions, countAttempt, dialSafely } from './dial.js';
import { DEFAULT_HEALTH_SETTINGS, HealthRounds, type NumberHealthSettings } from './health.js';
import { Pacer } from './pacer.js';
import { runPreChecks } from './prechecks.js';
import { finishUndialled, LEADS_CHANNEL, notePreChecks, recordCallId, releaseClaim, type NumberRotation, type OnFinished } from '../lifecycle/index.js';

export interface SchedulerOptions {
  db: Db;
  drivers: Drivers;
  log: FastifyBaseLogger;
  /** Called in the transaction that finishes a lead (the reporting webhook is queued there). */
  onFinished?: OnFinished;
  /** Called after a transaction that finished leads has committed (wakes the webhook dispatcher). */
  afterFinished?: () => void;
  workerId?: string;
  /** Calls this worker carries at once. */
  maxConcurrentCalls?: number;
  /** Lease on a claimed lead, renewed every third of it while its call lives. */
  leaseSeconds?: number;
  /** Idle poll interval; `wake()` runs a round at once. */
  pollMs?: number;
  /** How often expired leases are looked for. */
  recoverEveryMs?: number;
  /** On stop: how long live calls may take to end before they are hung up. */
  shutdownGraceMs?: number;
  /** The per-reseller kill switch (a feature flag): leads of these resellers wait. */
  stoppedResellers?: StoppedResellers;
  /** The instant claims judge calling windows at (default: the database's clock); see ClaimOptions. */
  judgedAt?: () => Date;
  /** Pre-checks are sent through it (the outbound URL policy); default: nothing but public addresses. */
  outbound?: OutboundClient;
  /**
   * Where the ends of calls that could not be written yet (the database unreachable) are kept on
   * the disk, and where the journals of dead workers on this machine are recovered from; undefined:
   * kept in memory only (lost if the process dies during the outage).
   */
  journalDir?: string | undefined;
  /** The numbers' health rounds (window, thresholds, rest; docs/leads.md, "Outbound number"). */
  numberHealth?: Partial<NumberHealthSettings>;
}

/** How often a busy worker may look for uncallable leads clogging the queue head (see claimBatch). */
const UNCLOG_EVERY_MS = 1000;

export interface SchedulerStats {
  claimed: number;
  dialled: number;
  finished: number;
  retried: number;
  released: number;
}

export class Scheduler {
  readonly workerId: string;
  readonly stats: SchedulerStats = { claimed: 0, dialled: 0, finished: 0, retried: 0, released: 0 };
  private readonly db: Db;
  private readonly drivers: Drivers;
  private readonly log: FastifyBaseLogger;
  private readonly onFinished: OnFinished;
  private readonly afterFinished: () => void;
  private readonly maxCalls: number;
  private readonly leaseSeconds: number;
  private readonly pollMs: number;
  private readonly recoverEveryMs: number;
  private readonly graceMs: number;
  private readonly refill: number;
  private readonly stoppedResellers: StoppedResellers | undefined;
  private readonly judgedAt: (() => Date) | undefined;
  private readonly outbound: OutboundClient;
  /** Every claimed lead's runner, until its outcome is written (shutdown waits for them). */
  private readonly live = new Set<Promise<void>>();
  /** Claimed leads whose call has not ended yet: what `maxConcurrentCalls` bounds. */
  private callsInProgress = 0;
  /** The live attempts: their traces, their leases (renewed together), their ends (written durably). */
  private readonly attempts: Attempts;
  private running = false;
  private stopping = false;
  private loop: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private wakeUp: (() => void) | undefined;
  /** A wake-up that came while a round ran (nobody was waiting): the loop runs another round at once. */
  private woken = false;
  private lastRecovery = 0;
  private readonly health: HealthRounds;
  private lastUnclog = 0;
  /** This worker's dials of paced campaigns: their turns at their slots, how far ahead it claims slots. */
  private readonly pacer = new Pacer();
  /** When a paced campaign this worker claimed for may start its next call (the idle wait ends then). */
  private pacedAt: number | undefined;
  /** Whether the last round moved leads aside (see round). */
  private movedAside = false;
  private callsEnded = 0;
  private unlisten: Promise<() => Promise<void>> | undefined;
  /** Where this worker's claims stand in their rotation through each provider's numbers. */
  private readonly rotation: NumberRotation = new Map();

  constructor(options: SchedulerOptions) {
    this.db = options.db;
    this.drivers = options.drivers;
    this.log = options.log;
    this.onFinished = options.onFinished ?? (async () => {});
    this.afterFinished = options.afterFinished ?? (() => {});
    this.workerId = options.workerId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.maxCalls = options.maxConcurrentCalls ?? 50;
    this.leaseSeconds = options.leaseSeconds ?? 30;
    this.pollMs = options.pollMs ?? 500;
    this.recoverEveryMs = options.recoverEveryMs ?? 5000;
    this.graceMs = options.shutdownGraceMs ?? 30_000;
    this.refill = Math.max(1, Math.floor(this.maxCalls / 4));
    this.stoppedResellers = options.stoppedResellers;
    this.judgedAt = options.judgedAt;
    this.outbound = options.outbound ?? strictOutbound();
    this.health = new HealthRounds(this.db, this.log, { ...DEFAULT_HEALTH_SETTINGS, ...options.numberHealth });
    this.attempts = new Attempts({ db: this.db, log: this.log, workerId: this.workerId, leaseSeconds: this.leaseSeconds, onFinished: this.onFinished, journalDir: options.journalDir });
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.unlisten = this.db
      .listen(LEADS_CHANNEL, () => this.wake(), {
        lost: (err) => this.log.warn({ err, channel: LEADS_CHANNEL }, 'lost the LISTEN connection for new leads; polling until it is back'),
        restored: (attempts) => this.log.info({ channel: LEADS_CHANNEL, attempts }, 'LISTEN for new leads restored: re-subscribed after the database connection dropped'),
      })
      .catch((err: unknown) => {
        this.log.warn({ err }, 'cannot LISTEN for new leads; polling only');
        return async () => {};
      });
    this.loop = this.run();
  }

  /** Runs a round now (a lead was pushed, a number or call slot freed). */
  wake(): void {
    if (this.wakeUp) this.wakeUp();
    else this.woken = true;
  }

  /**
   * Stops claiming, lets live calls end for up to the grace period, then hangs up the rest
   * (their leads are recorded as errors and retried). Claimed leads not yet dialled are released.
   */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.stopping = true;
    this.wake();
    await this.loop;
    await (await this.unlisten)?.();
    const grace = new Promise<'timeout'>((resolve) => {
      this.timer = setTimeout(() => resolve('timeout'), this.graceMs);
    });
    if ((await Promise.race([Promise.all(this.live).then(() => 'done' as const), grace])) === 'timeout') {
      this.log.warn({ calls: this.live.size }, 'shutdown grace period over: hanging up live calls');
      this.attempts.hangUpAll(new Error('Dialer is shutting down'));
      // Ends the database still refuses (it is down) wait in the journal for the next start.
      this.attempts.close();
      await Promise.all(this.live);
    }
    clearTimeout(this.timer);
    await this.health.idle();
    this.running = false;
  }

  /** One round: recover, claim, start calls. Returns how many leads it claimed. */
  async round(): Promise<number> {
    if (Date.now() - this.lastRecovery >= this.recoverEveryMs) {
      this.lastRecovery = Date.now();
      const recovered = await this.attempts.recover();
      if (recovered.retried + recovered.finished + recovered.journalled > 0) this.log.warn(recovered, 'recovered leads whose worker stopped');
      if (recovered.finished + recovered.journalled > 0) this.afterFinished();
    }
    // Not awaited: a round never delays a claim (it only rests numbers the next claims skip).
    void this.health.maybeRun();
    const free = this.maxCalls - this.callsInProgress;
    if (free <= 0 || this.stopping) return 0;
    const claiming = this.pacer.claimStarted(this.pacedAt);
    const report = await this.db.tx((q) =>
      claimBatch(q, { workerId: this.workerId, limit: Math.min(free, 100), leaseSeconds: this.leaseSeconds, providers: [...this.drivers.keys()], onFinished: this.onFinished,
        stoppedResellers: this.stoppedResellers, rotation: this.rotation, unclogWhenShort: Date.now() - this.lastUnclog >= UNCLOG_EVERY_MS,
        paceLookaheadMs: this.pacer.lookaheadMs(), ...(this.judgedAt ? { judgedAt: this.judgedAt } : {}) }),
    );
    claiming.ended();
    if (report.unclogged) this.lastUnclog = Date.now();
    // A round that admitted no paced start keeps the wake of the last one that did (its campaign
    // is not startable until then, so this round did not see it).
    this.pacedAt = report.wakeAt?.getTime() ?? (this.pacedAt !== undefined && this.pacedAt > Date.now() ? this.pacedAt : undefined);
    this.stats.claimed += report.claimed.length;
    this.stats.finished += report.finished;
    if (report.finished > 0) this.afterFinished();
    for (const claimed of report.claimed) {
      this.callsInProgress++;
      let slotFreed = false;
      // A call's slot is free once the call is over, while its outcome is still being written: the
      // next claim overlaps that write instead of waiting for it.
      const freeSlot = () => {
        if (slotFreed) return;
        slotFreed = true;
        this.callsInProgress--;
        // Claim again once a quarter of the slots are free: claiming slot by slot costs a
        // transaction per lead.
        if (this.maxCalls - this.callsInProgress >= this.refill) this.wake();
      };
      const call = this.carry(claimed, freeSlot).catch((err: unknown) => this.log.error({ err, leadId: claimed.lead.id }, 'call runner failed'));
      const tracked = call.finally(() => {
        this.callsEnded++;
        this.live.delete(tracked);
        freeSlot();
      });
      this.live.add(tracked);
    }
    // Leads moved aside (a queue head that could not be called now) or finished without a dial (a
    // blacklist or a do-not-call list): look again at once, the callable leads may be right behind them.
    this.movedAside = report.deferred > 0 || report.finished > 0;
    return report.claimed.length;
  }

  /** Resolves when no lead is due that this worker could take and no call is live (tests, benches). */
  async drain(): Promise<void> {
    for (;;) {
      const ended = this.callsEnded;
      const claimed = await this.round();
      // A call that ended during the round may have made its lead due again: look once more.
      if (claimed === 0 && !this.movedAside && this.live.size === 0 && this.callsEnded === ended) return await this.health.idle();
      if (claimed === 0 && this.live.size > 0) await Promise.race(this.live);
    }
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      let claimed = 0;
      this.woken = false;
      try {
        claimed = await this.round();
      } catch (err) {
        this.log.error({ err }, 'scheduler round failed');
      }
      if ((claimed > 0 || this.movedAside) && this.callsInProgress < this.maxCalls) continue;
      // stop() may have called wake() while the round ran (nobody was waiting then): do not sleep a poll interval.
      if (this.stopping) break;
      // Nor when a lead was pushed or a call slot freed while the round ran: its claim may not have
      // seen the lead, or had no slot for it. Sleeping would leave it waiting a poll interval.
      if (this.woken && this.callsInProgress < this.maxCalls) continue;
      await new Promise<void>((resolve) => {
        this.wakeUp = resolve;
        this.timer = setTimeout(resolve, this.pacedAt === undefined ? this.pollMs : Math.max(1, Math.min(this.pollMs, this.pacedAt - Date.now())));
      });
      clearTimeout(this.timer);
      this.wakeUp = undefined;
      // Calls that end together (those of one claim) free their slots in the same turn of the
      // event loop: the round waits for the turn's end, so one claim fills all their slots, rather
      // than the first few that woke it now and the rest in another claim.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  /**
   * Carries one claimed lead from pre-checks to its outcome, its lease renewed meanwhile; a lead of a
   * paced campaign is dialled at its slot.
   */
  private async carry(claimed: Claimed, callEnded: () => void): Promise<void> {
    const { lead, configuration, number, attempt: attemptNo } = claimed;
    // The call's logger, made when something is logged (most calls log nothing here, and a child
    // logger per call cost more than the rest of the call's bookkeeping).
    let callId: string | undefined;
    const log = () => this.log.child({ leadId: lead.id, attempt: attemptNo, ...(callId ? { callId } : {}) });
    // Hung up at shutdown past the grace period, or at once if the lease is lost (another worker
    // recovered the lead: its number may be handed out again).
    const hangUp = new AbortController();
    // One trace per attempt, from its pre-checks to its end; its id goes on the lead, the call id on its root span.
    const attempt = this.attempts.begin(
      {
        leadId: lead.id,
        attempt: attemptNo,
        requestId: lead.request_id,
        template: lead.template_name,
        templateId: lead.template_id,
        executionMode: lead.execution_mode,
        provider: number.provider,
      },
      (reason) => hangUp.abort(reason),
    );
    try {
      const checks =
        configuration.pre_checks.length > 0
          ? await runPreChecks(
              configuration.pre_checks,
              { ...lead.payload, lead_id: lead.id, request_id: lead.request_id, template: lead.template_name, attempt_count: attemptNo },
              { fetch: this.outbound.fetch, signal: hangUp.signal, traceParent: attempt.span.context },
            )
          : undefined;
      if (checks && !checks.proceed) {
        attempt.close({ kind: 'pre_check_failed', outcome: 'PRECHECK_FAILED' });
        const meta = { pre_check_results: checks.results, ...(attempt.span.traceId ? { trace_id: attempt.span.traceId } : {}) };
        await this.db.tx((q) => finishUndialled(q, { leadId: lead.id, workerId: this.workerId, attempt: attemptNo, outcome: 'PRECHECK_FAILED', meta, onFinished: this.onFinished }));
        this.stats.finished++;
        this.afterFinished();
        return;
      }
      if (this.stopping) {
        // The attempt is undone (the lead is called later): its trace says so and the lead keeps no id of it.
        attempt.close({ kind: 'released', outcome: 'released' });
        await this.db.tx((q) => releaseClaim(q, { leadId: lead.id, workerId: this.workerId, attempt: attemptNo, ...(checks ? { meta: { pre_check_results: checks.results } } : {}) }));
        this.stats.released++;
        return;
      }
      if (checks) await notePreChecks(this.db, lead.id, checks.results);
      if (claimed.slot) await this.pacer.awaitSlot(claimed.slot);
      const driver = this.drivers.get(number.provider)!;
      this.stats.dialled++;
      dials.inc({ provider: number.provider });
      let callIdWritten: Promise<void> = Promise.resolve();
      const result = await dialSafely(driver, {
        leadId: lead.id,
        attempt: attemptNo,
        to: lead.payload.customer_mobile_number as string,
        from: number.phone_number,
        templateId: lead.template_id,
        payload: lead.payload,
        executionMode: lead.execution_mode,
        resellerId: lead.reseller_id,
        ...callOptions(configuration, lead.payload),
        signal: hangUp.signal,
        traceContext: attempt.span.context,
        // Written as soon as the call is placed (provider callbacks find the lead by it), unless
        // the call is already over by then: its end records the call id anyway.
        onCallId: (id) => {
          callId = id;
          attempt.span.callId(id);
          callIdWritten = new Promise<void>((resolve) => {
            setImmediate(() => {
              if (attempt.over) return resolve();
              recordCallId(this.db, lead.id, this.workerId, attemptNo, id)
                .catch((err: unknown) => log().warn({ err }, 'could not record the call id'))
                .finally(resolve);
            });
          });
        },
      });
      attempt.callOver();
      callEnded();
      countAttempt(number.provider, result);
      await callIdWritten;
      const status = await attempt.finish(result, configuration);
      // The finish gave the call's number back: a claim that found every number taken can go on.
      if (this.callsInProgress < this.maxCalls) this.wake();
      if (status === 'FINISHED') {
        this.stats.finished++;
        this.afterFinished();
      } else if (status === 'RETRY') this.stats.retried++;
      else if (status === undefined) log().error('the attempt ended after its lease was lost; its outcome was not recorded');
    } finally {
      // Closed already unless the runner failed (closing twice changes nothing).
      attempt.close();
    }
  }
}

/**
 * Running an attempt, whatever its transport (a dialled phone call, a browser session, an inbound
 * call): the one home of its trace, its lease and its end. A runner (the scheduler, the WebRTC
 * service, inbound telephony) claims the lead its own way, then `begin`s the attempt here; when the
 * call is over, `finish` closes the trace with the outcome and writes the end, durably (see
 * ends.ts); an attempt that ends without a call (a pre-check said no, the claim was given back)
 * is `close`d. Leases of all the runner's live attempts are renewed together (leases.ts) until
 * their end is written, outages included.
 *
 * Terminology
 * - runner: what carries attempts under one lease holder (`workerId`); inbound calls have none.
 * - end: how the attempt's call ended, with the retry policy it is judged by (a `FinishItem`).
 * - journal: the runner's file of ends not yet written (journal.ts).
 */
import type { FastifyBaseLogger as Logger } from 'fastify';
import type { Db } from '../db/index.js';
import { isDatabaseUnavailable } from '../lib/errors.js';
import { outcomeOf, recoverExpired, type AttemptEnd, type OnFinished, type RetryPolicy } from '../lifecycle/index.js';
import { startCallSpan, type CallSpan, type CallSpanEnd, type CallSpanInfo } from '../tracing/index.js';
import { AttemptEnds, KEPT, type FinishStatus } from './ends.js';
import { EndJournal, forgetOrphans, readOrphans, setAsideOrphans } from './journal.js';
import { Leases, type LiveCall } from './leases.js';

export interface AttemptsOptions {
  db: Db;
  log: Logger;
  /** The lease holder the runner claims under; null: attempts without a lease (inbound calls). */
  workerId: string | null;
  /** The lease on a claimed lead, renewed every third of it until the attempt's end is written. */
  leaseSeconds?: number;
  /** Called in the transaction that finishes a lead (its notifications). */
  onFinished: OnFinished;
  /** Where ends not yet written are kept (see journal.ts); undefined: in memory only. */
  journalDir?: string | undefined;
  /** A first write of an end slower than this is journalled anyway (the database may hang, not refuse). */
  journalAfterMs?: number;
}

export class Attempts {
  private readonly leases: Leases | undefined;
  private readonly ends: AttemptEnds;

  constructor(private readonly options: AttemptsOptions) {
    const { db, log, workerId, leaseSeconds = 30, journalDir } = options;
    this.leases = workerId === null ? undefined : new Leases(db, workerId, leaseSeconds, log);
    this.ends = new AttemptEnds({ db, log, onFinished: options.onFinished, journal: journalDir ? new EndJournal(journalDir) : undefined, journalAfterMs: options.journalAfterMs ?? 1000 });
  }

  /** An attempt of a claimed lead begins: its trace opens; its lease is renewed until its end is written. */
  begin(info: CallSpanInfo, hangUp: (reason: Error) => void): Attempt {
    return new Attempt(this.options.workerId, info, startCallSpan(info), this.leases, this.ends, hangUp, this.options.log);
  }

  /**
   * Recovers the leads whose worker died (their lease expired): the ends journalled on this machine
   * by runners that died first, then `worker_lost` for the rest (see recoverExpired).
   */
  async recover(): Promise<{ retried: number; finished: number; journalled: number }> {
    const { db, log, onFinished, journalDir } = this.options;
    await this.leases?.renewNow();
    const orphans = journalDir ? await readOrphans(journalDir) : { files: [], ends: [] };
    try {
      const recovered = await db.tx((q) => recoverExpired(q, onFinished, orphans.ends));
      await forgetOrphans(orphans.files);
      return recovered;
    } catch (err) {
      if (orphans.ends.length === 0 || isDatabaseUnavailable(err)) throw err;
      log.error({ err, files: orphans.files }, 'could not write the ends journalled by a dead worker: their journals are set aside (.failed)');
      await setAsideOrphans(orphans.files);
      return db.tx((q) => recoverExpired(q, onFinished));
    }
  }

  /** Hangs up every live attempt (shutdown's grace period is over). */
  hangUpAll(reason: Error): void {
    this.leases?.hangUpAll(reason);
  }

  /** Stops writing ends again: those the database still refuses stay journalled for the next recovery. */
  close(): void {
    this.ends.close();
  }
}

export class Attempt {
  readonly span: CallSpan;
  private readonly live: LiveCall;

  constructor(
    private readonly workerId: string | null,
    private readonly info: CallSpanInfo,
    span: CallSpan,
    private readonly leases: Leases | undefined,
    private readonly ends: AttemptEnds,
    hangUp: (reason: Error) => void,
    log: Logger,
  ) {
    this.span = span;
    const live: LiveCall = {
      hangUp,
      ended: false,
      lost() {
        if (live.ended) return;
        log.error({ leadId: info.leadId, attempt: info.attempt }, 'lost the lease of a live attempt: hanging up');
        hangUp(new Error('the lease on this lead was lost'));
      },
    };
    this.live = live;
    leases?.hold(info.leadId, live);
  }

  /** Whether its call is over. */
  get over(): boolean {
    return this.live.ended;
  }

  /**
   * The call is over: its trace closes with the outcome and its end is written (kept until it is:
   * see ends.ts), judged by `policy`. Resolves with where the lead went, undefined when the lead
   * was no longer this attempt's, KEPT when the runner closed before the end could be written.
   */
  async finish(result: AttemptEnd, policy: RetryPolicy | undefined): Promise<FinishStatus | typeof KEPT> {
    this.live.ended = true;
    const { end } = result;
    this.span.end({
      ...(result.callId ? { callId: result.callId } : {}),
      kind: end.kind,
      outcome: outcomeOf(end),
      ...(end.kind !== 'error' && end.durationSeconds !== undefined ? { durationSeconds: end.durationSeconds } : {}),
      ...(end.kind !== 'completed' && end.error ? { error: end.error } : {}),
      ...(end.kind === 'completed' && end.traceScores ? { scores: end.traceScores } : {}),
    });
    // Only what judging the end needs of the policy is kept (and journalled).
    const config = policy && { max_retry: policy.max_retry, retry_offset: policy.retry_offset, retry_policy: policy.retry_policy ?? null };
    try {
      return await this.ends.write({ leadId: this.info.leadId, workerId: this.workerId, attempt: this.info.attempt, config, result, traceId: this.span.traceId });
    } finally {
      this.close();
    }
  }

  /** Marks the call over before its end is known to the runner (a lease lost from now on hangs up nothing). */
  callOver(): void {
    this.live.ended = true;
  }

  /**
   * The attempt is over without a finish (a pre-check said no, its claim was given back, or its
   * runner failed: `how` says which): its trace closes so and its lease is let go. Closing an
   * attempt already finished changes nothing.
   */
  close(how: CallSpanEnd = { kind: 'error', outcome: 'error', error: 'the attempt runner failed' }): void {
    this.live.ended = true;
    this.span.end(how);
    this.leases?.letGo(this.info.leadId, this.live);
  }
}

export { KEPT, type FinishStatus };

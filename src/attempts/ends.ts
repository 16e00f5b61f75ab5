/**
 * Writing an attempt's end, durably. Ends that arrive together are written together (group commit,
 * one transaction for many). An end whose write fails because the database cannot be reached is
 * kept in the journal (on the disk, flushed) and written again, with a backoff, until it is: its
 * runner keeps holding (renewing) the lease meanwhile, so no other worker recovers the lead and
 * calls the customer again. The journal is also written when a first write takes longer than
 * `journalAfterMs` (a database that hangs rather than refuses), so the end survives the process
 * dying during an outage. On the happy path nothing touches the disk: no fsync per call.
 */
import type { FastifyBaseLogger as Logger } from 'fastify';
import type { Db } from '../db/index.js';
import { Batcher } from '../lib/batcher.js';
import { isDatabaseUnavailable, toError } from '../lib/errors.js';
import { finishAttempts, type FinishItem, type OnFinished } from '../lifecycle/index.js';
import type { EndJournal } from './journal.js';

/** Where a finish left its lead; undefined: the lead was no longer this attempt's (its lease was lost). */
export type FinishStatus = 'RETRY' | 'FINISHED' | undefined;

/** The end could not be written before the runner closed: it waits in the journal for the next recovery. */
export const KEPT = 'kept' as const;

/** Writes after a failure: 250 ms, doubling up to 5 s. */
const backoffMs = (tries: number) => Math.min(5000, 250 * 2 ** Math.min(tries, 5));
/** A write that fails for another reason than an unreachable database is tried this often in all. */
const MAX_TRIES_REFUSED = 3;

export class AttemptEnds {
  private readonly batch: Batcher<FinishItem, FinishStatus>;
  private closing = false;
  private readonly sleepers = new Set<() => void>();

  constructor(
    private readonly deps: { db: Db; log: Logger; onFinished: OnFinished; journal: EndJournal | undefined; journalAfterMs: number },
  ) {
    const write = (items: FinishItem[]) => deps.db.tx((q) => finishAttempts(q, items, deps.onFinished));
    this.batch = new Batcher(write, {
      sameTurn: true,
      // One end the database refuses must not fail the others written with it: each alone, then.
      onBatchError: async (items, err) => {
        if (isDatabaseUnavailable(err)) throw err;
        return Promise.all(items.map((item) => write([item]).then(([status]) => status, (e: unknown) => toError(e))));
      },
    });
  }

  /** Writes an end; resolves with where it left the lead once committed, or KEPT when closed first. */
  async write(item: FinishItem): Promise<FinishStatus | typeof KEPT> {
    const { journal, log } = this.deps;
    let kept: Promise<void> | undefined;
    const keep = () =>
      (kept ??= journal
        ? journal.keep(item).catch((err: unknown) => log.error({ err, leadId: item.leadId, file: journal.file }, 'could not journal the end of an attempt: it is kept in memory only'))
        : Promise.resolve());
    const slow = journal ? setTimeout(keep, this.deps.journalAfterMs) : undefined;
    try {
      for (let tries = 0; ; tries++) {
        try {
          const status = await this.batch.submit(tries === 0 ? item : { ...item, late: true });
          if (tries > 0) log.info({ leadId: item.leadId, attempt: item.attempt, tries: tries + 1, status }, 'the end of an attempt is written after the database came back');
          if (kept) await kept.then(() => journal?.drop(item));
          return status;
        } catch (err) {
          const unreachable = isDatabaseUnavailable(err);
          if (!unreachable && tries + 1 >= MAX_TRIES_REFUSED) {
            // Refused for good: the journal must not offer it to recovery either.
            if (kept) await kept.then(() => journal?.drop(item));
            throw err;
          }
          if (unreachable) await keep();
          if (this.closing && unreachable) {
            log.error({ err, leadId: item.leadId, attempt: item.attempt, journal: journal?.file }, 'closing before the end of an attempt could be written: the next recovery writes it from the journal');
            return KEPT;
          }
          if (tries === 0 || tries % 10 === 0) log.warn({ err, leadId: item.leadId, attempt: item.attempt, tries: tries + 1 }, 'could not write the end of an attempt: kept, and written again');
          await this.sleep(backoffMs(tries));
        }
      }
    } finally {
      clearTimeout(slow);
    }
  }

  /** Stops writing again: ends still failing stay in the journal (their writers resolve KEPT). */
  close(): void {
    this.closing = true;
    for (const wake of this.sleepers) wake();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.sleepers.add(wake);
    });
  }
}

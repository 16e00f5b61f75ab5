/**
 * The worker's health rounds: every `everyMs` it measures the outbound numbers and rests those
 * whose answer rate fell far below their pool's (src/lifecycle/number-health.ts), logging each rest.
 * A failed round is logged and tried again at the next one: health never stops a claim.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../db/index.js';
import { DEFAULT_NUMBER_HEALTH, judgeNumbers, type NumberHealthPolicy } from '../lifecycle/index.js';

export interface NumberHealthSettings extends NumberHealthPolicy {
  /** How often a worker measures the numbers (each worker does; a number is rested once). */
  everyMs: number;
}

export const DEFAULT_HEALTH_SETTINGS: NumberHealthSettings = { ...DEFAULT_NUMBER_HEALTH, everyMs: 60_000 };

export class HealthRounds {
  /** The first round comes `everyMs` after the worker starts (its start is busy enough). */
  private last = Date.now();
  private running: Promise<number> | undefined;

  constructor(
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
    private readonly settings: NumberHealthSettings,
  ) {}

  /** Runs a round when one is due (never two at once); returns how many numbers it rested. */
  maybeRun(): Promise<number> {
    if (this.running || Date.now() - this.last < this.settings.everyMs) return Promise.resolve(0);
    this.last = Date.now();
    this.running = this.run().finally(() => (this.running = undefined));
    return this.running;
  }

  /** Waits for a round under way (shutdown: the database is closed after). */
  async idle(): Promise<void> {
    await this.running;
  }

  private async run(): Promise<number> {
    try {
      const rested = await judgeNumbers(this.db, this.settings);
      for (const n of rested) {
        this.log.warn(
          { event: 'number_rested', numberId: n.id, phoneNumber: n.phone_number, provider: n.provider, restedUntil: n.rested_until, calls: n.calls, answered: n.answered, poolCalls: n.pool_calls, poolAnswered: n.pool_answered },
          'outbound number rested: its answer rate fell far below its pool',
        );
      }
      return rested.length;
    } catch (err) {
      this.log.error({ err }, 'number health round failed');
      return 0;
    }
  }
}

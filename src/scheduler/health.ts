/**
 * The worker's health rounds: every `everyMs` it measures the outbound numbers and rests those
 * whose answer rate fell far below their pool's (src/lifecycle/number-health.ts), logging each rest
 * and writing it to the audit trail (action `number_rested`, by the number health job).
 * A failed round is logged and tried again at the next one: health never stops a claim.
 */
import type { FastifyBaseLogger } from 'fastify';
import { AuditService } from '../auth/index.js';
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
  private readonly audit: AuditService;

  constructor(
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
    private readonly settings: NumberHealthSettings,
  ) {
    this.audit = new AuditService(db);
  }

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
      for (const n of rested) {
        await this.audit.record({
          principal_kind: null, principal_id: null, principal_name: 'number health job', role: null, reseller_id: null, merchant_id: null,
          action: 'number_rested', method: 'JOB', route: '/numbers/{id}', resource: 'numbers', resource_id: n.id, status: 200, client_ip: null, request_id: null,
          details: { phone_number: n.phone_number, provider: n.provider, rested_until: n.rested_until, calls: n.calls, answered: n.answered, pool_calls: n.pool_calls, pool_answered: n.pool_answered },
        });
      }
      return rested.length;
    } catch (err) {
      this.log.error({ err }, 'number health round failed');
      return 0;
    }
  }
}

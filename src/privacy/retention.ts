/**
 * Retention by age: each reseller may keep recordings and transcripts of its calls only so many
 * days (`privacy_retention`, PUT /privacy/retention). A job sweeps hourly (and once at start): for
 * each reseller with a retention, the calls that ended before now minus the days lose their
 * recording (the file deleted from local storage and the bucket, then the lead's link) and their
 * transcript; outcome, duration, cost, sentiment and analysis stay. Each sweep that deleted
 * something leaves one audit entry per reseller (`retention`, counts only) and counts in
 * dialer_retention_deleted_total.
 */
import { AuditService, type Principal } from '../auth/index.js';
import type { Db } from '../db/index.js';
import { badRequest, forbidden } from '../lib/errors.js';
import { dropCallContent } from '../lifecycle/index.js';
import type { Logger } from '../lib/logger.js';
import type { RecordingStore } from '../recordings/index.js';
import { retentionDeleted, retentionFailures, retentionLastSweep } from './metrics.js';
import { PrivacyRepository, type RetentionRow } from './repository.js';
import type { RetentionBody } from './schema.js';

const BATCH = 200;

/** Whose retention a request reads or sets: an admin names a reseller; a reseller or merchant has its own. */
function resellerOf(caller: Principal, requested: string | undefined): string {
  if (caller.role === 'admin') {
    if (requested === undefined) throw badRequest('An admin names the reseller: reseller_id', [{ path: '/reseller_id', message: 'is required for an admin' }], 'reseller_required');
    return requested;
  }
  if (requested !== undefined && requested !== caller.resellerId) throw forbidden(`reseller_id ${requested} is outside the scope of this token`, 'out_of_scope');
  return caller.resellerId!;
}

export class RetentionSettings {
  constructor(private readonly db: Db) {}

  async get(caller: Principal, requested: string | undefined): Promise<RetentionRow> {
    const resellerId = resellerOf(caller, requested);
    return (await new PrivacyRepository(this.db).retention(resellerId)) ?? { reseller_id: resellerId, recordings_days: null, transcripts_days: null, updated_at: null };
  }

  async set(caller: Principal, body: RetentionBody): Promise<RetentionRow> {
    if (caller.role === 'merchant' || caller.role === 'user') throw forbidden('Retention is a reseller\'s setting: a merchant reads it');
    const resellerId = resellerOf(caller, body.reseller_id);
    const { rows } = await this.db.query('SELECT 1 FROM resellers WHERE id = $1', [resellerId]);
    if (rows.length === 0) throw badRequest(`reseller_id ${resellerId} is not a known reseller`, [{ path: '/reseller_id', message: 'is not a known reseller' }]);
    return new PrivacyRepository(this.db).setRetention(resellerId, body.recordings_days, body.transcripts_days);
  }
}

export interface RetentionJobOptions {
  db: Db;
  recordings: RecordingStore;
  log: Logger;
  /** How often to sweep (default hourly). */
  everyMs?: number;
}

/** One sweep over every reseller with a retention; returns what it deleted. */
export async function sweepRetention(options: Omit<RetentionJobOptions, 'everyMs'>): Promise<{ recordings: number; transcripts: number }> {
  const repo = new PrivacyRepository(options.db);
  const audit = new AuditService(options.db);
  const total = { recordings: 0, transcripts: 0 };
  for (const r of await repo.retentions()) {
    const done = { recordings: 0, transcripts: 0 };
    const failed: string[] = [];
    for (;;) {
      const batch = await repo.pastRetention(r, BATCH, failed);
      if (batch.length === 0) break;
      const items: { id: string; recording: boolean; transcript: boolean }[] = [];
      for (const lead of batch) {
        let recording = lead.recording;
        if (recording && lead.call_id) {
          try {
            await options.recordings.delete(lead.call_id);
          } catch (err) {
            options.log.warn({ leadId: lead.id, callId: lead.call_id, err }, 'retention: a recording could not be deleted; tried again next sweep');
            retentionFailures.inc();
            failed.push(lead.id);
            recording = false;
          }
        }
        if (recording || lead.transcript) items.push({ id: lead.id, recording, transcript: lead.transcript });
      }
      await dropCallContent(options.db, items);
      done.recordings += items.filter((i) => i.recording).length;
      done.transcripts += items.filter((i) => i.transcript).length;
      if (batch.length < BATCH) break;
    }
    if (done.recordings + done.transcripts > 0) {
      retentionDeleted.inc({ kind: 'recording' }, done.recordings);
      retentionDeleted.inc({ kind: 'transcript' }, done.transcripts);
      await audit.record({
        principal_kind: null, principal_id: null, principal_name: 'retention job', role: null, reseller_id: r.reseller_id, merchant_id: null,
        action: 'retention', method: 'JOB', route: '/privacy/retention', resource: 'privacy', resource_id: r.reseller_id, status: 200,
        client_ip: null, request_id: null,
        details: { recordings_deleted: done.recordings, transcripts_deleted: done.transcripts, recordings_days: r.recordings_days, transcripts_days: r.transcripts_days },
      });
      options.log.info({ resellerId: r.reseller_id, ...done }, 'retention: recordings and transcripts past their days deleted');
    }
    total.recordings += done.recordings;
    total.transcripts += done.transcripts;
  }
  retentionLastSweep.set(Date.now() / 1000);
  return total;
}

/** The hourly retention job (one sweep at a time; several processes may run it: each lead is changed once). */
export class RetentionJob {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(private readonly options: RetentionJobOptions) {}

  start(): void {
    const sweep = () => {
      this.running ??= sweepRetention(this.options)
        .catch((err: unknown) => this.options.log.warn({ err }, 'retention sweep failed'))
        .finally(() => (this.running = undefined));
    };
    sweep();
    this.timer = setInterval(sweep, this.options.everyMs ?? 3_600_000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}

/**
 * WebRTC recordings expire after 7 days (WEBRTC_RECORDING_RETENTION_DAYS). A periodic job
 * deletes the expired files from the recording store and clears the leads' recording_url, noting
 * `recording_expired_at` in their metaData. Phone-call recordings are not touched.
 */
import type { Db } from '../db/index.js';
import type { Logger } from '../lib/logger.js';
import type { RecordingStore } from '../recordings/index.js';
import { forgetRecording } from '../lifecycle/index.js';
import { expiredRecordings } from './repository.js';

export interface RetentionOptions {
  db: Db;
  recordings: RecordingStore;
  log: Logger;
  retentionSeconds: number;
  /** How often to look (default hourly). */
  everyMs?: number;
}

/** One sweep: deletes up to `limit` expired recordings; returns how many leads it cleared. */
export async function expireWebRtcRecordings(options: Omit<RetentionOptions, 'everyMs'>, limit = 500): Promise<number> {
  const rows = await expiredRecordings(options.db, options.retentionSeconds, limit);
  let cleared = 0;
  for (const row of rows) {
    try {
      await options.recordings.delete(row.call_id);
      await forgetRecording(options.db, row.id);
      cleared++;
    } catch (err) {
      options.log.warn({ leadId: row.id, room: row.call_id, err }, 'could not delete an expired webrtc recording');
    }
  }
  return cleared;
}

export class RecordingRetention {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly options: RetentionOptions) {}

  start(): void {
    const sweep = () => {
      this.running ??= expireWebRtcRecordings(this.options)
        .then((n) => {
          if (n > 0) this.options.log.info({ cleared: n }, 'expired webrtc recordings deleted');
        })
        .catch((err: unknown) => this.options.log.warn({ err }, 'webrtc recording retention sweep failed'))
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

/**
 * What privacy reads (a person's leads, attempts, opt-outs and list entries; each reseller's
 * retention and the content past it) and the one table it writes: `privacy_retention`. Leads,
 * opt-outs, live lines and webhook payloads are changed through their owners' doors.
 */
import type { Queryable } from '../db/index.js';
import type { LeadRow } from '../lifecycle/index.js';
import { phoneHashSql } from '../lib/phone-hash.js';

/** A condition over a lead `l`, its parameters numbered from `first`. */
export interface Scoped {
  sql: string;
  params: unknown[];
}

export interface AttemptRow {
  lead_id: string;
  attempt: number;
  status: string;
  outcome: string | null;
  call_id: string | null;
  provider: string | null;
  started_at: Date;
  ended_at: Date | null;
  duration_seconds: number | null;
}

export interface RetentionRow {
  reseller_id: string;
  recordings_days: number | null;
  transcripts_days: number | null;
  updated_at: Date | null;
}

/** Renumbers a scope's `$n` placeholders to start after `offset` parameters. */
export function shifted(scope: Scoped, offset: number): Scoped {
  return { sql: scope.sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`), params: scope.params };
}

export class PrivacyRepository {
  constructor(private readonly q: Queryable) {}

  /** The leads of a number (or the one lead `leadId`) in scope, whole; `lock` takes them FOR UPDATE. */
  async leads(target: { phone: string } | { leadId: string }, scope: Scoped, lock = false): Promise<LeadRow[]> {
    const s = shifted(scope, 1);
    const where = 'phone' in target ? `l.payload->>'customer_mobile_number' = $1` : 'l.id = $1';
    const { rows } = await this.q.query<LeadRow>(
      `SELECT l.* FROM leads l WHERE ${where} AND ${s.sql} ORDER BY l.created_at, l.id${lock ? ' FOR UPDATE' : ''}`,
      ['phone' in target ? target.phone : target.leadId, ...s.params],
    );
    return rows;
  }

  async attempts(leadIds: readonly string[]): Promise<AttemptRow[]> {
    if (leadIds.length === 0) return [];
    const { rows } = await this.q.query<AttemptRow>(
      `SELECT lead_id, attempt, status, outcome, call_id, provider, started_at, ended_at, duration_seconds
       FROM call_attempts WHERE lead_id = ANY($1::text[]) ORDER BY lead_id, attempt`,
      [leadIds],
    );
    return rows;
  }

  /** Blacklist entries of the number (`scope` over an entry `b`). */
  async optOuts(phone: string, scope: Scoped) {
    const s = shifted(scope, 1);
    const { rows } = await this.q.query<{ reseller_id: string | null; lead_id: string | null; reason: string | null; created_at: Date }>(
      `SELECT b.reseller_id, b.lead_id, b.reason, b.created_at FROM blacklist b WHERE b.phone_number = $1 AND ${s.sql} ORDER BY b.created_at`,
      [phone, ...s.params],
    );
    return rows;
  }

  /** The do-not-call lists in scope (`scope` over a list `d`) that hold the number: one index probe per list. */
  async dncLists(phone: string, scope: Scoped) {
    const s = shifted(scope, 1);
    const { rows } = await this.q.query<{ id: string; name: string; source: string | null; version: string | null }>(
      `SELECT d.id, d.name, d.source, d.version FROM dnc_lists d
       WHERE ${s.sql} AND EXISTS (SELECT 1 FROM dnc_numbers n WHERE n.list_id = d.id AND n.phone_number = $1)
       ORDER BY d.name`,
      [phone, ...s.params],
    );
    return rows;
  }

  async phoneHash(phone: string): Promise<string> {
    const { rows } = await this.q.query<{ hash: string }>(`SELECT ${phoneHashSql('$1::text')} AS hash`, [phone]);
    return rows[0]!.hash;
  }

  async retention(resellerId: string): Promise<RetentionRow | undefined> {
    const { rows } = await this.q.query<RetentionRow>('SELECT reseller_id, recordings_days, transcripts_days, updated_at FROM privacy_retention WHERE reseller_id = $1', [resellerId]);
    return rows[0];
  }

  async setRetention(resellerId: string, recordingsDays: number | null, transcriptsDays: number | null): Promise<RetentionRow> {
    const { rows } = await this.q.query<RetentionRow>(
      `INSERT INTO privacy_retention (reseller_id, recordings_days, transcripts_days) VALUES ($1, $2, $3)
       ON CONFLICT (reseller_id) DO UPDATE SET recordings_days = EXCLUDED.recordings_days, transcripts_days = EXCLUDED.transcripts_days, updated_at = now()
       RETURNING reseller_id, recordings_days, transcripts_days, updated_at`,
      [resellerId, recordingsDays, transcriptsDays],
    );
    return rows[0]!;
  }

  /** The resellers with a retention set. */
  async retentions(): Promise<RetentionRow[]> {
    const { rows } = await this.q.query<RetentionRow>(
      'SELECT reseller_id, recordings_days, transcripts_days, updated_at FROM privacy_retention WHERE recordings_days IS NOT NULL OR transcripts_days IS NOT NULL ORDER BY reseller_id',
    );
    return rows;
  }

  /**
   * Up to `limit` leads of a reseller whose recording or transcript is past its retention (calls
   * that ended before now minus the days), not in a call; through the index of recorded content.
   */
  async pastRetention(r: RetentionRow, limit: number, skip: readonly string[]) {
    const { rows } = await this.q.query<{ id: string; call_id: string | null; recording: boolean; transcript: boolean }>(
      `SELECT id, call_id, recording, transcript FROM (
         SELECT id, call_id, call_end_time,
                recording_url IS NOT NULL AND coalesce(call_end_time < now() - make_interval(days => $2::integer), false) AS recording,
                meta_data ? 'transcription' AND coalesce(call_end_time < now() - make_interval(days => $3::integer), false) AS transcript
         FROM leads
         WHERE reseller_id = $1 AND (recording_url IS NOT NULL OR meta_data ? 'transcription')
           AND call_end_time < now() - make_interval(days => least($2::integer, $3::integer))
           AND status <> 'PROCESSING' AND NOT (id = ANY($5::text[]))) c
       WHERE recording OR transcript
       ORDER BY call_end_time
       LIMIT $4`,
      [r.reseller_id, r.recordings_days, r.transcripts_days, limit, skip],
    );
    return rows;
  }
}

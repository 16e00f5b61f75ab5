/**
 * The SQL of WebRTC sessions: finding a lead in the caller's scope, claiming it for a session
 * (the offer is the dial), and the recordings past their retention. Finishing an attempt is the
 * scheduler's own statement (finishAttempts), so a session ends exactly as a phone call does.
 */
import { scopeCondition, type Principal } from '../auth/index.js';
import type { Queryable } from '../db/index.js';
import type { LeadRow } from '../leads/index.js';

export const WEBRTC_MODES = ['WEBRTC', 'WEBRTC_TEST', 'WEBRTC_STREAM'] as const;
export type WebRtcMode = (typeof WEBRTC_MODES)[number];
/** What the lead's `provider` (and its attempt's) says for a browser session. */
export const WEBRTC_PROVIDER = 'WEBRTC';

const SCOPE = { reseller: 'l.reseller_id', merchant: 'l.merchant_id' };

export function isWebRtcMode(mode: string): mode is WebRtcMode {
  return (WEBRTC_MODES as readonly string[]).includes(mode);
}

/** The lead, when it exists and the caller may see it. */
export async function findLeadInScope(q: Queryable, caller: Principal, leadId: string): Promise<LeadRow | undefined> {
  const params: unknown[] = [leadId];
  const { rows } = await q.query<LeadRow>(`SELECT l.* FROM leads l WHERE l.id = $1 AND ${scopeCondition(caller, SCOPE, params)}`, params);
  return rows[0];
}

/**
 * Claims a WebRTC lead for a session, atomically: BACKLOG or RETRY becomes PROCESSING with one more
 * attempt, the room as call_id, and a lease; its attempt row is written. Undefined when the lead is
 * not waiting (already in a session, or finished): a second offer loses here.
 */
export async function claimForSession(
  q: Queryable,
  args: { leadId: string; room: string; workerId: string; leaseSeconds: number },
): Promise<LeadRow | undefined> {
  const { rows } = await q.query<LeadRow>(
    `UPDATE leads SET status = 'PROCESSING', attempt_count = attempt_count + 1, call_initiated_time = now(), call_end_time = NULL,
            call_id = $2, locked_by = $3, locked_until = now() + make_interval(secs => $4), provider = $5, outbound_number_id = NULL,
            next_attempt_at = NULL, updated_at = now()
     WHERE id = $1 AND status IN ('BACKLOG', 'RETRY') AND execution_mode = ANY($6::text[])
     RETURNING *`,
    [args.leadId, args.room, args.workerId, args.leaseSeconds, WEBRTC_PROVIDER, [...WEBRTC_MODES]],
  );
  const lead = rows[0];
  if (!lead) return undefined;
  await q.query(
    `INSERT INTO call_attempts (id, lead_id, attempt, call_id, provider, status, worker_id)
     VALUES (gen_random_uuid()::text, $1, $2, $3, $4, 'IN_PROGRESS', $5)`,
    [lead.id, lead.attempt_count, args.room, WEBRTC_PROVIDER, args.workerId],
  );
  return lead;
}

/** WebRTC recordings whose session ended before `cutoff`, oldest first. */
export async function expiredRecordings(q: Queryable, cutoffSeconds: number, limit: number): Promise<Array<{ id: string; call_id: string }>> {
  const { rows } = await q.query<{ id: string; call_id: string }>(
    `SELECT id, call_id FROM leads
     WHERE execution_mode = ANY($1::text[]) AND recording_url IS NOT NULL AND call_id IS NOT NULL
       AND call_end_time < now() - make_interval(secs => $2)
     ORDER BY call_end_time LIMIT $3`,
    [[...WEBRTC_MODES], cutoffSeconds, limit],
  );
  return rows;
}

/** The recording is gone: the lead no longer points at it, and says when it expired. */
export async function markRecordingExpired(q: Queryable, leadId: string): Promise<void> {
  await q.query(
    `UPDATE leads SET recording_url = NULL, meta_data = meta_data || jsonb_build_object('recording_expired_at', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')),
            updated_at = now()
     WHERE id = $1`,
    [leadId],
  );
}

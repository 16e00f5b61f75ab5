/**
 * The SQL of WebRTC sessions: finding a lead in the caller's scope and the recordings past their
 * retention. Claiming a lead for a session (the offer is the dial) and finishing it are the
 * lifecycle's statements, so a session ends exactly as a phone call does.
 */
import { scopeCondition, type Principal } from '../auth/index.js';
import type { Queryable } from '../db/index.js';
import type { LeadRow } from '../lifecycle/index.js';

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

/** Where a lead's live session is hosted (migration 036), as recorded by its owner. */
export interface SessionOwner {
  room: string;
  owner_url: string;
  worker_id: string;
}

/** Records (or replaces: a row left by a process that died) the process hosting a lead's session. */
export async function recordSessionOwner(q: Queryable, session: { leadId: string; room: string; ownerUrl: string; workerId: string }): Promise<void> {
  await q.query(
    `INSERT INTO webrtc_sessions (lead_id, room, owner_url, worker_id) VALUES ($1, $2, $3, $4)
     ON CONFLICT (lead_id) DO UPDATE SET room = EXCLUDED.room, owner_url = EXCLUDED.owner_url, worker_id = EXCLUDED.worker_id, started_at = now()`,
    [session.leadId, session.room, session.ownerUrl, session.workerId],
  );
}

/** The process hosting the lead's session while the lead is in it (PROCESSING under that owner's lease). */
export async function findSessionOwner(q: Queryable, leadId: string): Promise<SessionOwner | undefined> {
  const { rows } = await q.query<SessionOwner>(
    `SELECT s.room, s.owner_url, s.worker_id FROM webrtc_sessions s JOIN leads l ON l.id = s.lead_id
     WHERE s.lead_id = $1 AND l.status = 'PROCESSING' AND l.locked_by = s.worker_id AND l.call_id = s.room`,
    [leadId],
  );
  return rows[0];
}

/** The session is over: its row goes (only the owner's own). */
export async function forgetSessionOwner(q: Queryable, leadId: string, workerId: string): Promise<void> {
  await q.query('DELETE FROM webrtc_sessions WHERE lead_id = $1 AND worker_id = $2', [leadId, workerId]);
}

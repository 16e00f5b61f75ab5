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

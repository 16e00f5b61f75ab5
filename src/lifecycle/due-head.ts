/**
 * The queue head a claim reads: which due leads come first, by campaign. One statement shape for
 * the claim (locking) and for the look at uncallable leads (not locking).
 */
import { PACE_LOOKAHEAD, startableCampaignsSql } from './campaign-gate.js';
import { FULL_CONFIGURATIONS_SQL } from './configuration-cap.js';
import { CLOSED_TRUNK_CONFIGURATIONS_SQL } from './trunk-gate.js';

/**
 * The execution modes the scheduler dials. WebRTC leads (WEBRTC, WEBRTC_TEST, WEBRTC_STREAM) are
 * never dialled: the browser's offer claims them (claimForSession).
 */
export const PHONE_MODES_SQL = `'TELEPHONY', 'TELEPHONY_TEST'`;

export const HEAD_COLUMNS = `id, reseller_id, merchant_id, template_id, template_name, request_id, execution_mode, payload, is_playground,
  configurations_override, attempt_count, next_attempt_at, campaign_id`;

/**
 * The queue head as CTEs ending in `due_head`: the first `limit` due phone leads in due order,
 * out of the leads without a campaign and the leads of the campaigns that may start calls now
 * (each read through leads_due_campaign_idx, as far as its room goes), leaving out configurations
 * at their cap and SIP configurations whose trunks are all full or paced. A paused, full or paced campaign's leads are not walked at all: a million of them
 * queued cost a claim nothing. `lock`: each part locks what it reads (SKIP LOCKED), so claims at
 * the same moment each take a head of their own. `lookaheadMs`: how far ahead the claim takes paced
 * campaigns' start slots (PACE_LOOKAHEAD).
 */
export function dueHeadSql(columns: string, limit: number, lock: boolean, lookaheadMs: number = PACE_LOOKAHEAD.minMs): string {
  const locking = lock ? 'FOR NO KEY UPDATE SKIP LOCKED' : '';
  const due = `status IN ('BACKLOG', 'RETRY') AND next_attempt_at <= now() AND execution_mode IN (${PHONE_MODES_SQL})
         AND (reseller_id, template_id) NOT IN (SELECT reseller_id, template_id FROM full_configurations)
         AND (reseller_id, template_id) NOT IN (SELECT reseller_id, template_id FROM closed_trunk_configurations)`;
  return `full_configurations AS MATERIALIZED ${FULL_CONFIGURATIONS_SQL},
     closed_trunk_configurations AS MATERIALIZED ${CLOSED_TRUNK_CONFIGURATIONS_SQL},
     startable AS MATERIALIZED (${startableCampaignsSql(limit, lookaheadMs)}),
     free_head AS MATERIALIZED (
       SELECT ${columns} FROM leads
       WHERE campaign_id IS NULL AND ${due}
       ORDER BY next_attempt_at, id
       LIMIT ${limit} ${locking}),
     campaign_head AS MATERIALIZED (
       SELECT l.* FROM startable s CROSS JOIN LATERAL (
         SELECT ${columns} FROM leads
         WHERE campaign_id = s.id AND ${due}
         ORDER BY next_attempt_at, id
         LIMIT s.room ${locking}) AS l),
     due_head AS (
       SELECT * FROM free_head UNION ALL SELECT * FROM campaign_head
       ORDER BY next_attempt_at, id
       LIMIT ${limit})`;
}

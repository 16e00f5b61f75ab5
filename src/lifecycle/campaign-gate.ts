/**
 * Which campaigns' leads a claim may take: the rule of a campaign's dates and state, in SQL, once.
 * A claim reads it with the queue head (leads of other campaigns are passed over, not locked), and
 * the campaign's admission (src/campaigns/admission.ts) reads it again under the campaign's lock,
 * where the cap and the pace are decided exactly.
 */

/** Whether campaign `c` may start calls now: running (not paused or stopped), between its dates. */
export function campaignOpenSql(c: string): string {
  return `(${c}.state = 'active' AND (${c}.start_at IS NULL OR ${c}.start_at <= now()) AND (${c}.end_at IS NULL OR ${c}.end_at > now()))`;
}

/**
 * How far ahead a claim reserves a paced campaign's start slots. A claim takes the slots that fall
 * between now and this far ahead, each for one lead, and the worker dials each lead at its slot:
 * starts are spread evenly at the campaign's rate however long a claim takes, and at 20 calls a
 * second a worker claims four times a second, not twenty. A worker whose claims take longer (a
 * busy database) looks further ahead, up to `maxMs`, so that its claims still cover every slot
 * (a slot more than a step in the past is given up: the grid moves on from now); a slot reserved
 * before a pause is still dialled, so `maxMs` also bounds how long after a pause a start is seen.
 */
export const PACE_LOOKAHEAD = { minMs: 250, maxMs: 750 } as const;

/** A lookahead in whole 50 ms steps within PACE_LOOKAHEAD (few statement texts: each is prepared once). */
export function paceLookaheadMs(wantedMs: number): number {
  const stepped = Math.ceil((Number.isFinite(wantedMs) ? wantedMs : 0) / 50) * 50;
  return Math.min(PACE_LOOKAHEAD.maxMs, Math.max(PACE_LOOKAHEAD.minMs, stepped));
}

/**
 * The first start slot paced campaign `c` may give: its next slot on the grid of 1/rate steps, or
 * now when that is more than one step past (the campaign was idle: no burst to catch up).
 */
export function firstSlotSql(c: string): string {
  return `(CASE WHEN ${c}.next_start_at IS NULL OR ${c}.next_start_at < now() - make_interval(secs => 1.0 / ${c}.max_calls_per_second)
            THEN now() ELSE ${c}.next_start_at END)`;
}

/** How many start slots of paced campaign `c` fall between its first slot and now + the lookahead (0 when none). */
export function paceSlotsSql(c: string, lookaheadMs: number = PACE_LOOKAHEAD.minMs): string {
  return `greatest(0, 1 + floor(extract(epoch FROM now() + make_interval(secs => ${paceLookaheadMs(lookaheadMs) / 1000}) - ${firstSlotSql(c)}) * ${c}.max_calls_per_second))::int`;
}

/**
 * The campaigns that may start calls now, each with how many of its leads a claim of `limit` may
 * lock (\`room\`): open, under their cap of live calls, and with a start slot of their pace within
 * the lookahead. Read without locks: it decides which campaigns' leads are read into the queue
 * head at all (a paused, full or paced campaign's leads are never walked); the admission decides.
 */
export function startableCampaignsSql(limit: number, lookaheadMs: number = PACE_LOOKAHEAD.minMs): string {
  return `SELECT s.id, s.room FROM (
    SELECT c.id, least(${Math.trunc(limit)},
             CASE WHEN c.max_concurrent_calls IS NULL THEN ${Math.trunc(limit)}
                  ELSE c.max_concurrent_calls - (SELECT count(*)::int FROM leads p WHERE p.campaign_id = c.id AND p.status = 'PROCESSING') END,
             CASE WHEN c.max_calls_per_second IS NULL THEN ${Math.trunc(limit)} ELSE ${paceSlotsSql('c', lookaheadMs)} END) AS room
    FROM campaigns c
    WHERE ${campaignOpenSql('c')}
      -- A campaign with nothing due (done, or all its leads waiting for later) is not counted. A
      -- scalar subquery, one index probe per campaign: as EXISTS the planner made it a join over
      -- every due lead.
      AND (SELECT 1 FROM leads d WHERE d.campaign_id = c.id AND d.status IN ('BACKLOG', 'RETRY') AND d.next_attempt_at <= now() LIMIT 1) IS NOT NULL) AS s
  WHERE s.room > 0`;
}

/**
 * Leads in every state a call can be in, for the tests that hold the dashboard's figures to the
 * API. Leads are pushed through POST /leads and aborted through POST /lead/abort; the columns a dial
 * leaves (a claim: one more attempt, the call's start, a lease; a finish: outcome and duration) are
 * written as the lifecycle writes them. The template must have no configuration, so that nothing
 * else dials them.
 *
 * Today:
 *   A, B  never dialled (BACKLOG)                                   not calls
 *   C     live, first attempt (PROCESSING, att 1)                   call, live
 *   D     live again after an answered attempt (PROCESSING, att 2, duration 40 from attempt 1)
 *                                                                   call, live (neither answered nor not)
 *   E     answered: FINISHED confirmed, att 1, 60 s                 call, answered
 *   F     answered by voicemail: FINISHED voicemail, att 1, 20 s     call, answered
 *   G     unanswered: FINISHED no_answer, att 2, 0 s                call
 *   H     unanswered, waiting to retry: RETRY, att 1, 0 s           call (no outcome yet)
 *   I     aborted before any dial (BACKLOG -> aborted)              not a call
 *   J     aborted after an unanswered dial (RETRY -> aborted)       call; "aborted" is not its outcome
 *   K     stopped by a pre-dial check (PRECHECK_FAILED, att 0; its provider stays from the undone claim)
 *                                                                   not a call
 *   P     a playground lead, FINISHED confirmed                     never counted
 * and yesterday Y, answered (FINISHED confirmed, att 1, 30 s).
 *
 * So today: 11 leads, 7 calls (C D E F G H J), 2 live, 5 ended, 2 answered (E F): 40 %.
 */
import assert from 'node:assert/strict';
import type { Queryable } from '../../src/db/index.js';
import type { Client } from './app.js';

export const CALL_STATES = { leadsToday: 11, calls: 7, live: 2, ended: 5, answered: 2, avgDurationSeconds: 20, callsYesterday: 1 } as const;

export async function seedCallStates(db: Queryable, as: Client, args: { resellerId: string; template: string; prefix: string }): Promise<Record<string, string>> {
  const ids: Record<string, string> = {};
  let seq = 0;
  for (const name of ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J', 'K', 'P', 'Y']) {
    const res = await as.post('/leads', {
      request_id: `${args.prefix}-${name}`,
      template: args.template,
      reseller_id: args.resellerId,
      payload: { customer_mobile_number: `+1646555${String(3000 + ++seq).padStart(4, '0')}`, customer_name: name },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    ids[name] = res.body.lead_call_tracker_id as string;
  }
  const dialled = (name: string, s: { status: string; outcome?: string; attempts: number; duration?: number; daysAgo?: number; provider?: string }) =>
    db.query(
      `UPDATE leads SET status = $2, outcome = $3, attempt_count = $4, duration_seconds = $5, provider = $6,
                        call_initiated_time = CASE WHEN $4 > 0 THEN now() - make_interval(days => $7) END,
                        created_at = now() - make_interval(days => $7),
                        locked_by = CASE WHEN $2 = 'PROCESSING' THEN 'another-worker' END,
                        locked_until = CASE WHEN $2 = 'PROCESSING' THEN now() + interval '1 hour' END
       WHERE id = $1`,
      [ids[name], s.status, s.outcome ?? null, s.attempts, s.duration ?? null, s.provider ?? 'PROVIDER_A', s.daysAgo ?? 0],
    );
  const abort = async (name: string) => {
    const res = await as.post('/lead/abort', { leads: [{ lead_id: ids[name], cancellation_reason: 'customer asked' }] });
    assert.equal(res.status, 200);
    assert.equal(res.body.leads[0].status, 'success', JSON.stringify(res.body));
  };
  await dialled('C', { status: 'PROCESSING', attempts: 1 });
  await dialled('D', { status: 'PROCESSING', attempts: 2, duration: 40 });
  await dialled('E', { status: 'FINISHED', outcome: 'confirmed', attempts: 1, duration: 60 });
  await dialled('F', { status: 'FINISHED', outcome: 'voicemail', attempts: 1, duration: 20 });
  await dialled('G', { status: 'FINISHED', outcome: 'no_answer', attempts: 2, duration: 0 });
  await dialled('H', { status: 'RETRY', attempts: 1, duration: 0 });
  await abort('I');
  await dialled('J', { status: 'RETRY', attempts: 1, duration: 0 });
  await abort('J');
  await dialled('K', { status: 'FINISHED', outcome: 'PRECHECK_FAILED', attempts: 0, provider: 'PROVIDER_B' });
  await dialled('P', { status: 'FINISHED', outcome: 'confirmed', attempts: 1, duration: 99 });
  await db.query('UPDATE leads SET is_playground = true WHERE id = $1', [ids.P]);
  await dialled('Y', { status: 'FINISHED', outcome: 'confirmed', attempts: 1, duration: 30, daysAgo: 1 });
  return ids;
}

/**
 * What bench:dispatch and bench:dispatch-alone share: the driver whose calls complete at once, the
 * worker that carries them, the queue of due leads every run starts from, and the floor (the bare SQL of the lead lifecycle on
 * this schema, with nothing decided in between; see docs/dispatch.md).
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import { foldAnalytics } from '../../src/analytics/index.js';
import type { Db } from '../../src/db/index.js';
import { createLogger } from '../../src/lib/logger.js';
import { Scheduler } from '../../src/scheduler/index.js';
import type { CallResult, DialRequest, Driver } from '../../src/telephony/index.js';
import { queueFinishNotifications } from '../../src/webhooks/index.js';

/** A driver whose calls are answered and end the moment they are placed. */
export class InstantDriver implements Driver {
  readonly provider = 'PROVIDER_A';
  readonly label = 'instant';
  async dial(request: DialRequest): Promise<CallResult> {
    return { callId: `CA-${request.leadId}`, end: { kind: 'completed', outcome: 'confirmed', durationSeconds: 30 } };
  }
}

/** A Dialer worker as `dialer serve` runs one, with `slots` call slots and the instant driver. */
export function instantScheduler(db: Db, slots: number): Scheduler {
  return new Scheduler({
    db,
    drivers: new Map([['PROVIDER_A', new InstantDriver()]]),
    log: createLogger('warn'),
    maxConcurrentCalls: slots,
    pollMs: 20,
    recoverEveryMs: 5000,
    // What a finish queues in production: the reporting webhook and the service callback (the
    // benchmarks' leads ask for neither, but the finish still looks).
    onFinished: queueFinishNotifications(undefined),
    // As `dialer serve` runs it: ends that cannot be written are journalled (nothing is written on the happy path).
    journalDir: path.join(os.tmpdir(), `dialer-bench-journal-${process.pid}`),
  });
}

/**
 * `count` due leads of the template, and nothing else in the queue. Every run starts from the same
 * state, whatever ran before it (a Dialer run leaves dead number and attempt rows, and analytics
 * deltas, that a floor run right after it would otherwise pay for): what a serving process folds
 * in the background is folded, and the tables vacuumed.
 */
export async function queueDueLeads(raw: pg.Pool, db: Db, target: { resellerId: string; templateId: string }, count: number): Promise<void> {
  await raw.query('DELETE FROM call_attempts');
  await raw.query('TRUNCATE leads CASCADE');
  await raw.query(
    `INSERT INTO leads (id, reseller_id, template_id, template_name, request_id, payload, next_attempt_at)
     SELECT gen_random_uuid()::text, $1, $2, 'bench', 'd-' || i, jsonb_build_object('customer_mobile_number', '+1646' || (5000000 + i)), now()
     FROM generate_series(1, $3) AS i`,
    [target.resellerId, target.templateId, count],
  );
  while (await foldAnalytics(db).then((round) => round.moved > 0 || round.terms > 0));
  await raw.query('VACUUM ANALYZE leads, call_attempts, outbound_numbers');
}

/**
 * The floor, one loop: batches of `batch` due leads made PROCESSING with a lease and an attempt
 * row, then FINISHED with the attempt closed, until none is due. With `numbers` (a provider), each
 * lead of a claim also takes a free outbound number of it as Dialer's claim takes one (in rotation,
 * IN_USE with its lead, skipping numbers another claim holds), and its finish gives the number
 * back: what the numbers alone cost, with nothing else decided. Its statements are named prepared
 * statements, planned once per connection, as Dialer's hot statements are.
 */
export async function floorLoop(pool: pg.Pool, batch: number, options: { numbers?: string } = {}): Promise<void> {
  const limit = Math.trunc(batch);
  const claim = `WITH c AS (
         UPDATE leads l SET status = 'PROCESSING', attempt_count = l.attempt_count + 1, call_initiated_time = now(),
                locked_by = 'floor', locked_until = now() + interval '60 seconds', next_attempt_at = NULL, updated_at = now()
         WHERE l.id IN (SELECT id FROM leads WHERE status IN ('BACKLOG', 'RETRY') AND next_attempt_at <= now()
                        ORDER BY next_attempt_at, id LIMIT ${limit} FOR UPDATE SKIP LOCKED)
         RETURNING l.id, l.attempt_count),
       a AS (INSERT INTO call_attempts (id, lead_id, attempt, provider, status, worker_id)
             SELECT gen_random_uuid()::text, id, attempt_count, 'PROVIDER_A', 'DIALLING', 'floor' FROM c)`;
  const finish = `WITH l AS (
         UPDATE leads SET status = 'FINISHED', outcome = 'confirmed', call_id = 'CA-' || id, call_end_time = now(), duration_seconds = 30,
                locked_by = NULL, locked_until = NULL, updated_at = now()
         WHERE id = ANY($1::text[]) AND status = 'PROCESSING' RETURNING id)`;
  const closeAttempts = `UPDATE call_attempts SET status = 'ENDED', outcome = 'confirmed', ended_at = now(), duration_seconds = 30
       FROM l WHERE call_attempts.lead_id = l.id`;
  // Where this loop's rotation through the numbers stands; it starts at a random point, as a worker's does.
  let rotation: string = randomUUID();
  for (;;) {
    if (options.numbers === undefined) {
      const { rows } = await pool.query<{ id: string }>({ name: `floor-claim-${limit}`, text: `${claim}\n       SELECT * FROM c` });
      if (rows.length === 0) return;
      await pool.query({ name: 'floor-finish', text: `${finish}\n       ${closeAttempts}`, values: [rows.map((r) => r.id)] });
      continue;
    }
    const { rows } = await pool.query<{ id: string; number_id: string | null; rotation: string | null }>({
      name: `floor-claim-numbers-${limit}`,
      text: `${claim},
       free AS (
         SELECT id, row_number() OVER (ORDER BY part, id) AS rn FROM (
           SELECT id, 0 AS part FROM (
             SELECT id FROM outbound_numbers WHERE provider = $1 AND status = 'AVAILABLE' AND id > $2
             ORDER BY provider, id LIMIT ${limit} FOR UPDATE SKIP LOCKED) AS after_last
           UNION ALL
           SELECT id, 1 AS part FROM (
             SELECT id FROM outbound_numbers WHERE provider = $1 AND status = 'AVAILABLE' AND id <= $2
             ORDER BY provider, id LIMIT ${limit} FOR UPDATE SKIP LOCKED) AS from_first
           LIMIT ${limit}) AS f),
       taken AS (
         UPDATE outbound_numbers n SET status = 'IN_USE', lead_id = c.id, updated_at = now()
         FROM free JOIN (SELECT id, row_number() OVER () AS rn FROM c) AS c USING (rn)
         WHERE n.id = free.id
         RETURNING n.id, n.lead_id)
       SELECT c.id, taken.id AS number_id, (SELECT id FROM free ORDER BY rn DESC LIMIT 1) AS rotation FROM c LEFT JOIN taken ON taken.lead_id = c.id`,
      values: [options.numbers, rotation],
    });
    if (rows.length === 0) return;
    rotation = rows[0]!.rotation ?? rotation;
    await pool.query({
      name: 'floor-finish-numbers',
      text: `${finish},
       a AS (${closeAttempts})
       UPDATE outbound_numbers SET status = 'AVAILABLE', lead_id = NULL, updated_at = now() WHERE id = ANY($2::text[]) AND status = 'IN_USE'`,
      values: [rows.map((r) => r.id), rows.flatMap((r) => (r.number_id ? [r.number_id] : []))],
    });
  }
}

/**
 * The analytics rollup (migration 005) stays exact: after inserts, updates (status, outcome,
 * duration, call time, test flags, merchant), deletes, the scheduler's own finish statement and the
 * demo seeder, and whether or not the trigger's deltas have been folded yet:
 * - every request the rollup may answer gets the same rows from it (source 'rollup', which fails
 *   when the rollup cannot answer) as from the leads (source 'live'), and the default ('auto');
 * - after a fold, the rollup tables hold exactly what a hand-written aggregation of the leads says.
 * Runs on PGlite and PostgreSQL (test/api).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AnalyticsService, foldAnalytics, QUERY_TYPES, type QueryType } from '../../src/analytics/index.js';
import { seedDemoLeads } from '../../src/analytics/demo.js';
import type { Principal } from '../../src/auth/index.js';
import type { Db } from '../../src/db/index.js';
import { finishAttempts } from '../../src/lifecycle/finish.js';
import { ADMIN, insertAnalyticsLeads, M1, prng, R1, seedAnalyticsTenants } from '../helpers/analytics.js';
import { createTestDb } from '../helpers/db.js';

let db: Db;
const live = () => new AnalyticsService(db, { source: 'live' });
const rollup = () => new AnalyticsService(db, { source: 'rollup' });
const auto = () => new AnalyticsService(db);

const random = prng(42);
const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)]!;

const BASE_MS = Date.parse('2024-05-01T00:00:00Z');
let seq = 0;

/** A random lead of any status, some of them tests, some at exact hour boundaries. */
function randomLead() {
  seq++;
  const reseller = random() < 0.8 ? 'r1' : 'r2';
  const merchant = reseller === 'r1' ? pick(['m1', 'm1b', null]) : pick(['m2', null]);
  const template = reseller === 'r1' ? pick(['t1', 't2']) : 't3';
  const status = pick(['BACKLOG', 'PROCESSING', 'RETRY', 'FINISHED', 'FINISHED', 'FINISHED']);
  const attempts = status === 'BACKLOG' ? 0 : pick([0, 1, 1, 2, 3]);
  const at = BASE_MS + Math.floor(random() * 5 * 24) * 3_600_000 + (random() < 0.2 ? 0 : Math.floor(random() * 3_600_000));
  const dialled = attempts > 0;
  return {
    id: `lead-${seq}`,
    reseller,
    merchant,
    template,
    status,
    outcome: status === 'FINISHED' ? pick(['confirmed', 'rescheduled', 'no_answer', 'busy', 'voicemail', 'PRECHECK_FAILED', 'aborted']) : status === 'RETRY' ? pick([null, 'busy']) : null,
    attempts,
    callAt: dialled ? new Date(at).toISOString() : null,
    createdAt: new Date(at - Math.floor(random() * 7_200_000)).toISOString(),
    duration: dialled ? pick([null, 0, 0, 15, 30, 45, 60, 61, 120, 300, Math.floor(random() * 900)]) : null,
    sentiment: dialled ? pick([null, 0, 0.2, 0.39, 0.4, 0.5, 0.6, 0.61, 0.8, 1]) : null,
    provider: dialled ? pick(['PROVIDER_A', 'PROVIDER_B', 'PROVIDER_C', null]) : null,
    playground: random() < 0.05,
    mode: pick(['TELEPHONY', 'TELEPHONY', 'TELEPHONY', 'WEBRTC', 'TELEPHONY_TEST', 'WEBRTC_TEST']),
    payload: { campaign: pick(['spring', 'autumn']) },
  };
}
type Lead = ReturnType<typeof randomLead>;

async function insertLeads(leads: Lead[]): Promise<void> {
  await insertAnalyticsLeads(db, leads.map((l) => ({ ...l, payload: JSON.stringify(l.payload) })));
}

/** Requests over the data: every query type with filters the rollup can take, and some it cannot. */
function requests(): { body: Record<string, any>; rollupCan: boolean }[] {
  const out: { body: Record<string, any>; rollupCan: boolean }[] = [];
  const variants: { extra: Record<string, any>; rollupCan: boolean | 'unzoned' | 'calls' }[] = [
    { extra: {}, rollupCan: true },
    { extra: { filters: { date_from: '2024-05-02', date_to: '2024-05-03' } }, rollupCan: true },
    { extra: { filters: { date_from: '2024-05-02T06:00:00Z', date_to: '2024-05-04' }, granularity: 'hour' }, rollupCan: true },
    { extra: { filters: { template_id: 't1', merchant_id: 'm1' }, granularity: 'week' }, rollupCan: true },
    { extra: { timezone: 'Asia/Tokyo', filters: { date_from: '2024-05-02' } }, rollupCan: true },
    { extra: { timezone: 'Asia/Tokyo', filters: { date_from: '2024-05-02', date_to: '2024-05-02' } }, rollupCan: true },
    { extra: { timezone: 'Europe/London', filters: { date_from: '2024-05-01', date_to: '2024-05-03' }, granularity: 'hour' }, rollupCan: true },
    { extra: { timezone: 'America/New_York', granularity: 'month', by_weekday: true }, rollupCan: true },
    { extra: { timezone: 'Asia/Kolkata', granularity: 'hour' }, rollupCan: 'unzoned' },
    { extra: { timezone: 'Asia/Kolkata', filters: { date_from: '2024-05-02' } }, rollupCan: false },
    { extra: { filters: { date_from: '2024-05-02T06:30:00Z' } }, rollupCan: false },
    { extra: { filters: { date_to: '2024-05-03T10:00:00Z' } }, rollupCan: false },
    { extra: { filters: { min_duration: 1 } }, rollupCan: false },
    { extra: { filters: { sentiment_min: 0.4 } }, rollupCan: false },
    { extra: { filters: { payload_filters: { campaign: 'spring' } } }, rollupCan: false },
    { extra: { page: 2, page_size: 3 }, rollupCan: true },
    // Calls instead of leads: the rollup answers all but provider_breakdown (its rows count leads, dialled or not).
    { extra: { calls_only: true }, rollupCan: 'calls' },
    { extra: { calls_only: true, timezone: 'Europe/London', filters: { date_from: '2024-05-01', date_to: '2024-05-03' }, granularity: 'hour', by_weekday: true }, rollupCan: 'calls' },
  ];
  const zoned = new Set<QueryType>(['calls_over_time', 'avg_duration_over_time', 'hourly_heatmap']);
  for (const query_type of QUERY_TYPES) {
    for (const v of variants) {
      out.push({
        body: { query_type, page_size: 1000, ...v.extra },
        rollupCan: v.rollupCan === 'unzoned' ? !zoned.has(query_type) : v.rollupCan === 'calls' ? query_type !== 'provider_breakdown' : v.rollupCan,
      });
    }
  }
  return out;
}

/**
 * Same answers from the rollup and the leads, for three callers. `minMaxMayWait`: deltas that
 * removed durations are pending, so call_duration may have to come from the leads.
 */
async function assertRollupMatchesLeads(label: string, options: { minMaxMayWait?: boolean } = {}): Promise<number> {
  let answeredByRollup = 0;
  for (const caller of [ADMIN, R1, M1]) {
    for (const { body, rollupCan } of requests()) {
      const what = `${label}: ${caller.role} ${JSON.stringify(body)}`;
      const expected = await live().query(caller, body as any);
      if (rollupCan) {
        try {
          assert.deepEqual(await rollup().query(caller, body as any), expected, what);
          answeredByRollup++;
          // The rollup answered: the default source takes the rollup for this request (its first
          // choice whenever the rollup can answer), the same query on the same data.
          continue;
        } catch (err) {
          const waited = options.minMaxMayWait && body.query_type === 'call_duration' && /cannot answer/.test(String(err));
          if (!waited) throw err;
        }
      }
      assert.deepEqual(await auto().query(caller, body as any), expected, what);
    }
  }
  return answeredByRollup;
}

/** After a fold: the rollup tables hold exactly the aggregation of the live leads, written here by hand. */
async function assertRollupTablesExact(label: string): Promise<void> {
  const pending = await db.query<{ n: number }>('SELECT ((SELECT count(*) FROM lead_stats_delta) + (SELECT count(*) FROM lead_stats_breakdown_delta))::int AS n');
  assert.equal(pending.rows[0]!.n, 0, `${label}: folded`);
  const reached = `(status = 'FINISHED' AND outcome IS NOT NULL AND outcome NOT IN ('no_answer', 'busy', 'failed', 'voicemail', 'PRECHECK_FAILED', 'BLACKLISTED', 'aborted', 'worker_lost', 'error'))`;
  const liveLeads = `SELECT *, coalesce(merchant_id, '') AS m, date_trunc('hour', coalesce(call_initiated_time, created_at) AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS h
                     FROM leads WHERE NOT is_playground AND execution_mode NOT IN ('TELEPHONY_TEST', 'WEBRTC_TEST')`;
  const expectedTotals = await db.query(
    `SELECT reseller_id, m AS merchant_id, template_id, h AS hour, status, count(*)::int AS leads,
            count(*) FILTER (WHERE attempt_count >= 1)::int AS dialled,
            count(*) FILTER (WHERE attempt_count >= 1 AND duration_seconds > 0)::int AS connected,
            count(*) FILTER (WHERE attempt_count >= 1 AND duration_seconds > 0 AND ${reached})::int AS completed,
            count(duration_seconds)::int AS with_duration, coalesce(sum(duration_seconds), 0)::bigint AS duration_sum,
            min(duration_seconds) AS duration_min, max(duration_seconds) AS duration_max,
            count(*) FILTER (WHERE sentiment < 0.4::real)::int AS negative,
            count(*) FILTER (WHERE sentiment >= 0.4::real AND sentiment <= 0.6::real)::int AS neutral,
            count(*) FILTER (WHERE sentiment > 0.6::real)::int AS positive
     FROM (${liveLeads}) AS l GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5`,
  );
  const actualTotals = await db.query(`SELECT * FROM lead_stats ORDER BY reseller_id, merchant_id, template_id, hour, status`);
  assert.deepEqual(actualTotals.rows, expectedTotals.rows, `${label}: lead_stats`);
  const expectedBreakdown = await db.query(
    `SELECT reseller_id, m AS merchant_id, template_id, h AS hour, d.dimension, d.value, count(*)::int AS leads,
            count(*) FILTER (WHERE ${reached})::int AS reached, count(duration_seconds)::int AS with_duration,
            coalesce(sum(duration_seconds), 0)::bigint AS duration_sum
     FROM (${liveLeads}) AS l
     CROSS JOIN LATERAL (VALUES ('outcome', outcome), ('attempts', CASE WHEN status = 'FINISHED' AND attempt_count >= 1 THEN attempt_count::text END),
                                ('provider', provider)) AS d (dimension, value)
     WHERE d.value IS NOT NULL
     GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6`,
  );
  const actualBreakdown = await db.query(`SELECT * FROM lead_stats_breakdown ORDER BY reseller_id, merchant_id, template_id, hour, dimension, value`);
  assert.deepEqual(actualBreakdown.rows, expectedBreakdown.rows, `${label}: lead_stats_breakdown`);
  const expectedDaily = await db.query(
    `SELECT reseller_id, m AS merchant_id, template_id, date_trunc('day', h AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS day, d.dimension, d.value,
            count(*)::int AS leads, count(*) FILTER (WHERE ${reached})::int AS reached, count(duration_seconds)::int AS with_duration,
            coalesce(sum(duration_seconds), 0)::bigint AS duration_sum
     FROM (${liveLeads}) AS l
     CROSS JOIN LATERAL (VALUES ('outcome', outcome), ('attempts', CASE WHEN status = 'FINISHED' AND attempt_count >= 1 THEN attempt_count::text END),
                                ('provider', provider)) AS d (dimension, value)
     WHERE d.value IS NOT NULL
     GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6`,
  );
  const actualDaily = await db.query(`SELECT * FROM lead_stats_breakdown_daily ORDER BY reseller_id, merchant_id, template_id, day, dimension, value`);
  assert.deepEqual(actualDaily.rows, expectedDaily.rows, `${label}: lead_stats_breakdown_daily`);
}

before(async () => {
  db = await createTestDb();
  await seedAnalyticsTenants(db);
});
after(() => db.close());

describe('analytics rollup: exact after every kind of change, folded or not', () => {
  it('inserts (one statement of many leads, and single ones): rollup answers equal the leads before and after folding', async () => {
    await insertLeads(Array.from({ length: 250 }, randomLead));
    for (let i = 0; i < 5; i++) await insertLeads([randomLead()]);
    const answered = await assertRollupMatchesLeads('inserted, not folded');
    // Every request it may take, for each of the three callers (the others went to the leads).
    assert.equal(answered, requests().filter((r) => r.rollupCan).length * 3);
    assert.equal((await foldAnalytics(db)).folded, true);
    await assertRollupTablesExact('inserted');
    await assertRollupMatchesLeads('inserted, folded');
  });

  it('updates: status, outcome, attempts, duration, sentiment, provider, call time, merchant, test flags', async () => {
    await db.query(`UPDATE leads SET status = 'PROCESSING', attempt_count = attempt_count + 1, call_initiated_time = '2024-05-03T12:34:56Z'
                    WHERE status = 'BACKLOG' AND id IN (SELECT id FROM leads WHERE status = 'BACKLOG' ORDER BY id LIMIT 10)`);
    await db.query(`UPDATE leads SET status = 'FINISHED', outcome = 'confirmed', duration_seconds = 2000, sentiment = 0.9
                    WHERE id IN (SELECT id FROM leads WHERE status = 'PROCESSING' ORDER BY id LIMIT 5)`);
    await db.query(`UPDATE leads SET duration_seconds = duration_seconds + 7 WHERE duration_seconds IS NOT NULL AND id LIKE '%3'`);
    await db.query(`UPDATE leads SET outcome = 'rescheduled', provider = 'PROVIDER_B' WHERE outcome = 'busy' AND id LIKE '%7'`);
    await db.query(`UPDATE leads SET merchant_id = NULL WHERE merchant_id = 'm1b' AND id LIKE '%1'`);
    await db.query(`UPDATE leads SET is_playground = NOT is_playground WHERE id LIKE '%5'`);
    await db.query(`UPDATE leads SET execution_mode = 'TELEPHONY' WHERE execution_mode = 'TELEPHONY_TEST' AND id LIKE '%2'`);
    await db.query(`UPDATE leads SET locked_until = now(), meta_data = '{"x": 1}'`); // touches nothing analytics read
    // The largest duration overall shrinks: min/max must follow.
    await db.query(`UPDATE leads SET duration_seconds = 1 WHERE duration_seconds = (SELECT max(duration_seconds) FROM leads)`);
    await assertRollupMatchesLeads('updated, not folded', { minMaxMayWait: true });
    await foldAnalytics(db);
    await assertRollupTablesExact('updated');
    await assertRollupMatchesLeads('updated, folded');
  });

  it('deletes, including the leads holding the minimum and maximum durations', async () => {
    await db.query(`DELETE FROM leads WHERE id LIKE '%9'`);
    await db.query(`DELETE FROM leads WHERE duration_seconds = (SELECT max(duration_seconds) FROM leads WHERE NOT is_playground AND execution_mode IN ('TELEPHONY', 'WEBRTC'))`);
    await db.query(`DELETE FROM leads WHERE duration_seconds = (SELECT min(duration_seconds) FROM leads WHERE NOT is_playground AND execution_mode IN ('TELEPHONY', 'WEBRTC'))`);
    // Unfolded removal of the extremes: the rollup must refuse call_duration rather than answer stale min/max.
    const body = { query_type: 'call_duration' as const };
    await assert.rejects(rollup().query(ADMIN, body), /cannot answer/);
    assert.deepEqual(await auto().query(ADMIN, body), await live().query(ADMIN, body));
    await assertRollupMatchesLeads('deleted, not folded', { minMaxMayWait: true });
    await foldAnalytics(db);
    await assertRollupTablesExact('deleted');
    // Folded: the bucket's min/max were recomputed from the leads, and the rollup answers again.
    assert.deepEqual(await rollup().query(ADMIN, body), await live().query(ADMIN, body));
    await assertRollupMatchesLeads('deleted, folded');
  });

  it('a lead added and removed before any fold leaves nothing behind', async () => {
    const lead = { ...randomLead(), reseller: 'r1', merchant: 'm1', template: 't1', status: 'FINISHED', attempts: 1, duration: 5000, playground: false, mode: 'TELEPHONY' };
    await insertLeads([lead]);
    await db.query(`DELETE FROM leads WHERE id = $1`, [lead.id]);
    await assertRollupMatchesLeads('added and removed, not folded', { minMaxMayWait: true });
    await foldAnalytics(db);
    await assertRollupTablesExact('added and removed');
  });

  it("the scheduler's finish statement (finishAttempts) is counted like any other write", async () => {
    const leads = Array.from({ length: 6 }, () => ({ ...randomLead(), reseller: 'r1', merchant: 'm1', template: 't2', status: 'PROCESSING', attempts: 1, outcome: null, duration: null, sentiment: null, playground: false, mode: 'TELEPHONY' }));
    await insertLeads(leads);
    await db.query(`UPDATE leads SET locked_by = 'w1', locked_until = now() + interval '1 minute' WHERE id = ANY($1::text[])`, [leads.map((l) => l.id)]);
    await foldAnalytics(db);
    const ends = [
      { kind: 'completed', outcome: 'confirmed', durationSeconds: 42, sentiment: 0.7 },
      { kind: 'completed', outcome: 'not_interested', durationSeconds: 3, sentiment: 0.1 },
      { kind: 'no_answer' },
      { kind: 'busy' },
      { kind: 'voicemail', durationSeconds: 20 },
      { kind: 'error', error: 'provider down' },
    ] as const;
    const statuses = await db.tx((q) =>
      finishAttempts(
        q,
        leads.map((l, i) => ({ leadId: l.id, workerId: 'w1', attempt: 1, config: { max_retry: i % 2, retry_offset: 60 }, result: { end: ends[i]! } })),
        async () => {},
      ),
    );
    assert.ok(statuses.every((s) => s !== undefined), 'every lead finished or went to RETRY');
    await assertRollupMatchesLeads('finished by the scheduler, not folded', { minMaxMayWait: true });
    await foldAnalytics(db);
    await assertRollupTablesExact('finished by the scheduler');
  });

  it('the demo seeder: its leads are counted through the same trigger and folded when it ends', async () => {
    const seeded = await seedDemoLeads(db, { leads: 3000, days: 20, seed: 3, batchSize: 400, now: new Date('2024-06-01T00:00:00Z') });
    assert.equal(seeded.written, 3000);
    await assertRollupTablesExact('seeded');
    const reseller: Principal = { ...R1, resellerId: seeded.resellerId };
    for (const query_type of QUERY_TYPES) {
      for (const filters of [{}, { date_from: '2024-05-20', date_to: '2024-05-25' }]) {
        const body = { query_type, filters, page_size: 1000 } as any;
        assert.deepEqual(await rollup().query(reseller, body), await live().query(reseller, body), `${query_type} ${JSON.stringify(filters)}`);
      }
    }
  });

  it('concurrent writers (claims moving leads to the current hour, finishes, in opposite orders) and folders: no deadlock, still exact', async () => {
    if (db.kind !== 'postgres') return; // PGlite runs one statement at a time.
    const leads = Array.from({ length: 40 }, () => ({ ...randomLead(), reseller: 'r1', merchant: 'm1', template: 't1', status: 'BACKLOG', attempts: 0, outcome: null, callAt: null, duration: null, playground: false, mode: 'TELEPHONY' }));
    await insertLeads(leads);
    await foldAnalytics(db);
    const ids = leads.map((l) => l.id);
    // Each transaction claims its own leads one statement at a time (each leaves its push hour's
    // bucket and lands in the current hour's), then finishes them; half the writers go through
    // their leads in ascending order, half descending. Statistics rows updated in place would be
    // locked in different orders here (the deadlock that sank the first design); deltas are appended.
    const writer = (w: number) =>
      db.tx(async (q) => {
        const mine = ids.filter((_, i) => i % 8 === w);
        const order = w % 2 === 0 ? mine : [...mine].reverse();
        for (const id of order) {
          await q.query(`UPDATE leads SET status = 'PROCESSING', attempt_count = attempt_count + 1, call_initiated_time = now() WHERE id = $1`, [id]);
        }
        for (const id of order) {
          await q.query(`UPDATE leads SET status = 'FINISHED', outcome = 'confirmed', duration_seconds = $2 WHERE id = $1`, [id, 10 + w]);
        }
      });
    const folder = async () => {
      for (let i = 0; i < 10; i++) await foldAnalytics(db);
    };
    await Promise.all([...Array.from({ length: 8 }, (_, w) => writer(w)), folder(), folder()]);
    await assertRollupMatchesLeads('after concurrent writers, not folded', { minMaxMayWait: true });
    await foldAnalytics(db);
    await assertRollupTablesExact('after concurrent writers');
  });

  it('random steps (inserts, updates of any fact, deletes, folds in between): the rollup agrees with the leads after each', async () => {
    const steps = [
      async () => insertLeads(Array.from({ length: 1 + Math.floor(random() * 20) }, randomLead)),
      async () => db.query(`UPDATE leads SET duration_seconds = $1 WHERE id IN (SELECT id FROM leads ORDER BY md5(id || $2) LIMIT 5)`, [pick([null, 0, 1, 77, 3000]), String(random())]),
      async () => db.query(`UPDATE leads SET status = $1, outcome = $2 WHERE id IN (SELECT id FROM leads ORDER BY md5(id || $3) LIMIT 5)`, [pick(['RETRY', 'FINISHED', 'PROCESSING']), pick([null, 'confirmed', 'busy']), String(random())]),
      async () => db.query(`UPDATE leads SET call_initiated_time = call_initiated_time + interval '1 hour' * $1, sentiment = $2 WHERE id IN (SELECT id FROM leads ORDER BY md5(id || $3) LIMIT 5)`, [pick([-30, -1, 1, 5]), pick([null, 0.4, 0.6, 0.95]), String(random())]),
      async () => db.query(`UPDATE leads SET is_playground = NOT is_playground WHERE id IN (SELECT id FROM leads ORDER BY md5(id || $1) LIMIT 3)`, [String(random())]),
      async () => db.query(`DELETE FROM leads WHERE id IN (SELECT id FROM leads ORDER BY md5(id || $1) LIMIT 4)`, [String(random())]),
      async () => db.query(`DELETE FROM leads WHERE duration_seconds = (SELECT max(duration_seconds) FROM leads)`),
      async () => foldAnalytics(db),
    ];
    const bodies = QUERY_TYPES.flatMap((query_type) => [
      { query_type, page_size: 1000 },
      { query_type, page_size: 1000, timezone: 'Asia/Tokyo', filters: { date_from: '2024-05-02', date_to: '2024-05-03' } },
    ]);
    for (let step = 0; step < 25; step++) {
      await steps[Math.floor(random() * steps.length)]!();
      for (const body of bodies) {
        const expected = await live().query(R1, body as any);
        assert.deepEqual(await auto().query(R1, body as any), expected, `step ${step}: ${JSON.stringify(body)}`);
      }
    }
    await foldAnalytics(db);
    await assertRollupTablesExact('after random steps');
    await assertRollupMatchesLeads('after random steps, folded');
  });

  it('TRUNCATE of the leads empties the rollup and the payload terms with them, and counting goes on after', async () => {
    await insertLeads(Array.from({ length: 10 }, randomLead)); // some of them unfolded
    await db.query('TRUNCATE leads CASCADE');
    const left = await db.query<{ n: number }>(
      `SELECT ((SELECT count(*) FROM lead_stats) + (SELECT count(*) FROM lead_stats_delta) + (SELECT count(*) FROM lead_stats_breakdown)
             + (SELECT count(*) FROM lead_stats_breakdown_daily) + (SELECT count(*) FROM lead_stats_breakdown_delta) + (SELECT count(*) FROM lead_payload_terms))::int AS n`,
    );
    assert.equal(left.rows[0]!.n, 0);
    await assertRollupMatchesLeads('truncated');
    await insertLeads(Array.from({ length: 15 }, randomLead));
    await assertRollupMatchesLeads('refilled, not folded', { minMaxMayWait: true });
    await foldAnalytics(db);
    await assertRollupTablesExact('refilled');
  });

  it('a fold that finds another folder at work does nothing and waits for no one', async () => {
    if (db.kind !== 'postgres') return; // PGlite has one connection: there is no other folder.
    await db.tx(async (q) => {
      await q.query('SELECT pg_advisory_xact_lock(7230552)');
      assert.deepEqual(await foldAnalytics(db), { folded: false, moved: 0, terms: 0, more: false });
    });
  });
});

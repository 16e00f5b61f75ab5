/**
 * POST /analytics against a small hand-computed data set, written into the
 * leads table with SQL. Reseller R1 has seven live leads (L1-L7) and three test leads that must
 * never count; reseller R2 has two.
 *
 * Activity time (call start, or push time when never dialled), all in May 2024, UTC:
 *   L1 m1  t1 FINISHED confirmed   att 1  05-01 09:15  dur 120  sent 0.8  PROVIDER_A  {campaign: spring, tier: gold}
 *   L2 m1  t1 FINISHED no_answer   att 3  05-01 09:45  dur 0    -         PROVIDER_A  {campaign: spring}
 *   L3 m1b t2 FINISHED confirmed   att 2  05-02 14:00  dur 60   sent 0.5  PROVIDER_B  {campaign: autumn}
 *   L4 m1b t2 FINISHED rescheduled att 1  05-03 23:30  dur 30   sent 0.2  PROVIDER_B  {campaign: spring, tier: silver}
 *   L5 -   t1 RETRY    busy        att 1  05-03 10:00  -        -         PROVIDER_A  {}
 *   L6 m1  t1 BACKLOG  -           att 0  05-05 08:00 (pushed, never dialled)         {campaign: spring}
 *   L7 m1  t2 PROCESSING -         att 1  05-05 12:00  -        -         PROVIDER_C  {}
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, type Client, type TestApp } from '../helpers/app.js';
import { buildWorld, type World } from '../helpers/world.js';

let t: TestApp;
let w: World;
let t1: string;
let t2: string;
let t3: string;

interface LeadSpec {
  reseller: string;
  merchant: string | null;
  template: string;
  status: string;
  outcome?: string;
  attempts: number;
  callAt?: string;
  createdAt?: string;
  duration?: number;
  sentiment?: number;
  provider?: string;
  payload?: Record<string, unknown>;
  playground?: boolean;
  mode?: string;
}

async function insertLead(l: LeadSpec): Promise<string> {
  const id = randomUUID();
  await t.db.query(
    `INSERT INTO leads (id, reseller_id, merchant_id, template_id, template_name, request_id, status, outcome, attempt_count,
                        call_initiated_time, duration_seconds, sentiment, provider, payload, is_playground, execution_mode, created_at)
     VALUES ($1, $2, $3, $4, 'tpl', $5, $6, $7, $8, $9, $10, $11, $12, $13::jsonb, $14, $15, $16)`,
    [
      id,
      l.reseller,
      l.merchant,
      l.template,
      `req-${id}`,
      l.status,
      l.outcome ?? null,
      l.attempts,
      l.callAt ?? null,
      l.duration ?? null,
      l.sentiment ?? null,
      l.provider ?? null,
      JSON.stringify(l.payload ?? {}),
      l.playground ?? false,
      l.mode ?? 'TELEPHONY',
      l.createdAt ?? (l.callAt ? new Date(Date.parse(l.callAt) - 3_600_000).toISOString() : '2024-04-30T00:00:00Z'),
    ],
  );
  return id;
}

async function insertTemplate(resellerId: string): Promise<string> {
  const id = randomUUID();
  await t.db.query(`INSERT INTO templates (id, name, reseller_id, merchant_id, flow) VALUES ($1, $2, $3, NULL, '{}'::jsonb)`, [id, `tpl-${id}`, resellerId]);
  return id;
}

before(async () => {
  t = await buildTestApp();
  w = await buildWorld(t);
  t1 = await insertTemplate(w.r1);
  t2 = await insertTemplate(w.r1);
  t3 = await insertTemplate(w.r2);
  const r1 = w.r1;
  await insertLead({ reseller: r1, merchant: w.m1, template: t1, status: 'FINISHED', outcome: 'confirmed', attempts: 1, callAt: '2024-05-01T09:15:00Z', duration: 120, sentiment: 0.8, provider: 'PROVIDER_A', payload: { campaign: 'spring', tier: 'gold' } });
  await insertLead({ reseller: r1, merchant: w.m1, template: t1, status: 'FINISHED', outcome: 'no_answer', attempts: 3, callAt: '2024-05-01T09:45:00Z', duration: 0, provider: 'PROVIDER_A', payload: { campaign: 'spring' } });
  await insertLead({ reseller: r1, merchant: w.m1b, template: t2, status: 'FINISHED', outcome: 'confirmed', attempts: 2, callAt: '2024-05-02T14:00:00Z', duration: 60, sentiment: 0.5, provider: 'PROVIDER_B', payload: { campaign: 'autumn' } });
  await insertLead({ reseller: r1, merchant: w.m1b, template: t2, status: 'FINISHED', outcome: 'rescheduled', attempts: 1, callAt: '2024-05-03T23:30:00Z', duration: 30, sentiment: 0.2, provider: 'PROVIDER_B', payload: { campaign: 'spring', tier: 'silver' } });
  await insertLead({ reseller: r1, merchant: null, template: t1, status: 'RETRY', outcome: 'busy', attempts: 1, callAt: '2024-05-03T10:00:00Z', provider: 'PROVIDER_A' });
  await insertLead({ reseller: r1, merchant: w.m1, template: t1, status: 'BACKLOG', attempts: 0, createdAt: '2024-05-05T08:00:00Z', payload: { campaign: 'spring' } });
  await insertLead({ reseller: r1, merchant: w.m1, template: t2, status: 'PROCESSING', attempts: 1, callAt: '2024-05-05T12:00:00Z', provider: 'PROVIDER_C' });
  // Test leads: never counted, whatever they hold.
  const test = { reseller: r1, merchant: w.m1, template: t1, status: 'FINISHED', outcome: 'confirmed', attempts: 1, callAt: '2024-05-01T09:00:00Z', duration: 999, sentiment: 0.9, provider: 'PROVIDER_A', payload: { campaign: 'spring' } };
  await insertLead({ ...test, playground: true });
  await insertLead({ ...test, mode: 'TELEPHONY_TEST' });
  await insertLead({ ...test, mode: 'WEBRTC_TEST' });
  await insertLead({ ...test, mode: 'WEBRTC', playground: true });
  // Reseller R2.
  await insertLead({ reseller: w.r2, merchant: w.m2, template: t3, status: 'FINISHED', outcome: 'confirmed', attempts: 1, callAt: '2024-05-01T10:00:00Z', duration: 300, sentiment: 0.9, provider: 'PROVIDER_C', payload: { campaign: 'spring' } });
  await insertLead({ reseller: w.r2, merchant: w.m2, template: t3, status: 'FINISHED', outcome: 'voicemail', attempts: 2, callAt: '2024-05-02T10:00:00Z', duration: 15, sentiment: 0.3, provider: 'PROVIDER_A' });
});
after(() => t.close());

async function ask(c: Client, body: Record<string, unknown>) {
  const res = await c.post('/analytics', body);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.query_type, body.query_type);
  return res.body as { query_type: string; data: any[]; total: number; page: number; page_size: number };
}
const rows = async (c: Client, body: Record<string, unknown>) => (await ask(c, body)).data;
const count = async (c: Client, filters: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) =>
  (await rows(c, { query_type: 'call_count', filters, ...extra }))[0].count as number;

const hours = (filled: Record<number, number>) => Array.from({ length: 24 }, (_, hour) => ({ hour, count: filled[hour] ?? 0 }));

describe('POST /analytics: the twelve query types (reseller R1, no filters)', () => {
  it('call_count counts live leads only', async () => {
    const body = await ask(w.reseller1, { query_type: 'call_count' });
    assert.deepEqual(body, { query_type: 'call_count', data: [{ count: 7 }], total: 1, page: 1, page_size: 50 });
  });

  it('call_duration: avg, min, max, total over leads with a duration', async () => {
    assert.deepEqual(await rows(w.reseller1, { query_type: 'call_duration' }), [{ avg: 52.5, min: 0, max: 120, total: 210 }]);
  });

  it('call_duration with no duration at all: nulls and total 0', async () => {
    assert.deepEqual(await rows(w.reseller1, { query_type: 'call_duration', filters: { payload_filters: { campaign: 'none' } } }), [
      { avg: null, min: null, max: null, total: 0 },
    ]);
  });

  it('outcome_distribution by outcome name', async () => {
    const body = await ask(w.reseller1, { query_type: 'outcome_distribution' });
    assert.deepEqual(body.data, [
      { key: 'busy', count: 1, percentage: 20 },
      { key: 'confirmed', count: 2, percentage: 40 },
      { key: 'no_answer', count: 1, percentage: 20 },
      { key: 'rescheduled', count: 1, percentage: 20 },
    ]);
    assert.equal(body.total, 4);
  });

  it('top_outcomes most frequent first', async () => {
    assert.deepEqual(await rows(w.reseller1, { query_type: 'top_outcomes' }), [
      { key: 'confirmed', count: 2, percentage: 40 },
      { key: 'busy', count: 1, percentage: 20 },
      { key: 'no_answer', count: 1, percentage: 20 },
      { key: 'rescheduled', count: 1, percentage: 20 },
    ]);
  });

  it('status_distribution: all four statuses in lifecycle order', async () => {
    assert.deepEqual(await rows(w.reseller1, { query_type: 'status_distribution' }), [
      { key: 'BACKLOG', count: 1, percentage: 14.29 },
      { key: 'PROCESSING', count: 1, percentage: 14.29 },
      { key: 'RETRY', count: 1, percentage: 14.29 },
      { key: 'FINISHED', count: 4, percentage: 57.14 },
    ]);
  });

  it('sentiment_distribution: negative, neutral, positive', async () => {
    assert.deepEqual(await rows(w.reseller1, { query_type: 'sentiment_distribution' }), [
      { key: 'negative', count: 1, percentage: 33.33 },
      { key: 'neutral', count: 1, percentage: 33.33 },
      { key: 'positive', count: 1, percentage: 33.33 },
    ]);
  });

  it('calls_over_time per day (default granularity), empty days filled with 0', async () => {
    const body = await ask(w.reseller1, { query_type: 'calls_over_time' });
    assert.deepEqual(body.data, [
      { date: '2024-05-01', count: 2 },
      { date: '2024-05-02', count: 1 },
      { date: '2024-05-03', count: 2 },
      { date: '2024-05-04', count: 0 },
      { date: '2024-05-05', count: 2 },
    ]);
    assert.equal(body.total, 5);
  });

  it('avg_duration_over_time per day, 0 for a day without durations', async () => {
    assert.deepEqual(await rows(w.reseller1, { query_type: 'avg_duration_over_time', granularity: 'day' }), [
      { date: '2024-05-01', avg_duration: 60 },
      { date: '2024-05-02', avg_duration: 60 },
      { date: '2024-05-03', avg_duration: 30 },
      { date: '2024-05-04', avg_duration: 0 },
      { date: '2024-05-05', avg_duration: 0 },
    ]);
  });

  it('retry_analysis: finished, dialled leads by attempts, with success rates', async () => {
    assert.deepEqual(await rows(w.reseller1, { query_type: 'retry_analysis' }), [
      { attempts: 1, count: 2, success_rate: 1 },
      { attempts: 2, count: 1, success_rate: 1 },
      { attempts: 3, count: 1, success_rate: 0 },
    ]);
  });

  it('provider_breakdown: busiest first, avg duration null without durations', async () => {
    assert.deepEqual(await rows(w.reseller1, { query_type: 'provider_breakdown' }), [
      { provider: 'PROVIDER_A', count: 3, avg_duration: 60 },
      { provider: 'PROVIDER_B', count: 2, avg_duration: 45 },
      { provider: 'PROVIDER_C', count: 1, avg_duration: null },
    ]);
  });

  it('hourly_heatmap: all 24 hours (UTC)', async () => {
    const body = await ask(w.reseller1, { query_type: 'hourly_heatmap', page_size: 100 });
    assert.deepEqual(body.data, hours({ 8: 1, 9: 2, 10: 1, 12: 1, 14: 1, 23: 1 }));
    assert.equal(body.total, 24);
  });

  it('hourly_heatmap by_weekday: 7 x 24 rows (ISO weekday, Monday = 1)', async () => {
    const body = await ask(w.reseller1, { query_type: 'hourly_heatmap', by_weekday: true, page_size: 1000 });
    assert.equal(body.total, 168);
    const nonZero = body.data.filter((r) => r.count > 0);
    assert.deepEqual(nonZero, [
      { weekday: 3, hour: 9, count: 2 },
      { weekday: 4, hour: 14, count: 1 },
      { weekday: 5, hour: 10, count: 1 },
      { weekday: 5, hour: 23, count: 1 },
      { weekday: 7, hour: 8, count: 1 },
      { weekday: 7, hour: 12, count: 1 },
    ]);
    assert.deepEqual(body.data[0], { weekday: 1, hour: 0, count: 0 });
  });

  it('conversion_funnel: pushed, dialled, connected, completed', async () => {
    assert.deepEqual(await rows(w.reseller1, { query_type: 'conversion_funnel' }), [
      { stage: 'pushed', count: 7 },
      { stage: 'dialled', count: 6 },
      { stage: 'connected', count: 3 },
      { stage: 'completed', count: 3 },
    ]);
  });
});

describe('POST /analytics: granularity and time zone', () => {
  it('hour buckets over a date range, zero-filled', async () => {
    const body = await ask(w.reseller1, {
      query_type: 'calls_over_time',
      granularity: 'hour',
      filters: { date_from: '2024-05-01T09:00:00Z', date_to: '2024-05-01T11:59:59Z' },
    });
    assert.deepEqual(body.data, [
      { date: '2024-05-01T09:00', count: 2 },
      { date: '2024-05-01T10:00', count: 0 },
      { date: '2024-05-01T11:00', count: 0 },
    ]);
  });

  it('week buckets start on Monday, the whole range is filled', async () => {
    assert.deepEqual(
      await rows(w.reseller1, { query_type: 'calls_over_time', granularity: 'week', filters: { date_from: '2024-04-20', date_to: '2024-05-10' } }),
      [
        { date: '2024-04-15', count: 0 },
        { date: '2024-04-22', count: 0 },
        { date: '2024-04-29', count: 7 },
        { date: '2024-05-06', count: 0 },
      ],
    );
  });

  it('month buckets', async () => {
    assert.deepEqual(
      await rows(w.reseller1, { query_type: 'avg_duration_over_time', granularity: 'month', filters: { date_from: '2024-03-15', date_to: '2024-05-31' } }),
      [
        { date: '2024-03-01', avg_duration: 0 },
        { date: '2024-04-01', avg_duration: 0 },
        { date: '2024-05-01', avg_duration: 52.5 },
      ],
    );
    assert.deepEqual(await rows(w.reseller1, { query_type: 'calls_over_time', granularity: 'month' }), [{ date: '2024-05-01', count: 7 }]);
  });

  it('timezone moves buckets to the local wall clock (Asia/Tokyo, +09:00)', async () => {
    assert.deepEqual(await rows(w.reseller1, { query_type: 'calls_over_time', timezone: 'Asia/Tokyo' }), [
      { date: '2024-05-01', count: 2 },
      { date: '2024-05-02', count: 1 },
      { date: '2024-05-03', count: 1 },
      { date: '2024-05-04', count: 1 },
      { date: '2024-05-05', count: 2 },
    ]);
  });

  it('timezone with a half-hour offset in the heatmap (Asia/Kolkata, +05:30)', async () => {
    // 09:15 -> 14:45, 09:45 -> 15:15, 14:00 -> 19:30, 23:30 -> 05:00, 10:00 -> 15:30, 08:00 -> 13:30, 12:00 -> 17:30
    assert.deepEqual(
      await rows(w.reseller1, { query_type: 'hourly_heatmap', timezone: 'Asia/Kolkata', page_size: 24 }),
      hours({ 5: 1, 13: 1, 14: 1, 15: 2, 17: 1, 19: 1 }),
    );
  });

  it('dates without an offset are read in the timezone', async () => {
    // 2024-05-04 in Tokyo starts at 2024-05-03T15:00Z: L4 (05-03 23:30Z), L6, L7.
    assert.equal(await count(w.reseller1, { date_from: '2024-05-04' }, { timezone: 'Asia/Tokyo' }), 3);
    assert.equal(await count(w.reseller1, { date_from: '2024-05-04' }), 2);
  });
});

describe('POST /analytics: filters', () => {
  it('template_id', async () => {
    assert.equal(await count(w.reseller1, { template_id: t2 }), 3);
    assert.deepEqual(await rows(w.reseller1, { query_type: 'top_outcomes', filters: { template_id: t1 } }), [
      { key: 'busy', count: 1, percentage: 33.33 },
      { key: 'confirmed', count: 1, percentage: 33.33 },
      { key: 'no_answer', count: 1, percentage: 33.33 },
    ]);
  });

  it('merchant_id', async () => {
    assert.equal(await count(w.reseller1, { merchant_id: w.m1 }), 4);
    assert.equal(await count(w.reseller1, { merchant_id: w.m1b }), 2);
  });

  it('reseller_id narrows the admin, never widens a reseller', async () => {
    assert.equal(await count(t.admin), 9);
    assert.equal(await count(t.admin, { reseller_id: w.r1 }), 7);
    assert.equal(await count(t.admin, { reseller_id: w.r2 }), 2);
    assert.equal(await count(w.reseller1, { reseller_id: w.r1 }), 7);
    assert.equal(await count(w.reseller1, { reseller_id: w.r2 }), 0);
  });

  it('date_from and date_to as dates (date_to includes its whole day)', async () => {
    assert.equal(await count(w.reseller1, { date_from: '2024-05-02', date_to: '2024-05-03' }), 3);
    assert.equal(await count(w.reseller1, { date_to: '2024-05-01' }), 2);
    assert.equal(await count(w.reseller1, { date_from: '2024-05-05' }), 2);
  });

  it('date_from and date_to as date-times (both inclusive), an equal pair allowed', async () => {
    assert.equal(await count(w.reseller1, { date_from: '2024-05-01T09:30:00Z', date_to: '2024-05-03T10:00:00Z' }), 3);
    assert.equal(await count(w.reseller1, { date_from: '2024-05-01T11:15:00+02:00', date_to: '2024-05-01T11:15:00+02:00' }), 1);
  });

  it('a date range bounds a time series even where there are no leads', async () => {
    assert.deepEqual(await rows(w.reseller1, { query_type: 'calls_over_time', filters: { date_from: '2024-05-04', date_to: '2024-05-06' } }), [
      { date: '2024-05-04', count: 0 },
      { date: '2024-05-05', count: 2 },
      { date: '2024-05-06', count: 0 },
    ]);
  });

  it('min_duration and max_duration (seconds)', async () => {
    assert.equal(await count(w.reseller1, { min_duration: 30 }), 3);
    assert.equal(await count(w.reseller1, { max_duration: 60 }), 3);
    assert.equal(await count(w.reseller1, { min_duration: 1, max_duration: 60 }), 2);
    assert.deepEqual(await rows(w.reseller1, { query_type: 'call_duration', filters: { min_duration: 0, max_duration: 0 } }), [
      { avg: 0, min: 0, max: 0, total: 0 },
    ]);
  });

  it('sentiment_min and sentiment_max (0..1, inclusive)', async () => {
    assert.equal(await count(w.reseller1, { sentiment_min: 0.5 }), 2);
    assert.equal(await count(w.reseller1, { sentiment_max: 0.5 }), 2);
    assert.equal(await count(w.reseller1, { sentiment_min: 0.8, sentiment_max: 0.8 }), 1);
    assert.equal(await count(w.reseller1, { sentiment_min: 0, sentiment_max: 1 }), 3);
  });

  it('payload_filters: every key must match (JSON containment)', async () => {
    assert.equal(await count(w.reseller1, { payload_filters: { campaign: 'spring' } }), 4);
    assert.equal(await count(w.reseller1, { payload_filters: { campaign: 'spring', tier: 'gold' } }), 1);
    assert.equal(await count(w.reseller1, { payload_filters: { tier: 'bronze' } }), 0);
    assert.equal(await count(w.reseller1, { payload_filters: {} }), 7);
    assert.deepEqual(await rows(w.reseller1, { query_type: 'provider_breakdown', filters: { payload_filters: { campaign: 'spring' } } }), [
      { provider: 'PROVIDER_A', count: 2, avg_duration: 60 },
      { provider: 'PROVIDER_B', count: 1, avg_duration: 30 },
    ]);
  });

  it('filters combine (AND)', async () => {
    assert.deepEqual(
      await rows(w.reseller1, {
        query_type: 'conversion_funnel',
        filters: { template_id: t1, merchant_id: w.m1, date_from: '2024-05-01', date_to: '2024-05-05', payload_filters: { campaign: 'spring' } },
      }),
      [
        { stage: 'pushed', count: 3 },
        { stage: 'dialled', count: 2 },
        { stage: 'connected', count: 1 },
        { stage: 'completed', count: 1 },
      ],
    );
  });

  it('pagination: page, page_size, total (also past the end)', async () => {
    const first = await ask(w.reseller1, { query_type: 'outcome_distribution', page: 1, page_size: 2 });
    assert.deepEqual(first, {
      query_type: 'outcome_distribution',
      data: [
        { key: 'busy', count: 1, percentage: 20 },
        { key: 'confirmed', count: 2, percentage: 40 },
      ],
      total: 4,
      page: 1,
      page_size: 2,
    });
    const second = await ask(w.reseller1, { query_type: 'outcome_distribution', page: 2, page_size: 2 });
    assert.deepEqual(second.data.map((r) => r.key), ['no_answer', 'rescheduled']);
    const past = await ask(w.reseller1, { query_type: 'outcome_distribution', page: 3, page_size: 2 });
    assert.deepEqual([past.data, past.total, past.page], [[], 4, 3]);
    const heat = await ask(w.reseller1, { query_type: 'hourly_heatmap', page: 2, page_size: 5 });
    assert.deepEqual(heat.data, [
      { hour: 5, count: 0 },
      { hour: 6, count: 0 },
      { hour: 7, count: 0 },
      { hour: 8, count: 1 },
      { hour: 9, count: 2 },
    ]);
    assert.equal(heat.total, 24);
    const days = await ask(w.reseller1, { query_type: 'calls_over_time', page: 2, page_size: 3 });
    assert.deepEqual(days.data, [
      { date: '2024-05-04', count: 0 },
      { date: '2024-05-05', count: 2 },
    ]);
    assert.equal(days.total, 5);
  });

  it('the lead as it is now: an update or delete shows at once', async () => {
    const id = await insertLead({ reseller: w.r1, merchant: w.m1, template: t1, status: 'BACKLOG', attempts: 0, createdAt: '2024-06-01T00:00:00Z' });
    assert.equal(await count(w.reseller1, { date_from: '2024-06-01' }), 1);
    await t.db.query(`UPDATE leads SET status = 'FINISHED', outcome = 'confirmed', attempt_count = 1, call_initiated_time = '2024-06-02T10:00:00Z', duration_seconds = 10 WHERE id = $1`, [id]);
    assert.deepEqual(await rows(w.reseller1, { query_type: 'calls_over_time', filters: { date_from: '2024-06-01', date_to: '2024-06-02' } }), [
      { date: '2024-06-01', count: 0 },
      { date: '2024-06-02', count: 1 },
    ]);
    await t.db.query(`UPDATE leads SET is_playground = true WHERE id = $1`, [id]);
    assert.equal(await count(w.reseller1, { date_from: '2024-06-01' }), 0);
    await t.db.query(`DELETE FROM leads WHERE id = $1`, [id]);
    assert.equal(await count(w.reseller1), 7);
  });
});

describe('POST /analytics: scope', () => {
  it('resellers see only their own leads', async () => {
    assert.equal(await count(w.reseller2), 2);
    assert.deepEqual(await rows(w.reseller2, { query_type: 'outcome_distribution' }), [
      { key: 'confirmed', count: 1, percentage: 50 },
      { key: 'voicemail', count: 1, percentage: 50 },
    ]);
    assert.deepEqual(await rows(w.reseller2, { query_type: 'call_duration' }), [{ avg: 157.5, min: 15, max: 300, total: 315 }]);
    // Another reseller's template or merchant yields nothing, not its data.
    assert.equal(await count(w.reseller2, { template_id: t1 }), 0);
    assert.equal(await count(w.reseller2, { merchant_id: w.m1 }), 0);
    assert.equal(await count(w.reseller1, { merchant_id: w.m2 }), 0);
  });

  it('merchants and users see only their merchant (not reseller-level leads)', async () => {
    assert.equal(await count(w.merchant1), 4);
    assert.equal(await count(w.user1), 4);
    assert.equal(await count(w.merchant1b), 2);
    assert.equal(await count(w.merchant1, { merchant_id: w.m1b }), 0);
    assert.equal(await count(w.merchant2), 2);
    assert.deepEqual(await rows(w.merchant1, { query_type: 'status_distribution' }), [
      { key: 'BACKLOG', count: 1, percentage: 25 },
      { key: 'PROCESSING', count: 1, percentage: 25 },
      { key: 'RETRY', count: 0, percentage: 0 },
      { key: 'FINISHED', count: 2, percentage: 50 },
    ]);
  });

  it('an empty scope answers zeros, not errors', async () => {
    // A series spans the date range given; a missing bound is taken from the data, here none.
    assert.deepEqual(await rows(w.reseller2, { query_type: 'calls_over_time', filters: { date_from: '2030-01-01' } }), [{ date: '2030-01-01', count: 0 }]);
    assert.deepEqual(await rows(w.reseller2, { query_type: 'calls_over_time', filters: { payload_filters: { campaign: 'none' } } }), []);
    assert.deepEqual(await rows(w.reseller2, { query_type: 'sentiment_distribution', filters: { date_from: '2030-01-01' } }), [
      { key: 'negative', count: 0, percentage: 0 },
      { key: 'neutral', count: 0, percentage: 0 },
      { key: 'positive', count: 0, percentage: 0 },
    ]);
    assert.deepEqual(await rows(w.reseller2, { query_type: 'outcome_distribution', filters: { date_from: '2030-01-01' } }), []);
  });

  it('401 without a token', async () => {
    const res = await t.anon.post('/analytics', { query_type: 'call_count' });
    assert.equal(res.status, 401);
  });
});

describe('POST /analytics: errors', () => {
  const expectStatus = async (status: number, body: unknown) => {
    const res = await w.reseller1.post('/analytics', body);
    assert.equal(res.status, status, `${JSON.stringify(body)} -> ${res.status} ${JSON.stringify(res.body)}`);
    assert.match(String(res.headers['content-type']), /application\/problem\+json/);
    assert.equal(res.body.status, status);
  };

  it('400: unknown or missing query_type', async () => {
    await expectStatus(400, { query_type: 'call_counts' });
    await expectStatus(400, {});
    await expectStatus(400, { query_type: 7 });
  });

  it('400: malformed filters', async () => {
    await expectStatus(400, { query_type: 'call_count', filters: 'all' });
    await expectStatus(400, { query_type: 'call_count', filters: { colour: 'red' } });
    await expectStatus(400, { query_type: 'call_count', filters: { min_duration: 'long' } });
    await expectStatus(400, { query_type: 'call_count', filters: { min_duration: 1.5 } });
    await expectStatus(400, { query_type: 'call_count', filters: { sentiment_min: '0.5' } });
    await expectStatus(400, { query_type: 'call_count', filters: { template_id: 12 } });
    await expectStatus(400, { query_type: 'call_count', filters: { date_from: 'yesterday' } });
    await expectStatus(400, { query_type: 'call_count', filters: { date_to: '2024-02-30' } });
    await expectStatus(400, { query_type: 'call_count', filters: { payload_filters: ['campaign'] } });
    await expectStatus(400, { query_type: 'call_count', filters: { payload_filters: { campaign: { nested: true } } } });
  });

  it('400: bad granularity, timezone, page or page_size', async () => {
    await expectStatus(400, { query_type: 'calls_over_time', granularity: 'year' });
    await expectStatus(400, { query_type: 'calls_over_time', timezone: 'Mars/Olympus_Mons' });
    await expectStatus(400, { query_type: 'calls_over_time', timezone: '+05:30' });
    await expectStatus(400, { query_type: 'call_count', page: 0 });
    await expectStatus(400, { query_type: 'call_count', page_size: 1001 });
  });

  it('422: date_from after date_to', async () => {
    await expectStatus(422, { query_type: 'call_count', filters: { date_from: '2024-05-03', date_to: '2024-05-02' } });
    await expectStatus(422, { query_type: 'call_count', filters: { date_from: '2024-05-02T10:00:01Z', date_to: '2024-05-02T10:00:00Z' } });
  });

  it('422: sentiment outside 0..1', async () => {
    await expectStatus(422, { query_type: 'call_count', filters: { sentiment_min: -0.1 } });
    await expectStatus(422, { query_type: 'call_count', filters: { sentiment_max: 1.5 } });
    await expectStatus(422, { query_type: 'call_count', filters: { sentiment_min: 0.8, sentiment_max: 0.2 } });
  });

  it('422: negative durations, min above max', async () => {
    await expectStatus(422, { query_type: 'call_count', filters: { min_duration: -1 } });
    await expectStatus(422, { query_type: 'call_count', filters: { max_duration: -30 } });
    await expectStatus(422, { query_type: 'call_count', filters: { min_duration: 60, max_duration: 30 } });
  });

  it('422: a time series of more than 100,000 buckets', async () => {
    await expectStatus(422, { query_type: 'calls_over_time', granularity: 'hour', filters: { date_from: '2000-01-01', date_to: '2024-01-01' } });
    // The same range by day is fine; call_count has no buckets.
    assert.equal((await w.reseller1.post('/analytics', { query_type: 'calls_over_time', granularity: 'month', filters: { date_from: '2000-01-01', date_to: '2024-01-01' } })).status, 200);
    assert.equal(await count(w.reseller1, { date_from: '2000-01-01', date_to: '2024-01-01' }), 0);
  });

  it('400 wins when a request is both malformed and out of range', async () => {
    await expectStatus(400, { query_type: 'nope', filters: { min_duration: -1 } });
  });
});

describe('POST /analytics: OpenAPI', () => {
  it('documents the request and every row shape with an example', async () => {
    const res = await t.anon.get('/openapi.json');
    assert.equal(res.status, 200);
    const paths = res.body.paths as Record<string, any>;
    const op = Object.entries(paths).find(([p]) => p.endsWith('/analytics'))?.[1]?.post;
    assert.ok(op, 'POST /analytics is documented');
    const text = JSON.stringify(res.body);
    for (const title of ['CountRow', 'DurationRow', 'ShareRow', 'TimeCountRow', 'TimeAverageRow', 'RetryRow', 'ProviderRow', 'HeatmapRow', 'FunnelRow']) {
      assert.ok(text.includes(title), `${title} documented`);
    }
  });
});

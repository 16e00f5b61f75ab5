/**
 * One definition of a call (a dialled attempt) across the overview, its chart and the analytics
 * page, over leads in every state (test/helpers/call-states.ts): today 11 leads, 7 calls, 2 live,
 * 5 ended, 2 answered.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CALLS, dayFigures, dayRequests, nothingIn } from '../../web/src/lib/figures.js';
import { buildTestApp, type Client, type TestApp } from '../helpers/app.js';
import { CALL_STATES, seedCallStates } from '../helpers/call-states.js';
import { buildWorld, type World } from '../helpers/world.js';

let t: TestApp;
let w: World;
const DAY_MS = 86_400_000;
const utcDate = (at: number) => new Date(at).toISOString().slice(0, 10);
let today: string;
let yesterday: string;

async function ask(c: Client, body: Record<string, unknown>) {
  const res = await c.post('/analytics', body);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data as any[];
}

before(async () => {
  t = await buildTestApp();
  w = await buildWorld(t);
  const template = 'calls-reminder';
  const res = await w.reseller1.post('/templates', { name: template, reseller_id: w.r1, flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hello' }] }] } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  await seedCallStates(t.db, w.reseller1, { resellerId: w.r1, template, prefix: 'calls' });
  const now = Date.now();
  today = utcDate(now);
  yesterday = utcDate(now - DAY_MS);
});
after(() => t?.close());

/** The overview's figures, asked as the page asks them. */
async function overviewFigures(c: Client) {
  const r = dayRequests(today, 'UTC');
  const [calls, statuses, connected, duration] = await Promise.all([ask(c, r.calls), ask(c, r.statuses), ask(c, r.connected), ask(c, r.duration)]);
  return dayFigures({ calls, statuses, connected, duration });
}

/** The overview's chart (calls per day, the last 7 days) as the page asks it. */
const chart = (c: Client) => ask(c, { query_type: 'calls_over_time', granularity: 'day', timezone: 'UTC', ...CALLS, filters: { date_from: utcDate(Date.now() - 6 * DAY_MS), date_to: today }, page_size: 100 });

/** A card of the analytics page over today, as the page asks it. */
const card = (c: Client, query_type: string, extra: Record<string, unknown> = {}) =>
  ask(c, { query_type, filters: { date_from: today, date_to: today }, timezone: 'UTC', page_size: 1000, ...CALLS, ...extra });

describe('a call is a dialled attempt, on the overview, its chart and the analytics page', () => {
  it("the overview's figures: 7 calls, 2 live, 2 of 5 ended calls answered (40 %)", async () => {
    const f = await overviewFigures(w.reseller1);
    const { calls, live, ended, answered, avgDurationSeconds } = CALL_STATES;
    // The average is over the calls with a duration (a live call keeps its earlier attempt's): (40 + 60 + 20 + 0 + 0 + 0) / 6.
    assert.deepEqual(f, { calls, live, ended, answered, answerRate: 0.4, avgDurationSeconds });
    // GET /overview's live calls are the same two.
    assert.equal((await w.reseller1.get('/overview?timezone=UTC')).body.live_calls, 2);
  });

  it("the chart's today bucket is 'Calls today'; yesterday holds yesterday's call", async () => {
    const rows = await chart(w.reseller1);
    assert.equal(rows.length, 7);
    assert.deepEqual(rows.at(-1), { date: today, count: 7 });
    assert.deepEqual(rows.at(-2), { date: yesterday, count: 1 });
    assert.equal(rows.slice(0, -2).reduce((s, r) => s + r.count, 0), 0);
  });

  it('the analytics page counts the same calls; outcomes are call outcomes only; statuses and the funnel count leads', async () => {
    const f = await overviewFigures(w.reseller1);
    assert.deepEqual(await card(w.reseller1, 'call_count'), [{ count: f.calls }]);
    assert.deepEqual(await card(w.reseller1, 'calls_over_time'), [{ date: today, count: f.calls }]);
    const heat = await card(w.reseller1, 'hourly_heatmap', { by_weekday: true });
    assert.equal(heat.reduce((s, r) => s + r.count, 0), f.calls);
    // No aborted, no PRECHECK_FAILED: H (waiting to retry) and J (aborted after its dial) have no call outcome.
    assert.deepEqual(await card(w.reseller1, 'outcome_distribution'), [
      { key: 'confirmed', count: 1, percentage: 33.33 },
      { key: 'no_answer', count: 1, percentage: 33.33 },
      { key: 'voicemail', count: 1, percentage: 33.33 },
    ]);
    assert.deepEqual(
      (await card(w.reseller1, 'top_outcomes')).map((r) => r.key),
      ['confirmed', 'no_answer', 'voicemail'],
    );
    // K's provider stayed from its undone claim: it is not a call of that provider.
    assert.deepEqual(await card(w.reseller1, 'provider_breakdown'), [{ provider: 'PROVIDER_A', count: 7, avg_duration: 20 }]);
    assert.deepEqual(await card(w.reseller1, 'status_distribution'), [
      { key: 'BACKLOG', count: 2, percentage: 18.18 },
      { key: 'PROCESSING', count: 2, percentage: 18.18 },
      { key: 'RETRY', count: 1, percentage: 9.09 },
      { key: 'FINISHED', count: 6, percentage: 54.55 },
    ]);
    // The funnel's "dialled" stage is the calls; "pushed" counts every lead.
    const funnel = await card(w.reseller1, 'conversion_funnel');
    assert.deepEqual(funnel.map((r) => [r.stage, r.count]), [['pushed', 11], ['dialled', f.calls], ['connected', 3], ['completed', 1]]);
    // Every call is live or ended; every call outcome belongs to an ended call.
    const outcomes = await card(w.reseller1, 'outcome_distribution');
    assert.ok(outcomes.reduce((s, r) => s + r.count, 0) <= f.ended);
    assert.equal(f.live + f.ended, f.calls);
  });

  it("a merchant's scope counts its own calls only (none here): every figure and chart is empty", async () => {
    const f = await overviewFigures(w.merchant1);
    assert.deepEqual(f, { calls: 0, live: 0, ended: 0, answered: 0, answerRate: null, avgDurationSeconds: null });
    assert.ok(nothingIn(await chart(w.merchant1)), 'the chart has nothing to draw');
    assert.deepEqual(await card(w.merchant1, 'outcome_distribution'), []);
  });

  it('without calls_only the interface answers as it always has: leads, by activity time', async () => {
    const plain = (query_type: string) => ask(w.reseller1, { query_type, filters: { date_from: today }, timezone: 'UTC' });
    assert.deepEqual(await plain('call_count'), [{ count: 11 }]);
    assert.equal((await plain('calls_over_time'))[0].count, 11);
    assert.deepEqual(
      (await plain('outcome_distribution')).map((r) => [r.key, r.count]),
      [['PRECHECK_FAILED', 1], ['aborted', 2], ['confirmed', 1], ['no_answer', 1], ['voicemail', 1]],
    );
    assert.deepEqual((await plain('provider_breakdown')).map((r) => [r.provider, r.count]), [['PROVIDER_A', 7], ['PROVIDER_B', 1]]);
  });

  it('calls_only must be a boolean (400)', async () => {
    const res = await w.reseller1.post('/analytics', { query_type: 'call_count', calls_only: 'yes' });
    assert.equal(res.status, 400);
  });
});

/**
 * What the overview and the analytics screen count, in the real Chromium against `dialer serve`:
 * on an empty database every chart says it has nothing to draw (no flat zeros, no ring of equal
 * slices); then, with leads in every state (test/helpers/call-states.ts), the overview's figures,
 * its chart's today bar and the analytics screen's "Calls" are the calls the API counts with
 * `calls_only`, and an answer rate that leaves the live calls out. Screens are saved in
 * test/screenshots/ (calls-*).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { API_PREFIX } from '../../src/app.js';
import type { RunningServer } from '../../src/server.js';
import { dayFigures, dayRequests } from '../../web/src/lib/figures.js';
import type { Client } from '../helpers/app.js';
import { chromiumAvailable } from '../helpers/browser.js';
import { CALL_STATES, seedCallStates } from '../helpers/call-states.js';
import { ADMIN, type DashboardServed, logIn, newContext, serveDashboard, shoot, watchProblems } from '../helpers/dashboard.js';

const { email: EMAIL, password: PASSWORD } = ADMIN;
const skip = chromiumAvailable() ? false : 'Chromium is not installed (apt-get install chromium)';

let server: RunningServer;
let admin: Client;
let browser: Browser;
let ui: DashboardServed;
const problems: string[] = [];

const adminPage = (at: string): Promise<Page> => ui.adminPage(at, problems);

/** Today in UTC, the browser context's time zone. */
const today = () => new Date().toISOString().slice(0, 10);

before(async () => {
  if (skip) return;
  ui = await serveDashboard('calls', {
    LLM_API_KEY: '',
    OPENAI_API_KEY: '',
    LLM_BASE_URL: '',
  });
  ({ server, admin, browser } = ui);
});

after(async () => {
  await ui?.close();
});

describe('the dashboard counts calls', { skip, timeout: 600_000 }, () => {
  it('on an empty database the overview and every analytics chart say there is nothing to draw', async () => {
    const page = await adminPage('/');
    await page.locator('#chart-calls-empty', { hasText: 'No calls in the last 7 days.' }).waitFor();
    await page.locator('#chart-outcomes-empty', { hasText: 'No call ended with an outcome in the last 7 days.' }).waitFor();
    assert.equal(await page.locator('#chart-calls, #chart-outcomes').count(), 0, 'no chart is drawn');
    await page.locator('#answer-rate .stat-hint', { hasText: 'no call has ended yet' }).waitFor();
    assert.equal(await page.locator('#calls-today .stat-value').innerText(), '0');
    assert.equal(await page.locator('#answer-rate .stat-value').innerText(), '—');
    await shoot(page, 'calls-overview-empty');

    await page.goto(`${server.url}${API_PREFIX}/app/analytics`);
    const charts = ['call_duration', 'outcome_distribution', 'sentiment_distribution', 'status_distribution', 'calls_over_time', 'avg_duration_over_time', 'top_outcomes', 'retry_analysis', 'provider_breakdown', 'hourly_heatmap', 'conversion_funnel'];
    for (const type of charts) await page.locator(`#q-${type} .chart-empty`).waitFor();
    assert.equal(await page.locator('.analytics-card canvas').count(), 0, 'no chart is drawn');
    assert.equal(await page.locator('#q-sentiment_distribution .chart-empty').innerText(), 'No call with a sentiment matches the filters.');
    assert.equal(await page.locator('#q-calls_over_time .chart-empty').innerText(), 'No call matches the filters.');
    assert.equal(await page.locator('#q-call_count .figure-value').innerText(), '0');
    await shoot(page, 'calls-analytics-empty');
    await page.context().close();
  });

  it('with leads in every state: the figures, the chart and the analytics screen count the same calls', async () => {
    const reseller = await admin.post('/resellers', { name: 'Calls Reseller' });
    assert.equal(reseller.status, 200, JSON.stringify(reseller.body));
    const template = 'calls-reminder';
    const tpl = await admin.post('/templates', { name: template, reseller_id: reseller.body.id, flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hello' }] }] } });
    assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
    await seedCallStates(server.db, admin, { resellerId: reseller.body.id, template, prefix: 'e2e' });

    // The API's answers to the overview's questions.
    const r = dayRequests(today(), 'UTC');
    const data = async (body: object) => (await admin.post('/analytics', body)).body.data;
    const f = dayFigures({ calls: await data(r.calls), statuses: await data(r.statuses), connected: await data(r.connected), duration: await data(r.duration) });
    assert.deepEqual(f, { calls: CALL_STATES.calls, live: CALL_STATES.live, ended: CALL_STATES.ended, answered: CALL_STATES.answered, answerRate: 0.4, avgDurationSeconds: CALL_STATES.avgDurationSeconds });

    const page = await (await newContext(browser)).newPage();
    watchProblems(page, problems);
    // What the overview's chart was drawn from: the page's own calls_over_time answers.
    const series: { date: string; count: number }[][] = [];
    page.on('response', async (res) => {
      if (!res.url().endsWith('/analytics') || res.request().method() !== 'POST') return;
      if (JSON.parse(res.request().postData() ?? '{}').query_type !== 'calls_over_time') return;
      series.push((await res.json()).data);
    });
    await logIn(page, server.url, EMAIL, PASSWORD, '/');
    await page.locator('#chart-calls[data-ready="true"]').waitFor();
    await page.locator('#calls-today .stat-value', { hasText: /^7$/ }).waitFor();
    // Live calls come from their own request: shown as a dash until it answers.
    await page.locator('#live-calls .stat-value', { hasText: /^\d+$/ }).waitFor();
    const stat = (id: string, part = 'value') => page.locator(`#${id} .stat-${part}`).innerText();
    assert.equal(await stat('calls-today'), String(f.calls));
    assert.equal(await stat('calls-today', 'hint'), `dialled since midnight, ${f.live} live`);
    assert.equal(await stat('answer-rate'), '40.0 %', 'one live call is not an unanswered one');
    assert.equal(await stat('answer-rate', 'hint'), `${f.answered} of ${f.ended} ended calls answered`);
    assert.equal(await stat('avg-duration'), '20 s');
    assert.equal(await stat('live-calls'), String((await admin.get('/overview?timezone=UTC')).body.live_calls));
    // The chart's today bar: the same calls as "Calls today", a bar for yesterday's call.
    const drawn = series.at(-1)!;
    assert.equal(drawn.length, 7);
    assert.deepEqual(drawn.at(-1), { date: today(), count: f.calls });
    assert.equal(drawn.at(-2)!.count, CALL_STATES.callsYesterday);
    await page.locator('#chart-outcomes[data-ready="true"]').waitFor();
    await shoot(page, 'calls-overview');

    await page.goto(`${server.url}${API_PREFIX}/app/analytics`);
    await page.locator('#q-call_count .figure-value').waitFor();
    // The analytics screen's default range is the last 30 days: today's 7 calls and yesterday's one.
    await page.locator('#q-call_count .figure-value', { hasText: new RegExp(`^${f.calls + CALL_STATES.callsYesterday}$`) }).waitFor();
    await page.locator('#q-top_outcomes').getByRole('button', { name: 'Table' }).click();
    const keys = await page.locator('#q-top_outcomes tbody tr td:first-child').allInnerTexts();
    assert.deepEqual(keys.sort(), ['confirmed', 'no_answer', 'voicemail'], 'no aborted, no PRECHECK_FAILED among call outcomes');
    await page.locator('#q-calls_over_time canvas').waitFor();
    await shoot(page, 'calls-analytics');
    await page.context().close();
    assert.deepEqual(problems, []);
  });
});

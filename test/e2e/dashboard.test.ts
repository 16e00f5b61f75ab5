/**
 * The dashboard end to end in the real Chromium, against `dialer serve` with its sandbox line:
 * logging in and the overview's figures; a CSV import of 1,000 rows; a sandbox call started from
 * the page, followed to its transcript and recording; editing a template; what a merchant sees;
 * an expired session; every analytics chart on `dialer demo seed` data; and every other screen.
 * Each screen is saved at 1280 px and at phone width in test/screenshots/.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import type { Browser, Page } from 'playwright-core';
import { API_PREFIX } from '../../src/app.js';
import { seedDemoLeads } from '../../src/analytics/demo.js';
import { CALLS, dayFigures, dayRequests } from '../../web/src/lib/figures.js';
import type { RunningServer } from '../../src/server.js';
import type { Client } from '../helpers/app.js';
import { client } from '../helpers/app.js';
import { chromiumAvailable } from '../helpers/browser.js';
import { launchDashboardBrowser, logIn, newContext, shoot, watchProblems } from '../helpers/dashboard.js';
import { freePort } from '../helpers/net.js';
import { serveDialer } from '../helpers/serve.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

const EMAIL = 'admin@example.com';
const PASSWORD = 'admin-password-1';
const JWT_SECRET = 'dashboard-e2e-secret-dashboard-e2e-secret';
const skip = chromiumAvailable() ? false : 'Chromium is not installed (apt-get install chromium)';

let server: RunningServer;
let admin: Client;
let browser: Browser;
let dataDir: string;
let base: string;
let reseller: string;
let merchantA: string;
let merchantB: string;
let templateName: string;
/** Where the calls' traces are exported (so a lead has a trace id for the page to link). */
let traces: Receiver;
/** CSP refusals and page errors of every page, checked at the end. */
const problems: string[] = [];

async function adminPage(at = '/'): Promise<Page> {
  const page = await (await newContext(browser)).newPage();
  watchProblems(page, problems);
  await logIn(page, base, EMAIL, PASSWORD, at);
  return page;
}

const url = (p: string) => `${base}${API_PREFIX}/app${p}`;

before(async () => {
  if (skip) return;
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-dashboard-'));
  const port = await freePort();
  traces = await startReceiver({});
  ({ server, admin } = await serveDialer({
    PORT: String(port),
    HOST: '127.0.0.1',
    DIALER_DATA_DIR: dataDir,
    DIALER_JWT_SECRET: JWT_SECRET,
    DIALER_ADMIN_EMAIL: EMAIL,
    DIALER_ADMIN_PASSWORD: PASSWORD,
    DIALER_POLL_MS: '100',
    DIALER_SANDBOX: 'true',
    DIALER_TRACE_URL_TEMPLATE: 'https://traces.example.com/trace/{trace_id}',
    OTEL_EXPORTER_OTLP_ENDPOINT: traces.url,
    LOG_LEVEL: 'silent',
    LLM_API_KEY: '',
    OPENAI_API_KEY: '',
    LLM_BASE_URL: '',
  }));
  base = server.url;
  // `dialer demo seed`'s data: finished leads over 30 days, for the overview and the analytics.
  // Its days end with today (the overview's figures have something to count).
  const seeded = await seedDemoLeads(server.db, { leads: 1500, days: 30, seed: 7, now: new Date(Date.now() + 86_400_000) });
  reseller = seeded.resellerId;
  const merchants = (await admin.get('/merchants?page_size=100')).body.data.filter((m: any) => m.reseller_id === reseller);
  [merchantA, merchantB] = [merchants[0].id, merchants[1].id];
  templateName = 'Appointment reminder';
  const tpl = await admin.post('/templates', {
    name: templateName,
    reseller_id: reseller,
    flow: {
      initial_node: 'greet',
      nodes: [
        {
          node_name: 'greet',
          task_messages: [{ role: 'system', content: 'Remind {customer_name} of the appointment.' }],
          functions: [{ name: 'confirm', properties: {}, required: [], transition_to: 'goodbye' }],
        },
        { node_name: 'goodbye', task_messages: [{ role: 'system', content: 'Say goodbye.' }], pre_actions: [{ type: 'end_conversation', outcome: 'confirmed' }] },
      ],
    },
  });
  assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
  browser = await launchDashboardBrowser();
  // The first request waits for the bundle (compiled on start); on a loaded machine that can take
  // longer than a page navigation is given.
  const warm = await fetch(`${base}${API_PREFIX}/app/login`, { signal: AbortSignal.timeout(300_000) });
  assert.equal(warm.status, 200);
});

after(async () => {
  await browser?.close();
  await server?.close();
  await traces?.close();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('the dashboard in Chromium', { skip, timeout: 600_000 }, () => {
  it('logs in; the overview shows the figures the API gives; its first screen is under 300 kB of gzipped JavaScript', async () => {
    const page = await (await newContext(browser)).newPage();
    watchProblems(page, problems);
    const scripts = new Map<string, number>();
    page.on('response', async (res) => {
      if (!/\/app\/assets\/.*\.js$/.test(res.url())) return;
      scripts.set(res.url(), Number((await res.allHeaders())['content-length'] ?? (await res.body()).length));
    });
    await page.goto(`${base}/`);
    // Not logged in: to the login page, remembering where the person was going.
    await page.waitForURL(/\/app\/login\?next=/);
    await shoot(page, 'login');
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill('wrong-password');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByText('The email or password is incorrect.').waitFor();
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.locator('#chart-calls[data-ready="true"]').waitFor();
    await page.locator('#calls-today .stat-value').filter({ hasNotText: '—' }).waitFor();
    await page.locator('#cost-today .stat-value').filter({ hasNotText: '—' }).waitFor();

    // The same questions, asked of the API (web/src/lib/figures.ts: calls, and the answer rate of the ended ones).
    const today = new Date().toISOString().slice(0, 10);
    const r = dayRequests(today, 'UTC');
    const data = async (body: object) => (await admin.post('/analytics', body)).body.data;
    const f = dayFigures({ calls: await data(r.calls), statuses: await data(r.statuses), connected: await data(r.connected), duration: await data(r.duration) });
    const overview = (await admin.get('/overview?timezone=UTC')).body;
    const text = (id: string) => page.locator(`#${id} .stat-value`).innerText();
    assert.equal(await text('live-calls'), String(overview.live_calls));
    assert.equal(await text('calls-today'), f.calls.toLocaleString('en-US'));
    assert.equal(await text('answer-rate'), f.answerRate === null ? '—' : `${(f.answerRate * 100).toFixed(1)} %`);
    const avg = f.avgDurationSeconds === null ? '—' : Math.round(f.avgDurationSeconds) < 60 ? `${Math.round(f.avgDurationSeconds)} s` : `${Math.floor(Math.round(f.avgDurationSeconds) / 60)} min ${Math.round(f.avgDurationSeconds) % 60} s`;
    assert.equal(await text('avg-duration'), avg);
    assert.equal(await text('cost-today'), `$${overview.cost_since.toFixed(overview.cost_since < 1 && overview.cost_since > 0 ? 4 : 2)}`);
    assert.ok(f.calls > 0, 'the demo data has calls today');
    // The outcomes chart and the recent failures are there.
    await page.locator('#chart-outcomes[data-ready="true"]').waitFor();
    await shoot(page, 'overview');
    const firstScreen = [...scripts.values()].reduce((a, b) => a + b, 0);
    process.stdout.write(`# first screen: ${scripts.size} scripts, ${(firstScreen / 1024).toFixed(1)} kB gzipped\n`);
    assert.ok(firstScreen > 0 && firstScreen <= 300 * 1024, `first screen JavaScript ${firstScreen} bytes`);
    await page.context().close();
  });

  it('imports a CSV of 1,000 rows with 10 bad ones: progress, then the 10 rejections with reasons, downloadable', async () => {
    const page = await adminPage('/leads');
    const file = path.join(dataDir, 'reminders.csv');
    const lines = ['customer_mobile_number,customer_name'];
    const bad = new Set([17, 99, 150, 333, 401, 512, 640, 777, 901, 998]);
    for (let i = 0; i < 1000; i++) lines.push(bad.has(i) ? `0044-not-a-number-${i},Bad ${i}` : `+1415555${String(i).padStart(4, '0')},Customer ${i}`);
    fs.writeFileSync(file, `${lines.join('\n')}\n`);
    await page.getByRole('button', { name: 'Import CSV' }).click();
    await shoot(page, 'leads-import');
    await page.getByLabel('Template').last().selectOption({ label: templateName });
    await page.setInputFiles('input[type=file]', file);
    // Every value the progress bar takes is recorded as it renders. (Strings: the test runner's
    // compiler would add helpers to a function that the page does not have.)
    await page.evaluate(`(() => {
      window.progressSeen = [];
      new MutationObserver(() => {
        const bar = document.getElementById('import-progress');
        if (bar && window.progressSeen.at(-1) !== bar.value) window.progressSeen.push(bar.value);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    })()`);
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await page.getByRole('heading', { name: 'Rejected rows' }).waitFor();
    const seen = (await page.evaluate('window.progressSeen')) as number[];
    assert.ok(seen.length > 2 && seen.at(-1) === 1000, `the bar moved through ${JSON.stringify(seen)}`);
    assert.match(await page.locator('#import-summary').innerText(), /990 queued, 10 rejected/);
    const rejected = page.locator('.modal table tbody tr');
    assert.equal(await rejected.count(), 10);
    assert.deepEqual(await page.locator('.modal table tbody tr td:first-child').allInnerTexts(), [...bad].sort((a, b) => a - b).map((i) => String(i + 2)));
    assert.match(await rejected.first().innerText(), /customer_mobile_number/);
    await shoot(page, 'leads-import-done');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download rejected rows' }).click()]);
    const csv = fs.readFileSync((await download.path())!, 'utf8').trim().split('\r\n');
    assert.equal(csv.length, 11);
    assert.equal(csv[0], 'customer_mobile_number,customer_name,line,status,reason');
    assert.ok(csv[1]!.startsWith('0044-not-a-number-17,Bad 17,19,'));
    await page.locator('.modal button.primary', { hasText: 'Close' }).click();
    // The leads are in the table, searchable.
    const api = (await admin.get(`/leads?template=${encodeURIComponent(templateName)}&page_size=1`)).body;
    assert.equal(api.total, 990);
    await page.goto(url('/leads?q=%2B14155550042'));
    await page.locator('tbody tr').first().waitFor();
    assert.equal(await page.locator('tbody tr').count(), 1);
    assert.match(await page.locator('tbody tr').innerText(), /\+14155550042/);
    await page.goto(url('/leads'));
    await page.locator('tbody tr').first().waitFor();
    await shoot(page, 'leads');
    await page.context().close();
  });

  it('a sandbox call started from the dashboard over SIP finishes; its page shows the attempt with its SIP status, the transcript and a recording that plays', async () => {
    const page = await adminPage('/');
    // The recording's answers to the browser's Range requests.
    const ranged: number[] = [];
    page.on('response', (res) => {
      if (res.url().includes('/recording') && res.request().headers()['range']) ranged.push(res.status());
    });
    await page.locator('#sandbox-banner').waitFor();
    // Through the sandbox trunk to the simulated customer inside Dialer (SIP and RTP on 127.0.0.1).
    await page.getByLabel('Sandbox provider').selectOption('SIP');
    await shoot(page, 'sandbox-call-sip');
    await page.locator('#sandbox-call').click();
    await page.waitForURL(/\/app\/leads\/[0-9a-f-]+$/);
    // While the call is live, its lines appear as they are spoken.
    await page.locator('#live-transcript').waitFor({ timeout: 120_000 });
    await page.locator('#transcript .turn', { hasText: 'Hello! This is an automated call from Dialer' }).waitFor();
    await shoot(page, 'lead-live-transcript');
    // The page follows the call live, without a reload.
    await page.locator('.page-header .badge', { hasText: 'FINISHED' }).waitFor({ timeout: 120_000 });
    await page.locator('#sandbox-badge').waitFor();
    await page.locator('#attempts .timeline-item').first().waitFor();
    assert.match(await page.locator('#attempts .timeline-item').first().innerText(), /Attempt 1[\s\S]*SIP from \+15555550104[\s\S]*SIP 200/);
    assert.ok((await page.locator('#transcript .turn').count()) >= 2);
    assert.match(await page.locator('#transcript').innerText(), /Hello! This is an automated call from Dialer/);
    await page.waitForFunction(() => ((document.getElementById('recording-audio') as HTMLAudioElement | null)?.duration ?? 0) > 1, null, { timeout: 30_000 });
    const duration = await page.evaluate(() => (document.getElementById('recording-audio') as HTMLAudioElement).duration);
    assert.ok(duration > 1, `the recording lasts ${duration} s`);
    // It plays (the browser reads it with Range requests through the signed link).
    await page.evaluate(() => (document.getElementById('recording-audio') as HTMLAudioElement).play());
    await page.waitForFunction(() => (document.getElementById('recording-audio') as HTMLAudioElement).currentTime > 0.2, null, { timeout: 30_000 });
    await page.evaluate(() => (document.getElementById('recording-audio') as HTMLAudioElement).pause());
    assert.ok(ranged.includes(206), `the recording is read in ranges (answers ${JSON.stringify(ranged)})`);
    // Each line shows its time in the recording (m:ss); clicking the last one plays the recording from there.
    const times = page.locator('#transcript button.turn-time');
    assert.equal(await times.count(), await page.locator('#transcript .turn').count());
    for (const text of await times.allInnerTexts()) assert.match(text, /^\d+:\d\d$/);
    const paused = await page.evaluate(() => (document.getElementById('recording-audio') as HTMLAudioElement).currentTime);
    const called0 = (await admin.get(`/leads/${page.url().split('/').at(-1)!}`)).body;
    const lastAtMs: number = called0.metaData.transcription.at(-1).at_ms;
    assert.ok(lastAtMs / 1000 > paused + 0.5 && lastAtMs / 1000 < duration, `the last line at ${lastAtMs} ms lies after the paused player (${paused} s), within ${duration} s`);
    await times.last().click();
    await page.waitForFunction((from) => (document.getElementById('recording-audio') as HTMLAudioElement).currentTime >= from, lastAtMs / 1000, { timeout: 30_000 });
    await page.evaluate(() => (document.getElementById('recording-audio') as HTMLAudioElement).pause());
    // The waveform is drawn, and the trace id links where DIALER_TRACE_URL_TEMPLATE says.
    await page.locator('.waveform div').first().waitFor({ state: 'attached' });
    const leadId = page.url().split('/').at(-1)!;
    const called = (await admin.get(`/leads/${leadId}`)).body;
    // The title says who was called; the request id stands beside it.
    const title = await page.locator('.page-header h1').innerText();
    assert.ok(title.includes(called.payload.customer_mobile_number), `the title "${title}" names the number called`);
    assert.notEqual(title, called.request_id);
    assert.equal(await page.locator('#lead-request-id').innerText(), called.request_id);
    const traceId = called.metaData.trace_id;
    assert.match(traceId, /^[0-9a-f]{32}$/);
    assert.equal(await page.locator('#trace-link').getAttribute('href'), `https://traces.example.com/trace/${traceId}`);
    await shoot(page, 'lead');
    await page.context().close();
  });

  it('edits a template: a wrong transition_to is shown at its node; fixed and saved, the graph shows the new arrow', async () => {
    const id = (await admin.get(`/templates?name=${encodeURIComponent(templateName)}`)).body.data[0].id;
    const page = await adminPage(`/templates/${id}`);
    await page.locator('#graph .edge[data-function="confirm"]').waitFor();
    // The template's own flow, never the example a new template starts with (once seen here now and then).
    const edges = await page.locator('#graph .edge').evaluateAll((es) => es.map((e) => `${e.getAttribute('data-from')}-${e.getAttribute('data-function')}->${e.getAttribute('data-to')}`));
    assert.deepEqual(edges, ['greet-confirm->goodbye'], `the graph at ${page.url()} shows the flow ${await page.locator('#flow-editor').inputValue()}`);
    await shoot(page, 'template');
    const flow = JSON.parse(await page.locator('#flow-editor').inputValue());
    flow.nodes[0].functions[0].transition_to = 'thank_you';
    await page.locator('#flow-editor').fill(JSON.stringify(flow, null, 2));
    const problem = page.locator('#problems .problem-group[data-node="greet"] li[data-path="/flow/nodes/0/functions/0/transition_to"]');
    await problem.waitFor();
    assert.match(await problem.innerText(), /"thank_you" is not/);
    await page.locator('#graph .box-problem[data-node="greet"]').waitFor();
    await page.locator('#graph .box-missing[data-node="missing:thank_you"]').waitFor();
    // The API refuses it too, at the same node and field.
    await page.locator('#save-template').click();
    await page.getByText('The API refused the last save for these reasons:').waitFor();
    await shoot(page, 'template-error');
    // Fixed: the node it names exists now.
    flow.nodes.push({ node_name: 'thank_you', task_messages: [{ role: 'system', content: 'Thank them.' }], pre_actions: [{ type: 'end_conversation', outcome: 'confirmed' }] });
    await page.locator('#flow-editor').fill(JSON.stringify(flow, null, 2));
    await page.getByText('The flow is valid').waitFor();
    await page.locator('#save-template').click();
    await page.getByText('Template saved.').waitFor();
    await page.locator('#graph .edge[data-from="greet"][data-to="thank_you"]').waitFor();
    assert.equal(await page.locator('#graph .edge[data-from="greet"][data-to="goodbye"]').count(), 0);
    const saved = (await admin.get(`/templates/${id}`)).body;
    assert.equal(saved.flow.nodes[0].functions[0].transition_to, 'thank_you');
    await page.goto(url('/templates'));
    await page.locator('tbody tr').first().waitFor();
    await shoot(page, 'templates');
    await page.context().close();
  });

  it('a merchant user sees only its merchant\'s leads and no admin screens; an expired token returns to login and back', async () => {
    const email = 'shop@example.com';
    const user = await admin.post('/users', { email, password: 'shop-password-1', role: 'merchant', reseller_id: reseller, merchant_id: merchantA });
    assert.equal(user.status, 200, JSON.stringify(user.body));
    for (const [merchant, id] of [[merchantA, 'mine-1'], [merchantB, 'theirs-1']] as const) {
      const res = await admin.post('/leads', { request_id: id, template: templateName, reseller_id: reseller, merchant_id: merchant, payload: { customer_mobile_number: '+14155550777', customer_name: 'Ana' } });
      assert.equal(res.status, 201, JSON.stringify(res.body));
    }
    const context = await newContext(browser);
    const page = await context.newPage();
    watchProblems(page, problems);
    await logIn(page, base, email, 'shop-password-1', '/leads');
    const nav = await page.locator('#nav a').allInnerTexts();
    assert.deepEqual(nav.filter((n) => !n.startsWith('API reference')), ['Overview', 'Leads', 'Campaigns', 'Templates', 'Configurations', 'Analytics', 'Blacklist', 'Do-not-call lists', 'Knowledge', 'Privacy', 'Merchants', 'API tokens']);
    await page.locator('tbody tr').first().waitFor();
    // Every lead listed is the merchant's own (as the API scopes it), and the other merchant's is not among them.
    const api = (await client(server.app, (await admin.post('/login', { email, password: 'shop-password-1' })).body.access_token).get('/leads?page_size=1000')).body;
    assert.ok(api.data.every((l: any) => l.merchant_id === merchantA));
    await page.goto(url('/leads?q=theirs-1'));
    await page.getByText('No lead matches these filters.').waitFor();
    await page.goto(url('/leads?q=mine-1'));
    await page.locator('tbody tr', { hasText: 'mine-1' }).waitFor();
    // No admin screen, not even by its address; no action the role lacks.
    await page.goto(url('/numbers'));
    await page.getByText('This screen is not available to your role.').waitFor();
    await page.goto(url('/blacklist'));
    await page.getByRole('heading', { name: 'Blacklist' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Add or import numbers' }).count(), 0, 'a merchant reads the blacklist but cannot change it');
    await shoot(page, 'merchant-blacklist');
    await page.goto(url('/tokens'));
    await page.getByRole('button', { name: 'New token' }).click();
    assert.deepEqual(await page.locator('.modal select').first().locator('option').allInnerTexts(), ['merchant', 'user']);
    await page.getByRole('button', { name: 'Cancel' }).click();

    // The token expires: the API answers 401; the person logs in again and lands where they were.
    const expired = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(user.body.id)
      .setIssuedAt(Math.floor(Date.now() / 1000) - 7200)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 3600)
      .sign(new TextEncoder().encode(JWT_SECRET));
    await page.evaluate(([token]) => sessionStorage.setItem('dialer.session', JSON.stringify({ token, expiresAt: Date.now() + 3_600_000, email: 'shop@example.com' })), [expired]);
    await page.goto(url('/leads?status=BACKLOG'));
    await page.waitForURL(/\/app\/login\?next=%2Fagent%2Fvoice%2Fdialer%2Fapp%2Fleads%3Fstatus%3DBACKLOG$/);
    await page.getByText('Your session expired.').waitFor();
    await shoot(page, 'login-expired');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('shop-password-1');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(/\/app\/leads\?status=BACKLOG$/);
    await page.locator('tbody tr', { hasText: 'mine-1' }).waitFor();
    assert.equal(await page.locator('select[name="status"]').inputValue(), 'BACKLOG');
    await context.close();
  });

  it('renders every analytics chart on the demo data', async () => {
    const page = await adminPage('/analytics');
    const types = ['call_count', 'call_duration', 'outcome_distribution', 'sentiment_distribution', 'status_distribution', 'calls_over_time', 'avg_duration_over_time', 'top_outcomes', 'retry_analysis', 'provider_breakdown', 'hourly_heatmap', 'conversion_funnel'];
    for (const type of types) {
      const card = page.locator(`#q-${type}`);
      await card.locator('[data-ready="true"]').waitFor({ timeout: 60_000 });
      if (type === 'call_count') {
        const api = (await admin.post('/analytics', { query_type: 'call_count', ...CALLS, filters: { date_from: new Date(Date.now() - 29 * 86_400_000).toISOString().slice(0, 10), date_to: new Date().toISOString().slice(0, 10) }, timezone: 'UTC' })).body;
        assert.equal(await card.locator('.figure-value').innerText(), api.data[0].count.toLocaleString('en-US'));
        continue;
      }
      // Something was drawn: the chart's canvas has coloured pixels.
      await page.waitForFunction(
        (id) => {
          const canvas = document.querySelector<HTMLCanvasElement>(`#${id} canvas`);
          if (!canvas || canvas.width === 0) return false;
          const data = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
          let coloured = 0;
          for (let i = 0; i < data.length; i += 4) if (data[i + 3]! > 0 && !(data[i]! > 240 && data[i + 1]! > 240 && data[i + 2]! > 240)) coloured++;
          return coloured > 500;
        },
        `q-${type}`,
        { timeout: 30_000 },
      );
    }
    await shoot(page, 'analytics');
    // A payload filter narrows every query; a table and a CSV exist for each.
    await page.getByRole('button', { name: '+ Add a payload filter' }).click();
    await page.getByLabel('Payload key').fill('campaign');
    await page.getByLabel('Payload value').fill('no-such-campaign');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.locator('#q-call_count .figure-value', { hasText: /^0$/ }).waitFor();
    await page.locator('#q-top_outcomes').getByRole('button', { name: 'Table' }).click();
    await page.locator('#q-top_outcomes').getByText('Nothing to show.').waitFor();
    await page.getByRole('button', { name: 'Remove this payload filter' }).click();
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.locator('#q-top_outcomes tbody tr').first().waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download Top call outcomes as CSV' }).click()]);
    const csv = fs.readFileSync((await download.path())!, 'utf8').trim().split('\r\n');
    assert.equal(csv[0], 'key,count,percentage');
    assert.ok(csv.length > 2);
    await page.context().close();
  });

  it('a waiting lead that nothing will call says why: no configuration, then calling disabled', async () => {
    const pushed = await admin.post('/leads', { request_id: 'held-1', template: templateName, reseller_id: reseller, payload: { customer_mobile_number: '+14155550778', customer_name: 'Bo' } });
    assert.equal(pushed.status, 201, JSON.stringify(pushed.body));
    const lead = (await admin.get('/leads?request_id=held-1')).body.data[0];
    const page = await adminPage(`/leads/${lead.id}`);
    const why = page.locator('#why-waiting');
    await why.waitFor();
    assert.match(await why.innerText(), new RegExp(`template ${templateName} has no configuration\\. Create a configuration; its waiting leads are then due at once`));
    assert.equal(await page.locator('.page-header h1').innerText(), 'Bo · +14155550778');
    assert.equal(await page.locator('#lead-request-id').innerText(), 'held-1');
    await shoot(page, 'lead-waiting');
    // Its link opens a new configuration for that template.
    await why.getByRole('link', { name: 'Create a configuration' }).click();
    await page.locator('.modal select[name="template"]').waitFor();
    assert.equal(await page.locator('.modal select[name="template"]').inputValue(), lead.template_id);
    await shoot(page, 'configuration-for-template');
    await page.goBack();
    await why.waitFor();
    const cfg = await admin.post('/configurations', { reseller_id: reseller, template: lead.template_id, calling_provider: 'PROVIDER_A', enable_calling: false });
    assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
    // The configurations list says calling is off (not an outcome of a call).
    await page.goto(url('/configurations'));
    const row = page.locator(`tbody tr[data-key="${cfg.body.id}"]`);
    await row.waitFor();
    assert.equal(await row.locator('td[data-label="Calling"]').innerText(), 'calling off');
    assert.doesNotMatch(await page.locator('tbody').innerText(), /no_response/);
    await shoot(page, 'configurations-calling-off');
    await page.goBack();
    await why.waitFor();
    await page.reload();
    await page.locator('#why-waiting', { hasText: 'calling is disabled' }).waitFor();
    assert.match(await why.innerText(), new RegExp(`calling is disabled in the configuration of template ${templateName}\\. Enable calling;`));
    // Calling enabled: the note goes (the lead is due and called).
    assert.equal((await admin.put(`/configurations/${cfg.body.id}`, { ...cfg.body, enable_calling: true })).status, 200);
    await page.reload();
    await page.locator('.lead-page .kv').first().waitFor();
    assert.equal(await why.count(), 0);
    assert.equal((await admin.delete(`/configurations/${cfg.body.id}`)).status, 200);
    await page.context().close();
  });

  it("a warm transfer's briefing and the human's decision show on the lead's page", async () => {
    const pushed = await admin.post('/leads', { request_id: 'warm-1', template: templateName, reseller_id: reseller, payload: { customer_mobile_number: '+14155550779', customer_name: 'Ana' } });
    assert.equal(pushed.status, 201, JSON.stringify(pushed.body));
    const id = pushed.body.lead_call_tracker_id;
    // The record a warm transfer leaves (as in test/e2e/voice.test.ts), written as the lifecycle writes a finish.
    const events = ['dial', 'answered', 'briefed', 'accepted', 'bridged'].map((event, i) => ({ event, at: new Date(Date.UTC(2026, 10, 29, 18, 21, 28 + 3 * i)).toISOString() }));
    const meta = {
      call_ended_by: 'transfer',
      transferred_to: '+14155550421',
      transcription: [
        { role: 'assistant', content: 'Hello Ana! How can I help with order A-42?', node: 'help' },
        { role: 'user', content: 'I would like to talk to a person, please.', node: 'help' },
        { role: 'assistant', content: 'Please hold for a moment while I brief a colleague who can help you.', node: 'help' },
      ],
      node_traversal: ['help'],
      function_calls: [{ node: 'help', name: 'talk_to_human', arguments: {}, hooks: [], transfer_to: '+14155550421', at: events[0]!.at }],
      warm_transfers: [
        { to: '+14155550421', node: 'help', function: 'talk_to_human', briefing: 'Ana wants to change the address of order A-42.', briefing_source: 'llm', decision: 'accepted', via: 'voice', heard: 'Yes, put them through.', events },
      ],
      errors: [],
    };
    await server.db.query("UPDATE leads SET status = 'FINISHED', outcome = 'TRANSFERRED', attempt_count = 1, next_attempt_at = NULL, meta_data = $2 WHERE id = $1", [id, JSON.stringify(meta)]);
    const page = await adminPage(`/leads/${id}`);
    const card = page.locator('#warm-transfer');
    await card.waitFor();
    assert.equal(await card.getByLabel('Briefing').innerText(), 'Ana wants to change the address of order A-42.');
    const text = await card.innerText();
    assert.match(text, /To \+14155550421\s+accepted by voice/);
    assert.match(text, /Briefing from the LLM's summary\./);
    assert.match(text, /The human said: “Yes, put them through\.”/);
    assert.match(await card.getByLabel('Transfer events').innerText(), /dial .*→ answered .*→ briefed .*→ accepted .*→ bridged/);
    await card.scrollIntoViewIfNeeded();
    await shoot(page, 'lead-warm-transfer');
    await page.context().close();
  });

  it("a call's languages and its speech-to-text fallback show under its transcript; its pre-checks in their card", async () => {
    const pushed = await admin.post('/leads', { request_id: 'languages-1', template: templateName, reseller_id: reseller, payload: { customer_mobile_number: '+14155550780', customer_name: 'Ana' } });
    assert.equal(pushed.status, 201, JSON.stringify(pushed.body));
    const id = pushed.body.lead_call_tracker_id;
    // The record such a call leaves (as in test/e2e/voice.test.ts), written as the lifecycle writes a finish.
    const at = (s: number) => new Date(Date.UTC(2026, 10, 29, 18, 30, s)).toISOString();
    const meta = {
      call_ended_by: 'agent',
      transcription: [
        { role: 'assistant', content: 'Hello Ana! Shall I confirm your order?', node: 'greet', at_ms: 0, language: 'en-US' },
        { role: 'user', content: '¿Puede hablar en español?', node: 'greet', at_ms: 4200, language: 'en-US' },
        { role: 'assistant', content: 'Claro. ¿Confirmo su pedido?', node: 'greet', at_ms: 6100, language: 'es' },
        { role: 'user', content: 'Sí, por favor.', node: 'greet', at_ms: 9800, language: 'es' },
      ],
      node_traversal: ['greet'],
      language_switches: [
        { from: 'en-US', to: 'hi', by: 'detected', at: at(2), refused: 'not one of the call\'s languages (en-US, es)' },
        { from: 'en-US', to: 'es', by: 'function', at: at(5) },
      ],
      stt_fallback: { at: at(8), at_ms: 8300, from: 'assemblyai', to: 'deepgram', reason: 'assemblyai: refused the stream: HTTP 503' },
      pre_check_results: [{ name: 'crm_open', result: 'passed', action: 'dial', status_code: 200, value: true, duration_ms: 41 }],
      errors: [],
    };
    await server.db.query("UPDATE leads SET status = 'FINISHED', outcome = 'confirmed', attempt_count = 1, next_attempt_at = NULL, meta_data = $2 WHERE id = $1", [id, JSON.stringify(meta)]);
    const page = await adminPage(`/leads/${id}`);
    const card = page.locator('#transcript');
    await card.getByLabel('Speech and language').waitFor();
    // Each line's language is marked where it changes: on the first line and on the first Spanish one.
    assert.deepEqual(await card.locator('.turn-lang').allInnerTexts(), ['en-US', 'es']);
    const notes = await card.getByLabel('Speech and language').locator('li').allInnerTexts();
    assert.equal(notes.length, 3);
    assert.match(notes[0]!, /The caller was heard speaking Hindi \(hi\); the call stayed in American English \(en-US\): not one of the call's languages \(en-US, es\)\./);
    assert.match(notes[1]!, /Switched from American English \(en-US\) to Spanish \(es\), asked by the flow \(switch_language\)\./);
    assert.match(notes[2]!, /Speech-to-text went over from assemblyai to deepgram: assemblyai: refused the stream: HTTP 503/);
    // The pre-checks card beside it: each check, its result and what it decided.
    assert.deepEqual(
      await page.locator('#prechecks tbody tr td').allInnerTexts(),
      ['crm_open', 'passed', 'dial', '200', 'true', '—'],
    );
    await card.scrollIntoViewIfNeeded();
    await shoot(page, 'lead-languages');
    await page.context().close();
  });

  it('users: a role changed and a password reset from the screen; the audit trail shows both, filtered and paged', async () => {
    const created = await admin.post('/users', { email: 'clerk@example.com', password: 'clerk-password-1', role: 'user', reseller_id: reseller, merchant_id: merchantA });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const page = await adminPage('/users');
    const row = page.locator(`tbody tr[data-key="${created.body.id}"]`);
    await row.waitFor();
    // Its role: user -> merchant, in another merchant.
    await row.getByRole('button', { name: 'Edit' }).click();
    // The merchants arrive after the form opens: once they are there, the user's own is chosen.
    await page.locator(`.modal select[name="merchant_id"] option[value="${merchantA}"]`).waitFor({ state: 'attached' });
    assert.equal(await page.locator('.modal select[name="merchant_id"]').inputValue(), merchantA, 'the form starts from the user as it is');
    await page.locator('.modal select[name="role"]').selectOption('merchant');
    await page.locator('.modal select[name="merchant_id"]').selectOption(merchantB);
    await shoot(page, 'user-edit');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('User saved.').waitFor();
    await row.locator('td[data-label="Role"]', { hasText: 'merchant' }).waitFor();
    const changed = (await admin.get('/users?page_size=1000')).body.data.find((u: any) => u.id === created.body.id);
    assert.deepEqual([changed.role, changed.merchant_id], ['merchant', merchantB]);
    // A new password, generated on the page: the old one stops working, the new one works.
    await row.getByRole('button', { name: 'Reset password' }).click();
    await page.locator('.modal').getByRole('button', { name: 'Generate' }).click();
    const password = await page.locator('.modal input[name="password"]').inputValue();
    assert.ok(password.length >= 12, `a generated password: ${password}`);
    await shoot(page, 'user-password');
    await page.locator('.modal').getByRole('button', { name: 'Reset password' }).click();
    await page.getByText('Password reset. clerk@example.com must log in again').waitFor();
    assert.equal((await admin.post('/login', { email: 'clerk@example.com', password: 'clerk-password-1' })).status, 422);
    assert.equal((await admin.post('/login', { email: 'clerk@example.com', password })).status, 200);
    // One's own row: no delete, no reset, and the role cannot be changed.
    const mine = page.locator('tbody tr', { hasText: `${EMAIL} (you)` });
    assert.equal(await mine.getByRole('button', { name: 'Delete' }).count(), 0);
    await mine.getByRole('button', { name: 'Edit' }).click();
    assert.equal(await page.locator('.modal select[name="role"]').isDisabled(), true);
    await page.getByRole('button', { name: 'Cancel' }).click();
    await shoot(page, 'users');

    // The audit trail: both changes, by the admin, on that user.
    await page.locator('#nav a', { hasText: 'Audit trail' }).click();
    await page.locator('tbody tr').first().waitFor();
    const all = (await admin.get('/audit?page_size=50')).body;
    assert.match(await page.locator('.pager').innerText(), new RegExp(`1–${Math.min(50, all.total)} of ${all.total.toLocaleString('en-US')}`));
    assert.equal(await page.locator('tbody tr').count(), Math.min(50, all.total));
    await page.getByLabel('Resource id').fill(created.body.id);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(new RegExp(`resource_id=${created.body.id}`));
    // The filtered answer is in once every row is about that user.
    await page.locator('tbody tr', { hasNotText: created.body.id }).first().waitFor({ state: 'detached' });
    await page.locator('tbody tr', { hasText: 'password.reset' }).waitFor();
    const actions = await page.locator('tbody td[data-label="Action"]').allInnerTexts();
    assert.deepEqual(actions, ['password.reset', 'update', 'create']);
    assert.match(await page.locator('tbody tr').first().innerText(), new RegExp(`${EMAIL}[\\s\\S]*users[\\s\\S]*POST /users/:id/password[\\s\\S]*200`));
    await shoot(page, 'audit-filtered');
    await page.getByLabel('Action').selectOption('login.failure');
    await page.getByLabel('Resource id').fill('');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/action=login\.failure$/);
    // The table shows the new answer once every row is a failed login (the wrong password typed in the first test).
    await page.locator('tbody td[data-label="Action"]', { hasNotText: 'login.failure' }).first().waitFor({ state: 'detached' });
    assert.ok((await page.locator('tbody td[data-label="Action"]').count()) > 0);
    assert.equal(await page.getByLabel('Action').inputValue(), 'login.failure');
    // Paging: more entries than a page holds (a write each), the second page is the API's second page.
    for (let i = 0; i < 51; i++) assert.equal((await admin.post('/blacklist', { phone_numbers: [`+1415555${String(1000 + i)}`], reseller_id: reseller })).status, 200);
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.waitForURL(/\/app\/audit$/);
    assert.equal(await page.getByLabel('Action').inputValue(), '', 'the cleared filters are empty');
    await page.locator('.pager').getByRole('button', { name: 'Next ›' }).click();
    await page.waitForURL(/page=2$/);
    const second = (await admin.get('/audit?page=2&page_size=50')).body.data.map((e: any) => e.id);
    await page.locator(`tbody tr[data-key="${second[0]}"]`).waitFor();
    assert.deepEqual(await page.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-key'))), second);
    await shoot(page, 'audit');
    await page.context().close();
  });

  it('a number written right but unknown to its country is refused with that reason, at its field', async () => {
    const page = await adminPage('/numbers');
    await page.getByRole('button', { name: 'Add a number' }).click();
    await page.locator('.modal input[name="phone_number"]').fill('+15555550104');
    await page.locator('.modal').getByRole('button', { name: 'Add' }).click();
    const message = page.locator('.modal .field-error .field-message');
    await message.waitFor();
    assert.equal(await message.innerText(), 'is written as E.164, but is not a valid number for its country (+1, United States and 24 other countries)');
    assert.doesNotMatch(await page.locator('.modal').innerText(), /such as \+14155550123/);
    await shoot(page, 'number-refused');
    await page.context().close();
  });

  it('every other screen renders for the admin (saved for a person to look at)', async () => {
    await admin.post('/blacklist', { phone_numbers: ['+14155550999', '+14155550998'], reseller_id: reseller });
    const token = await admin.post('/s2s-token', { name: 'crm-backend', role: 'merchant', reseller_id: reseller, merchant_id: merchantA });
    assert.equal(token.status, 200);
    const page = await adminPage('/configurations');
    await page.getByRole('button', { name: 'New configuration' }).click();
    await page.locator('#window-preview').waitFor();
    await shoot(page, 'configuration-form');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.locator('[data-window]').first().waitFor();
    assert.match(await page.locator('[data-window]').first().innerText(), /open now|opens in/);
    await shoot(page, 'configurations');
    for (const [screen, ready] of [
      ['numbers', 'tbody tr'],
      ['blacklist', 'tbody tr'],
      ['merchants', 'tbody tr'],
      ['users', 'tbody tr'],
      ['tokens', 'tbody tr'],
      ['resellers', 'tbody tr'],
    ] as const) {
      await page.goto(url(`/${screen}`));
      await page.locator(ready).first().waitFor();
      await shoot(page, screen);
    }
    await page.goto(url('/tokens'));
    await page.getByRole('button', { name: 'New token' }).click();
    await page.getByLabel('Name').fill('reporting');
    await page.locator('.modal select[name="reseller_id"]').selectOption(reseller);
    await page.locator('.modal select[name="merchant_id"]').selectOption(merchantA);
    await page.getByRole('button', { name: 'Issue token' }).click();
    const secret = await page.locator('#issued-token').innerText();
    assert.match(secret, /^s2s_/);
    await shoot(page, 'token-issued');
    assert.equal((await client(server.app, secret).get('/me')).body.role, 'merchant', 'the token shown once works');
    await page.context().close();
    assert.deepEqual(problems, [], 'no CSP refusal and no page error on any screen');
  });
});

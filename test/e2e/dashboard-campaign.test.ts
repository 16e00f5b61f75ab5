/**
 * A campaign run from the dashboard in the real Chromium, against `dialer serve` with its sandbox
 * line: a CSV with a repeated number is previewed (columns, the duplicate shown) and imported as a
 * campaign with the duplicate skipped; its page follows the calls live; it is paused and resumed;
 * its results are exported as CSV; a lead's page links to it. Every screen is saved at 1280 px and
 * at phone width in test/screenshots/.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { API_PREFIX } from '../../src/app.js';
import type { RunningServer } from '../../src/server.js';
import type { Client } from '../helpers/app.js';
import { chromiumAvailable } from '../helpers/browser.js';
import { ADMIN, type DashboardServed, logIn, newContext, serveDashboard, shoot, watchProblems } from '../helpers/dashboard.js';

const { email: EMAIL, password: PASSWORD } = ADMIN;
const skip = chromiumAvailable() ? false : 'Chromium is not installed (apt-get install chromium)';

let server: RunningServer;
let admin: Client;
let browser: Browser;
let ui: DashboardServed;
const problems: string[] = [];

before(async () => {
  if (skip) return;
  ui = await serveDashboard('campaign-ui', {
    DIALER_POLL_MS: '100',
    DIALER_SANDBOX: 'true',
    LLM_API_KEY: '',
    OPENAI_API_KEY: '',
    LLM_BASE_URL: '',
  });
  ({ server, admin, browser } = ui);
  const reseller = (await admin.post('/resellers', { name: 'Acme' })).body.id;
  const tpl = await admin.post('/templates', {
    name: 'Renewal reminder',
    reseller_id: reseller,
    flow: { initial_node: 'greet', nodes: [{ node_name: 'greet', task_messages: [{ role: 'system', content: 'Remind {customer_name} of the renewal.' }] }] },
  });
  assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
  const cfg = await admin.post('/configurations', { reseller_id: reseller, template: tpl.body.id, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00', max_retry: 0 });
  assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
});

after(async () => {
  await ui?.close();
});

/** Saves the screen in test/screenshots/ and a copy under /tmp/campui-shots/ for a person to look at. */
async function save(page: Page, name: string) {
  await shoot(page, name);
  fs.mkdirSync('/tmp/campui-shots', { recursive: true });
  for (const w of ['1280', 'phone']) fs.copyFileSync(path.resolve('test/screenshots', `${name}-${w}.png`), `/tmp/campui-shots/${name}-${w}.png`);
}

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string, timeoutMs = 180_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('a campaign in the dashboard', { skip, timeout: 600_000 }, () => {
  it('imports a CSV as a campaign (the duplicate shown and skipped), watches it run, pauses, resumes, exports', async () => {
    const page = await (await newContext(browser)).newPage();
    watchProblems(page, problems);
    await logIn(page, server.url, EMAIL, PASSWORD, '/campaigns');
    await page.getByText('No campaign yet').waitFor();
    await save(page, 'campaigns-empty');

    await page.locator('#new-campaign').click();
    await page.getByLabel('Template').selectOption({ label: 'Renewal reminder' });
    const csv = ['customer_mobile_number,customer_name,plan', '+14155550101,Ada,gold', '+14155550102,Bob,silver', '+14155550101,Ada (again),gold', '+14155550103,Cy,gold'].join('\n');
    await page.getByLabel('CSV file').setInputFiles({ name: 'june-renewals.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.locator('#duplicates').waitFor();
    const dupText = await page.locator('#duplicates').innerText();
    assert.match(dupText, /1 repeated in the file/);
    assert.match(dupText, /\+14155550101/);
    assert.match(dupText, /first on line 2/);
    assert.match(await page.locator('#column-map').innerText(), /customer_name\s*→\s*payload\.customer_name/);
    assert.equal((await admin.get('/leads?page_size=10')).body.total, 0, 'the preview queued nothing');
    await page.getByLabel('Live calls at most').fill('2');
    await page.getByLabel('Call starts per second').fill('1');
    await save(page, 'campaign-preview');
    assert.match(await page.locator('#create-campaign').innerText(), /queue 3 leads/);
    await page.locator('#create-campaign').click();

    await page.waitForURL(/\/app\/campaigns\/[^/]+$/);
    const id = page.url().split('/').pop()!;
    await page.getByRole('heading', { name: 'june renewals' }).waitFor();
    const c = (await admin.get(`/campaigns/${id}`)).body;
    assert.equal(c.progress.total, 3, 'the duplicate row was skipped');
    assert.equal(c.max_concurrent_calls, 2);
    // Pause at once: the page says so and why.
    await page.locator('#pause').click();
    await page.locator('#paused-reason').waitFor();
    assert.equal((await admin.get(`/campaigns/${id}`)).body.status, 'paused');
    await save(page, 'campaign-paused');
    await page.locator('#resume').click();
    await page.locator('#pause').waitFor();
    // The counters follow the calls on the page as they finish.
    await until(() => admin.get(`/campaigns/${id}`).then((r) => r.body.progress), (p) => p.finished === 3, 'every lead to finish');
    await page.locator('#stat-total .stat-hint').filter({ hasText: '3 finished' }).waitFor({ timeout: 30_000 });
    await page.locator('#campaign-results tbody tr').nth(2).waitFor();
    await save(page, 'campaign-finished');

    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#export-csv').click()]);
    const text = fs.readFileSync(await download.path(), 'utf8');
    const lines = text.trim().split(/\r?\n/);
    assert.equal(lines.length, 4, text);
    assert.match(lines[0]!, /request_id/);

    await page.goto(`${server.url}${API_PREFIX}/app/campaigns`);
    await page.locator('.campaign-bar').first().waitFor();
    await save(page, 'campaigns-list');

    const leadId = (await admin.get(`/campaigns/${id}/results`)).body.data[0].lead_id;
    await page.goto(`${server.url}${API_PREFIX}/app/leads/${leadId}`);
    await page.locator('#lead-campaign').click();
    await page.waitForURL(new RegExp(`/campaigns/${id}$`));

    // Stop asks first.
    const second = await admin.post('/campaigns', { name: 'To stop', reseller_id: c.reseller_id, template: 'Renewal reminder', start_at: new Date(Date.now() + 3_600_000).toISOString() });
    await page.goto(`${server.url}${API_PREFIX}/app/campaigns/${second.body.id}`);
    await page.locator('#stop').click();
    await page.locator('#confirm-stop').waitFor();
    await save(page, 'campaign-stop-confirm');
    await page.locator('#confirm-stop').click();
    await until(() => admin.get(`/campaigns/${second.body.id}`).then((r) => r.body.status), (s) => s === 'stopped', 'the stop');
    assert.deepEqual(problems, []);
  });
});

/**
 * Compliance screens in the real Chromium, against `dialer serve`: a do-not-call list created and
 * imported from a CSV (progress, malformed lines reported by number), a number searched; a lead's
 * consent on its page; a person looked up, erased after a confirmation naming what goes; a
 * reseller's retention set; a knowledge document added from a file, searched and deleted. Every screen is saved at 1280 px and at phone width in test/screenshots/.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { API_PREFIX } from '../../src/app.js';
import type { RunningServer } from '../../src/server.js';
import type { Client } from '../helpers/app.js';
import { chromiumAvailable } from '../helpers/browser.js';
import { ADMIN, type DashboardServed, logIn, newContext, serveDashboard, shoot, watchProblems } from '../helpers/dashboard.js';

const { email: EMAIL, password: PASSWORD } = ADMIN;
const PERSON = '+14155550188';
const skip = chromiumAvailable() ? false : 'Chromium is not installed (apt-get install chromium)';

let server: RunningServer;
let admin: Client;
let browser: Browser;
let ui: DashboardServed;
let reseller: string;
let leadId: string;
const problems: string[] = [];

before(async () => {
  if (skip) return;
  ui = await serveDashboard('privacy-ui');
  ({ server, admin, browser } = ui);
  reseller = (await admin.post('/resellers', { name: 'Acme' })).body.id;
  const tpl = await admin.post('/templates', { name: 'Renewal', reseller_id: reseller, flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] } });
  assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
  // Calling is off: the lead waits, so erasing it also means it is never called.
  const cfg = await admin.post('/configurations', { reseller_id: reseller, template: tpl.body.id, calling_provider: 'PROVIDER_A', enable_calling: false });
  assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
  const pushed = await admin.post('/leads', {
    request_id: 'renewal-7',
    template: 'Renewal',
    reseller_id: reseller,
    payload: { customer_mobile_number: PERSON, customer_name: 'Grace Hopper' },
    consent: { source: 'web_form', captured_at: '2025-01-10T09:30:00Z', text: 'I agree to be called by Acme about my renewal', reference: 'form-7781' },
  });
  assert.equal(pushed.status, 201, JSON.stringify(pushed.body));
  leadId = pushed.body.lead_call_tracker_id;
});

after(async () => {
  await ui?.close();
});

describe('compliance in the dashboard', { skip, timeout: 600_000 }, () => {
  it('imports a do-not-call list, finds a number, shows consent, erases a person after confirming, sets retention', async () => {
    const page = await (await newContext(browser)).newPage();
    watchProblems(page, problems);
    await logIn(page, server.url, EMAIL, PASSWORD, '/dnc-lists');
    await page.getByText('No do-not-call list yet').waitFor();

    await page.getByRole('button', { name: 'New list' }).click();
    await page.getByLabel('Name').fill('National registry');
    await page.getByLabel('Source').fill('FTC National DNC Registry');
    await page.getByLabel('Version').fill('2025-01');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('cell', { name: 'National registry' }).waitFor();

    await page.getByRole('button', { name: 'Import CSV' }).click();
    const csv = ['phone_number', '+14155550101', '+1 415 555', '+14155550102', PERSON].join('\n');
    await page.getByLabel('CSV file').setInputFiles({ name: 'registry.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    const result = await page.locator('#dnc-import-result').innerText();
    assert.match(result, /3 imported, 0 already listed, 1 malformed/);
    assert.match(result, /Line 3: "\+1 415 555"/);
    await shoot(page, 'dnc-import-result');
    await page.getByRole('button', { name: 'Close' }).last().click();
    await page.getByRole('cell', { name: '3', exact: true }).waitFor();

    await page.getByLabel('Is a number on a list?').fill('+14155550102');
    await page.getByRole('button', { name: 'Search' }).click();
    assert.match(await page.locator('#dnc-search-result').innerText(), /\+14155550102 is on National registry/);
    await shoot(page, 'dnc-lists');

    // The lead's page shows the consent it was pushed with.
    await page.goto(`${server.url}${API_PREFIX}/app/leads/${leadId}`);
    await page.locator('#lead-consent').waitFor();
    const consent = await page.locator('#lead-consent').innerText();
    assert.match(consent, /web_form/);
    assert.match(consent, /I agree to be called by Acme about my renewal/);
    await page.locator('#compliance').scrollIntoViewIfNeeded();
    await shoot(page, 'lead-consent');

    // Erasure: look the person up, read what will go, confirm.
    await page.goto(`${server.url}${API_PREFIX}/app/privacy`);
    await page.getByLabel('Phone number (E.164)').fill(PERSON);
    await page.getByRole('button', { name: 'Look up' }).click();
    assert.match(await page.locator('#erasure-plan').innerText(), /1 lead\(s\), 0 recording\(s\), 0 transcript\(s\), 0 opt-out\(s\), on 1 do-not-call list/);
    await page.getByRole('button', { name: 'Erase this person…' }).click();
    const confirm = await page.locator('#erasure-confirm').innerText();
    assert.match(confirm, /customer_mobile_number/);
    assert.match(confirm, /customer_name/);
    assert.match(confirm, /1 waiting lead\(s\): they will not be called/);
    assert.match(confirm, /text and reference of 1 consent/);
    await shoot(page, 'privacy-erasure-confirm');
    await page.getByRole('button', { name: 'Erase', exact: true }).click();
    assert.match(await page.locator('#erasure-done').innerText(), /Erased from 1 lead/);
    const lead = (await admin.get(`/leads/${leadId}`)).body;
    assert.equal(lead.payload.customer_name, undefined);
    assert.deepEqual([lead.status, lead.outcome], ['FINISHED', 'aborted']);

    // Retention, as an admin: for a chosen reseller.
    await page.getByLabel('Reseller').selectOption({ label: 'Acme' });
    await page.getByLabel('Recordings (days)').fill('90');
    await page.getByLabel('Transcripts (days)').fill('365');
    await page.getByRole('button', { name: 'Save retention' }).click();
    await page.getByText('Retention saved.').waitFor();
    const set = (await admin.get(`/privacy/retention?reseller_id=${reseller}`)).body;
    assert.deepEqual([set.recordings_days, set.transcripts_days], [90, 365]);
    await shoot(page, 'privacy');

    await page.goto(`${server.url}${API_PREFIX}/app/leads/${leadId}`);
    assert.match(await page.locator('#compliance').innerText(), /Erased/);
    assert.doesNotMatch(await page.locator('#lead-consent').innerText(), /I agree/);
    await shoot(page, 'lead-erased');
    assert.deepEqual(problems, []);
  });

  it('adds a knowledge document read from a Markdown file, a web page or a PDF, finds the passage only it holds, deletes it', async () => {
    const page = await (await newContext(browser)).newPage();
    const seen = watchProblems(page);
    page.on('dialog', (d) => void d.accept());
    await logIn(page, server.url, EMAIL, PASSWORD, '/knowledge');
    await page.getByText('No document yet').waitFor();

    await page.getByRole('button', { name: 'New document' }).click();
    const guide = ['# Renewal guide', 'Renewals are due every March; reminders go out a month before.', '## Warranty', 'The zanzibarite battery pack carries a seven year warranty.'].join('\n\n');
    await page.getByLabel('From a file').setInputFiles({ name: 'renewal-guide.md', mimeType: 'text/markdown', buffer: Buffer.from(guide) });
    // The file is read into the form: its name becomes the title.
    await page.waitForFunction(() => document.querySelector<HTMLInputElement>('.modal input[name="title"]')?.value === 'renewal-guide');
    await page.locator('.modal select').first().selectOption({ label: 'Renewal' });
    await page.locator('.modal').getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByRole('cell', { name: 'renewal-guide' }).waitFor();
    assert.match(await page.locator('tbody tr').first().innerText(), /Renewal\s+Markdown/);

    await page.getByLabel('Ask the knowledge base').fill('How long is the zanzibarite warranty?');
    await page.getByRole('button', { name: 'Search' }).click();
    const found = page.locator('#knowledge-results');
    await found.locator('li').first().waitFor();
    assert.match(await found.innerText(), /renewal-guide[\s\S]*seven year warranty/);
    await shoot(page, 'knowledge');

    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No document yet').waitFor();
    assert.equal(await found.count(), 0, 'the results of a search from before the delete are gone');

    // A web page's URL instead of text: the page's title and text, and where it came from.
    const site = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html><head><title>Returns policy</title></head><body><nav>Menu</nav><p>A quillbrook kettle may be returned within forty days.</p></body></html>'));
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    try {
      await page.getByRole('button', { name: 'New document' }).click();
      await page.getByLabel('From a web page').fill(`http://127.0.0.1:${(site.address() as AddressInfo).port}/returns`);
      await page.locator('.modal select').first().selectOption({ label: 'Renewal' });
      assert.ok(await page.locator('.modal textarea[name="text"]').isDisabled(), 'the text waits on the URL');
      await shoot(page, 'knowledge-url-form');
      await page.locator('.modal').getByRole('button', { name: 'Add', exact: true }).click();
      await page.getByRole('cell', { name: 'Returns policy' }).waitFor();
      assert.match(await page.locator('tbody tr').first().innerText(), /Returns policy[\s\S]*127\.0\.0\.1/);
      await shoot(page, 'knowledge-url');
      await page.getByRole('button', { name: 'Delete' }).click();
      await page.getByText('No document yet').waitFor();
    } finally {
      await new Promise<void>((resolve) => site.close(() => resolve()));
    }

    // A PDF: sent whole, its text read by the server; its own title names it.
    await page.getByRole('button', { name: 'New document' }).click();
    await page.getByLabel('From a file').setInputFiles({ name: 'warranty.pdf', mimeType: 'application/pdf', buffer: fs.readFileSync(new URL('../fixtures/warranty.pdf', import.meta.url)) });
    await page.waitForFunction(() => document.querySelector<HTMLTextAreaElement>('.modal textarea[name="text"]')?.disabled === true);
    await page.locator('.modal select').first().selectOption({ label: 'Renewal' });
    await shoot(page, 'knowledge-pdf-form');
    await page.locator('.modal').getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByRole('cell', { name: 'Quarzel lamp warranty' }).waitFor();
    await page.getByLabel('Ask the knowledge base').fill('How many years is the Quarzel lamp guaranteed?');
    await page.getByRole('button', { name: 'Search' }).click();
    await found.locator('li').first().waitFor();
    assert.match(await found.innerText(), /Quarzel lamp warranty[\s\S]*guaranteed for seven years/);
    await shoot(page, 'knowledge-pdf');
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No document yet').waitFor();
    assert.deepEqual(seen, []);
  });
});

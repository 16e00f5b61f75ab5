/**
 * The SIP trunks screen in the real Chromium, against `dialer serve`: a trunk is added (a refused
 * address first, answered at its field), a second one made its failover by an edit that leaves the
 * password empty (the stored one is kept, and never shown), a trunk a configuration dials through
 * is refused deletion with the reason, and an unused one is deleted. Health lists SIP among the
 * providers. Screens are saved at 1280 px and at phone width in test/screenshots/.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { API_PREFIX } from '../../src/app.js';
import type { RunningServer } from '../../src/server.js';
import type { Client } from '../helpers/app.js';
import { chromiumAvailable } from '../helpers/browser.js';
import { launchDashboardBrowser, logIn, newContext, shoot, watchProblems } from '../helpers/dashboard.js';
import { freePort } from '../helpers/net.js';
import { serveDialer } from '../helpers/serve.js';

const EMAIL = 'admin@example.com';
const PASSWORD = 'admin-password-1';
const skip = chromiumAvailable() ? false : 'Chromium is not installed (apt-get install chromium)';

let server: RunningServer;
let admin: Client;
let browser: Browser;
let dataDir: string;
let reseller: string;

before(async () => {
  if (skip) return;
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-trunks-ui-'));
  ({ server, admin } = await serveDialer({
    PORT: String(await freePort()),
    HOST: '127.0.0.1',
    DIALER_DATA_DIR: dataDir,
    DIALER_JWT_SECRET: 'trunks-ui-secret-trunks-ui-secret-12345',
    DIALER_ADMIN_EMAIL: EMAIL,
    DIALER_ADMIN_PASSWORD: PASSWORD,
    DIALER_SIP_HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
  }));
  reseller = (await admin.post('/resellers', { name: 'Acme' })).body.id;
  browser = await launchDashboardBrowser();
  const warm = await fetch(`${server.url}${API_PREFIX}/app/login`, { signal: AbortSignal.timeout(300_000) });
  assert.equal(warm.status, 200);
});

after(async () => {
  await browser?.close();
  await server?.close();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

/** The row of the trunk named `name` (by its first cell: another row may name it as its failover). */
const row = (page: Page, name: string) => page.locator('tbody tr').filter({ has: page.locator('td:first-child', { hasText: name }) });

async function fillTrunk(page: Page, fields: Record<string, string>) {
  for (const [name, value] of Object.entries(fields)) await page.locator(`.modal input[name="${name}"]`).fill(value);
}

describe('the SIP trunks screen', { skip }, () => {
  it('adds, edits (the password kept and never shown), refuses to delete a trunk in use, deletes; health lists SIP', async () => {
    const health = (await admin.get('/health')).body;
    assert.ok(health.calls.providers.includes('SIP'), JSON.stringify(health.calls));

    const context = await newContext(browser);
    const page = await context.newPage();
    const problems = watchProblems(page);
    page.on('dialog', (d) => void d.accept());
    await logIn(page, server.url, EMAIL, PASSWORD, '/trunks');
    await page.getByRole('heading', { name: 'SIP trunks' }).waitFor();
    await page.getByText('No SIP trunks yet').waitFor();

    // A refused address is answered at its field; nothing is written.
    await page.getByRole('button', { name: 'Add a trunk' }).click();
    await fillTrunk(page, { name: 'Carrier A', address: '169.254.169.254', username: 'dialer', password: 'digest-secret', max_channels: '4', max_calls_per_second: '5' });
    await page.locator('.modal').getByRole('button', { name: 'Save' }).click();
    const message = page.locator('.modal .field-error .field-message');
    await message.waitFor();
    assert.match(await message.innerText(), /169\.254\.169\.254|link-local|metadata|not allowed|refus/i);
    await shoot(page, 'trunk-refused');
    assert.equal((await admin.get('/trunks')).body.total, 0);
    await fillTrunk(page, { address: 'sip.carrier.example:5060' });
    await page.locator('.modal').getByRole('button', { name: 'Save' }).click();
    await row(page, 'Carrier A').waitFor();
    assert.match(await row(page, 'Carrier A').innerText(), /0 \/ 4[\s\S]*5[\s\S]*dialer · password stored/);

    await page.getByRole('button', { name: 'Add a trunk' }).click();
    await fillTrunk(page, { name: 'Backup', address: 'backup.carrier.example' });
    await page.locator('.modal input[name="codec_PCMU"]').uncheck();
    await page.locator('.modal').getByRole('button', { name: 'Save' }).click();
    await row(page, 'Backup').waitFor();
    assert.match(await row(page, 'Backup').innerText(), /PCMA[\s\S]*0 \/ ∞[\s\S]*no limit/);

    // Edit: the password field is empty (never shown); left empty, the stored password stays.
    await row(page, 'Carrier A').getByRole('button', { name: 'Edit' }).click();
    assert.equal(await page.locator('.modal input[name="password"]').inputValue(), '');
    assert.doesNotMatch(await page.content(), /digest-secret/);
    await page.locator('.modal select[name="failover_trunk_id"]').selectOption({ label: 'Backup' });
    await shoot(page, 'trunk-form');
    await page.locator('.modal').getByRole('button', { name: 'Save' }).click();
    await page.locator('.modal').waitFor({ state: 'detached' });
    await row(page, 'Carrier A').getByText('Backup').waitFor();
    const trunks = (await admin.get('/trunks')).body.data as Array<{ id: string; name: string; has_password: boolean; failover_trunk_id: string | null }>;
    const main = trunks.find((t) => t.name === 'Carrier A')!;
    const backup = trunks.find((t) => t.name === 'Backup')!;
    assert.equal(main.has_password, true);
    assert.equal(main.failover_trunk_id, backup.id);
    await shoot(page, 'trunks');

    // A trunk a configuration dials through is not deleted, and the page says why.
    const tpl = await admin.post('/templates', { name: 'Via trunk', reseller_id: reseller, flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] } });
    const cfg = await admin.post('/configurations', { reseller_id: reseller, template: tpl.body.id, calling_provider: 'SIP', trunk_id: main.id, call_start_time: '00:00', call_end_time: '00:00', max_retry: 0 });
    assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
    await row(page, 'Carrier A').getByRole('button', { name: 'Delete' }).click();
    await page.locator('.toast-bad', { hasText: 'is the trunk of 1 configuration' }).waitFor();
    assert.equal((await admin.get(`/trunks/${main.id}`)).status, 200);

    await row(page, 'Backup').getByRole('button', { name: 'Delete' }).click();
    await row(page, 'Backup').waitFor({ state: 'detached' });
    assert.equal((await admin.get(`/trunks/${backup.id}`)).status, 404);
    assert.deepEqual(problems, [], 'no CSP refusal and no page error');
    await context.close();
  });
});

/**
 * The SIP trunks screen in the real Chromium, against `dialer serve`: a trunk is added (a refused
 * address first, answered at its field), a second one made its failover by an edit that leaves the
 * password empty (the stored one is kept, and never shown), a trunk a configuration dials through
 * is refused deletion with the reason, and an unused one is deleted. Health lists SIP among the
 * providers. A lead called through a trunk whose carrier answers 503 shows on the trunk's recent
 * SIP failures (status code and reason) and with its SIP status on the lead's page. Screens are
 * saved at 1280 px and at phone width in test/screenshots/.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { RunningServer } from '../../src/server.js';
import type { Client } from '../helpers/app.js';
import { chromiumAvailable } from '../helpers/browser.js';
import { ADMIN, type DashboardServed, logIn, newContext, serveDashboard, shoot, watchProblems } from '../helpers/dashboard.js';
import { startSipRefuser, type SipRefuser } from '../helpers/sip-refuser.js';

const { email: EMAIL, password: PASSWORD } = ADMIN;
const skip = chromiumAvailable() ? false : 'Chromium is not installed (apt-get install chromium)';

let server: RunningServer;
let admin: Client;
let browser: Browser;
let ui: DashboardServed;
let reseller: string;
let refuser: SipRefuser;

before(async () => {
  if (skip) return;
  ui = await serveDashboard('trunks-ui', {
    DIALER_SIP_HOST: '127.0.0.1',
    // The built-in agent carries calls (none reaches it here: the carrier refuses them).
    DIALER_AGENT: 'greeter',
    DIALER_POLL_MS: '100',
  });
  ({ server, admin, browser } = ui);
  refuser = await startSipRefuser(503, 'Service Unavailable');
  reseller = (await admin.post('/resellers', { name: 'Acme' })).body.id;
});

after(async () => {
  await ui?.close();
  await refuser?.close();
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

    // A carrier that answers 503: the lead's attempt fails with it, the trunk lists it, the lead's page shows it.
    const down = await admin.post('/trunks', { reseller_id: reseller, name: 'Down carrier', address: refuser.address, transport: 'udp', codecs: ['PCMU'] });
    assert.equal(down.status, 200, JSON.stringify(down.body));
    assert.equal((await admin.post('/numbers', { phone_number: '+12125550178', provider: 'SIP' })).status, 200);
    const tpl2 = await admin.post('/templates', { name: 'Via down', reseller_id: reseller, flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] } });
    const cfg2 = await admin.post('/configurations', { reseller_id: reseller, template: tpl2.body.id, calling_provider: 'SIP', trunk_id: down.body.id, call_start_time: '00:00', call_end_time: '00:00', max_retry: 0 });
    assert.equal(cfg2.status, 200, JSON.stringify(cfg2.body));
    const pushed = await admin.post('/leads', { request_id: 'down-1', template: 'Via down', reseller_id: reseller, payload: { customer_mobile_number: '+14155550143' } });
    assert.equal(pushed.status, 201, JSON.stringify(pushed.body));
    const leadId = pushed.body.lead_call_tracker_id as string;
    await row(page, 'Down carrier').getByRole('button', { name: 'Recent failures' }).click();
    const failures = page.locator('#trunk-failures');
    await failures.locator('tbody tr', { hasText: '503' }).waitFor({ timeout: 30_000 });
    assert.match(await failures.innerText(), /Recent SIP failures · Down carrier[\s\S]*503[\s\S]*SIP 503 Service Unavailable[\s\S]*error[\s\S]*attempt 1/);
    assert.equal(refuser.invites.size, 1);
    const listed = (await admin.get('/trunks')).body.data.find((t: { id: string }) => t.id === down.body.id);
    assert.equal(typeof listed.calls_per_second, 'number');
    // The toasts of the edits above leave first (they would cover the screens).
    await page.waitForFunction(() => document.querySelectorAll('.toast').length === 0);
    await shoot(page, 'trunk-failures');
    await failures.getByRole('link', { name: 'attempt 1' }).click();
    await page.locator('#attempts .sip-status', { hasText: '503' }).waitFor();
    assert.equal((await admin.get(`/leads/${leadId}/attempts`)).body.data[0].sip_status, 503);
    await shoot(page, 'lead-sip-status');

    assert.deepEqual(problems, [], 'no CSP refusal and no page error');
    await context.close();
  });
});

/**
 * A configuration's disclosure on real calls: `dialer serve` with the built-in greeter calls the
 * emulator's callee over Twilio's protocols. The callee hears the disclosure (in the lead's
 * language) before the agent's first line, whole though it talks over it, and the transcript opens
 * with it, marked; a callee who hangs up during it leaves a lead that says so. The dashboard shows
 * the setting in the configuration form and the flag on the lead's page (screenshots in
 * test/screenshots/).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { API_PREFIX } from '../../src/app.js';
import { decodeWav } from '../../src/lib/audio.js';
import { synthesize } from '../../src/lib/speech.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import type { RunningServer } from '../../src/server.js';
import type { Client } from '../helpers/app.js';
import { chromiumAvailable } from '../helpers/browser.js';
import { launchDashboardBrowser, logIn, newContext, shoot, watchProblems } from '../helpers/dashboard.js';
import { freePort } from '../helpers/net.js';
import { serveDialer } from '../helpers/serve.js';

const TWILIO = { accountSid: 'AC00000000000000000000000000000043', authToken: 'disclosure-e2e-token' };
const EMAIL = 'admin@example.com';
const PASSWORD = 'admin-password-1';
const ENGLISH = 'This call is from Acme, uses an automated assistant, and is recorded for quality and training purposes. You may ask us to stop calling at any time.';
const SPANISH = 'Esta llamada es de Acme, usa un asistente automático y se graba.';

let server: RunningServer;
let emulator: Emulator;
let admin: Client;
let dataDir: string;
let reseller: string;
let template: string;
let configurationId: string;

before(async () => {
  const port = await freePort();
  emulator = await startEmulator({
    dialerUrl: `http://127.0.0.1:${port}${API_PREFIX}`,
    twilio: TWILIO,
    plivo: { authId: 'MA00000000000000004300', authToken: 'x' },
    exotel: { accountSid: 'x', apiKey: 'x', apiToken: 'x' },
  });
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-disclosure-'));
  ({ server, admin } = await serveDialer({
    PORT: String(port),
    HOST: '127.0.0.1',
    DIALER_DATA_DIR: dataDir,
    DIALER_JWT_SECRET: 'disclosure-secret-disclosure-secret-43',
    DIALER_ADMIN_EMAIL: EMAIL,
    DIALER_ADMIN_PASSWORD: PASSWORD,
    DIALER_POLL_MS: '100',
    DIALER_AGENT: 'greeter',
    LOG_LEVEL: 'silent',
    TWILIO_ACCOUNT_SID: TWILIO.accountSid,
    TWILIO_AUTH_TOKEN: TWILIO.authToken,
    TWILIO_API_URL: emulator.url,
  }));
  reseller = (await admin.post('/resellers', { name: 'Acme' })).body.id;
  const tpl = await admin.post('/templates', { name: 'disclosed', reseller_id: reseller, flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Greet.' }] }] } });
  assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
  template = tpl.body.id;
  const cfg = await admin.post('/configurations', {
    reseller_id: reseller,
    template,
    calling_provider: 'PROVIDER_A',
    call_start_time: '00:00',
    call_end_time: '00:00',
    max_retry: 0,
    disclosure: { text: ENGLISH, languages: { es: SPANISH } },
  });
  assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
  assert.deepEqual(cfg.body.disclosure, { text: ENGLISH, languages: { es: SPANISH } });
  configurationId = cfg.body.id;
  assert.equal((await admin.post('/numbers', { phone_number: '+12125554300', provider: 'PROVIDER_A' })).status, 200);
});

after(async () => {
  await server?.close();
  await emulator?.close();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

async function call(callee: string, payload: Record<string, unknown>): Promise<{ lead: any; heard: Int16Array; clears: number[] }> {
  const pushed = await admin.post('/leads', { request_id: `d-${callee}`, template: 'disclosed', reseller_id: reseller, payload: { customer_mobile_number: callee, ...payload } });
  assert.equal(pushed.status, 201, JSON.stringify(pushed.body));
  const placed = await emulator.nextCall((c) => c.to === callee, 20_000);
  await placed.ended;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const lead = (await admin.get(`/leads/${pushed.body.lead_call_tracker_id}`)).body;
    if (lead.status === 'FINISHED') return { lead, heard: placed.received.pcm, clears: placed.received.clears };
    assert.ok(Date.now() < deadline, `lead still ${lead.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The best normalised correlation of `b` against the start of `a`, within a few ms of lag. */
function similarity(a: Int16Array, b: Int16Array): number {
  let best = 0;
  for (let lag = 0; lag <= 160; lag += 2) {
    let ab = 0;
    let aa = 0;
    let bb = 0;
    for (let i = 0; i < b.length && i + lag < a.length; i++) {
      ab += a[i + lag]! * b[i]!;
      aa += a[i + lag]! ** 2;
      bb += b[i]! ** 2;
    }
    best = Math.max(best, ab / Math.sqrt(aa * bb || 1));
  }
  return best;
}

describe('a disclosure', () => {
  it('is heard first, in the lead\'s language, whole though the callee talks over it, and opens the transcript marked', async () => {
    const callee = '+14155554301';
    emulator.script(callee, {
      answer: 'answer',
      // The callee talks as soon as Dialer does: over the disclosure, which goes on regardless; then
      // answers the agent, so the greeter says goodbye at once.
      steps: [{ waitForSpeech: { speakingMs: 300, timeoutMs: 20_000 } }, { say: 'Hello? Who is this?' }, { waitForAudio: 15_000 }, { say: 'Fine, thanks.' }, { waitForAudio: 15_000 }],
      maxSeconds: 40,
    });
    const { lead, heard, clears } = await call(callee, { language: 'es-MX' });
    const m = lead.metaData;
    assert.deepEqual(m.transcription[0], { role: 'assistant', content: SPANISH, disclosure: true, ...(m.transcription[0].at_ms !== undefined ? { at_ms: m.transcription[0].at_ms } : {}) });
    assert.ok(m.transcription.length >= 2 && !m.transcription.slice(1).some((t: any) => t.disclosure), JSON.stringify(m.transcription));
    assert.match(m.transcription[1].content, /automated call from Dialer/, 'the greeting comes after it');
    assert.deepEqual({ text: m.disclosure.text, language: m.disclosure.language, completed: m.disclosure.completed }, { text: SPANISH, language: 'es', completed: true });

    // What the callee heard first is the disclosure's speech, from its start, and nothing cut it short.
    const spoken = await synthesize(SPANISH, { sampleRateHz: 8000 });
    assert.ok(heard.length > spoken.length, `heard ${heard.length} samples, the disclosure is ${spoken.length}`);
    const score = similarity(heard, spoken);
    assert.ok(score > 0.9, `the first audio is the disclosure (correlation ${score.toFixed(3)})`);
    const disclosureMs = (spoken.length / 8000) * 1000;
    assert.ok(clears.every((at) => at > disclosureMs), `no clear during the disclosure (${disclosureMs} ms): ${clears.join(', ')}`);
  });

  it('that the callee hangs up during is recorded on the lead, and the agent never speaks', async () => {
    const callee = '+14155554302';
    emulator.script(callee, { answer: 'answer', steps: [{ waitForSpeech: { speakingMs: 800, timeoutMs: 20_000 } }, { hangup: true }], maxSeconds: 30 });
    const { lead } = await call(callee, {});
    const m = lead.metaData;
    assert.equal(m.transcription.length, 1, JSON.stringify(m.transcription));
    assert.deepEqual({ content: m.transcription[0].content, disclosure: m.transcription[0].disclosure }, { content: `${ENGLISH} [interrupted]`, disclosure: true });
    assert.equal(m.disclosure.completed, false);
    assert.equal(m.disclosure.text, ENGLISH);
    assert.equal(m.call_ended_by, 'customer');
    // The recording ends where the call did: the rest of the disclosure, never heard, is not in it.
    const full = (await synthesize(ENGLISH, { sampleRateHz: 8000 })).length / 8000;
    const rec = await fetch(lead.recording_url, { headers: { authorization: `Bearer ${admin.token}` } });
    assert.equal(rec.status, 200);
    const recorded = decodeWav(Buffer.from(await rec.arrayBuffer()));
    const recordedSeconds = recorded.pcm.length / recorded.sampleRateHz;
    assert.ok(recordedSeconds < full / 2, `recorded ${recordedSeconds} s of a ${full} s disclosure cut short`);
    assert.ok(recordedSeconds <= lead.duration_seconds + 1, `recorded ${recordedSeconds} s, the call lasted ${lead.duration_seconds} s`);

    // The dashboard: the flag on the lead's page, the setting in the configuration form.
    if (!chromiumAvailable()) return;
    const browser: Browser = await launchDashboardBrowser();
    try {
      const page = await (await newContext(browser)).newPage();
      const problems = watchProblems(page);
      await logIn(page, server.url, EMAIL, PASSWORD, `/leads/${lead.id}`);
      await page.locator('#lead-disclosure').waitFor();
      assert.match(await page.locator('#lead-disclosure').innerText(), /not finished: the call ended during it/);
      assert.match(await page.locator('.turn-disclosure').first().innerText(), /disclosure[\s\S]*This call is from Acme/i);
      // The recording drawn (the page fetches it after the rest): the short recording of a call cut short.
      await page.getByText('Download WAV').waitFor();
      await shoot(page, 'lead-disclosure');
      await page.goto(`${server.url}${API_PREFIX}/app/configurations?template=${template}`);
      await page.locator('#f-disclosure').waitFor();
      assert.equal(await page.locator('#f-disclosure').inputValue(), ENGLISH);
      assert.match(await page.locator('#f-disclosure_languages').inputValue(), /Esta llamada/);
      await page.locator('#f-disclosure').scrollIntoViewIfNeeded();
      await shoot(page, 'configuration-disclosure');
      // Emptying it saves a configuration without one.
      await page.locator('#f-disclosure').fill('');
      await page.getByRole('button', { name: 'Save configuration' }).click();
      await page.getByText('Configuration saved.').waitFor();
      const saved = await admin.get(`/configurations/${configurationId}`);
      assert.equal(saved.body.disclosure, undefined, 'a configuration without a disclosure answers without the field');
      assert.deepEqual(problems, []);
    } finally {
      await browser.close();
    }
  });
});

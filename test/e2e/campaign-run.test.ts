/**
 * A campaign run end to end: `dialer serve` with the greeter agent dials the provider emulator over
 * Twilio's protocol; each simulated callee answers, says one line and hangs up. What the campaign
 * promises is checked from the emulator's side, not Dialer's own count: never more calls live than
 * its cap (sampled while it runs, and from every call's created/ended times), starts spread by its
 * pace, no new call after a pause has had a second to take effect, the rest finished on resume;
 * progress adds up at every sample; the results CSV has a row per lead with its outcome.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { API_PREFIX } from '../../src/app.js';
import type { RunningServer } from '../../src/server.js';
import { startEmulator, type CalleeScript, type EmulatedCall, type Emulator } from '../../src/emulator/index.js';
import type { Client } from '../helpers/app.js';
import { freePort } from '../helpers/net.js';
import { serveDialer } from '../helpers/serve.js';

const TWILIO = { accountSid: 'AC00000000000000000000000000000049', authToken: 'campaign-run-token' };
/** A short callee: answers, says one line, hangs up. */
const SHORT_CALLEE: CalleeScript = { answer: 'answer', ringMs: 100, maxSeconds: 20, steps: [{ wait: 200 }, { say: 'Hi, thanks. Bye.' }, { hangup: true }] };
const LEADS = 40;
const CAP = 3;
const RATE = 2;

let server: RunningServer;
let emulator: Emulator;
let admin: Client;
let dataDir: string;
let reseller: string;

before(async () => {
  const port = await freePort();
  emulator = await startEmulator({
    dialerUrl: `http://127.0.0.1:${port}${API_PREFIX}`,
    twilio: TWILIO,
    plivo: { authId: 'MACAMPAIGNRUN0000001', authToken: 'unused-plivo' },
    exotel: { accountSid: 'campaign-run', apiKey: 'k', apiToken: 't' },
    defaultScript: SHORT_CALLEE,
    recordMedia: false,
  });
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-campaign-run-'));
  ({ server, admin } = await serveDialer({
    PORT: String(port),
    HOST: '127.0.0.1',
    DIALER_DATA_DIR: dataDir,
    DIALER_JWT_SECRET: 'campaign-run-secret-campaign-run-secret-1',
    DIALER_ADMIN_EMAIL: 'admin@example.com',
    DIALER_ADMIN_PASSWORD: 'admin-password-1',
    DIALER_POLL_MS: '100',
    DIALER_AGENT: 'greeter',
    DIALER_OUTBOUND_ALLOW: '127.0.0.1',
    LOG_LEVEL: 'silent',
    TWILIO_ACCOUNT_SID: TWILIO.accountSid,
    TWILIO_AUTH_TOKEN: TWILIO.authToken,
    TWILIO_API_URL: emulator.url,
  }));
  reseller = (await admin.post('/resellers', { name: 'Campaign run' })).body.id;
  for (let i = 0; i < 10; i++) assert.equal((await admin.post('/numbers', { phone_number: `+1212555${5100 + i}`, provider: 'PROVIDER_A' })).status, 200);
  const flow = { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Greet the customer.' }] }] };
  const tpl = await admin.post('/templates', { name: 'run', reseller_id: reseller, flow });
  assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
  const cfg = await admin.post('/configurations', { reseller_id: reseller, template: tpl.body.id, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00', max_retry: 0 });
  assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
});

after(async () => {
  await server?.close();
  await emulator?.close();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

/** The most calls live at once, from the emulator's created and ended times of each call. */
function peakLive(calls: EmulatedCall[]): number {
  const events = calls.flatMap((c) => [
    { at: c.createdAt, d: 1 },
    { at: c.endedAt ?? Number.POSITIVE_INFINITY, d: -1 },
  ]);
  // An end and a start at the same millisecond: the end first (the number and the slot were given back).
  events.sort((a, b) => a.at - b.at || a.d - b.d);
  let live = 0;
  let peak = 0;
  for (const e of events) peak = Math.max(peak, (live += e.d));
  return peak;
}

describe('a campaign run through the emulator', { timeout: 240_000 }, () => {
  it('keeps to its cap and pace at the far side, pauses within a second, resumes, and reports a row per lead', async () => {
    const created = await admin.post('/campaigns', { name: 'Forty', reseller_id: reseller, template: 'run', max_concurrent_calls: CAP, max_calls_per_second: RATE });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id: string = created.body.id;
    const numbers = new Set<string>();
    const leads = Array.from({ length: LEADS }, (_, i) => {
      const to = `+1415555${String(6100 + i).padStart(4, '0')}`;
      numbers.add(to);
      return { request_id: `run-${i}`, template: 'run', reseller_id: reseller, campaign_id: id, payload: { customer_mobile_number: to, customer_name: `Callee ${i}` } };
    });
    const pushed = await admin.post('/leads/batch', { leads });
    assert.equal(pushed.body.queued, LEADS, JSON.stringify(pushed.body));
    const ours = () => emulator.calls.filter((c) => c.direction === 'outbound' && numbers.has(c.to));
    const liveNow = () => ours().filter((c) => c.endedAt === undefined).length;

    let samples = 0;
    let peakSampled = 0;
    const progress = async () => {
      const body = (await admin.get(`/campaigns/${id}`)).body;
      const p = body.progress;
      assert.equal(p.queued + p.in_progress + p.finished, p.total, JSON.stringify(p));
      assert.equal(p.total, LEADS);
      const live = liveNow();
      assert.ok(live <= CAP, `${live} calls live at the emulator`);
      peakSampled = Math.max(peakSampled, live);
      samples++;
      return body;
    };
    const until = async (check: (body: any) => boolean) => {
      for (;;) {
        if (check(await progress())) return;
        await new Promise((r) => setTimeout(r, 25));
      }
    };

    await until((b) => b.progress.finished >= 12);
    const paused = await admin.post(`/campaigns/${id}/pause`);
    assert.equal(paused.status, 200, JSON.stringify(paused.body));
    const pausedAt = Date.now();
    await until((b) => b.progress.in_progress === 0 && liveNow() === 0);
    // The workers go on claiming meanwhile: a lead without the campaign, pushed now, is called ...
    const plainTo = '+14155557999';
    const plain = await admin.post('/leads', { request_id: 'run-plain', template: 'run', reseller_id: reseller, payload: { customer_mobile_number: plainTo } });
    assert.equal(plain.status, 201, JSON.stringify(plain.body));
    for (;;) {
      const lead = (await admin.get(`/leads/${plain.body.lead_call_tracker_id}`)).body;
      if (lead.status === 'FINISHED') break;
      await progress();
      await new Promise((r) => setTimeout(r, 25));
    }
    // ... while no call of the paused campaign was created more than a second after the pause answered.
    const late = ours().filter((c) => c.createdAt > pausedAt + 1000);
    assert.deepEqual(late.map((c) => c.to), []);
    const held = await progress();
    assert.equal(held.status, 'paused');
    assert.ok(held.progress.queued > 0, JSON.stringify(held.progress));

    assert.equal((await admin.post(`/campaigns/${id}/resume`)).status, 200);
    await until((b) => b.status === 'completed');
    const done = await progress();
    assert.equal(done.progress.finished, LEADS);
    assert.ok(samples > 10, `${samples} samples`);

    const calls = ours();
    assert.equal(calls.length, LEADS, 'one call per lead (no retries: every callee answers)');
    assert.ok(peakSampled >= 1 && peakSampled <= CAP);
    const peak = peakLive(calls);
    assert.ok(peak <= CAP, `${peak} calls live at once at the emulator`);
    assert.equal(peak, CAP, 'the cap is reached (it is what limits the run)');
    // The pace: call starts at the emulator no closer than 400 ms (1/rate = 500 ms, less the dial's jitter).
    const starts = calls.map((c) => c.createdAt).sort((a, b) => a - b);
    const gaps = starts.slice(1).map((s, i) => s - starts[i]!);
    assert.ok(Math.min(...gaps) >= 400, `closest call starts ${Math.min(...gaps)} ms apart`);

    const csv = await admin.raw({ method: 'GET', path: `/campaigns/${id}/results`, headers: { accept: 'text/csv' } });
    assert.equal(csv.status, 200);
    assert.match(String(csv.headers['content-type']), /text\/csv/);
    const [header, ...rows] = String(csv.body).trim().split(/\r?\n/);
    const columns = header!.split(',');
    const at = (name: string) => columns.indexOf(name);
    assert.ok(at('request_id') >= 0 && at('outcome') >= 0 && at('number') >= 0, header);
    assert.equal(rows.length, LEADS);
    const cells = rows.map((r) => r.split(','));
    assert.deepEqual(new Set(cells.map((c) => c[at('request_id')])), new Set(leads.map((l) => l.request_id)));
    for (const c of cells) {
      assert.equal(c[at('status')], 'FINISHED', c.join(','));
      assert.ok(c[at('outcome')]!.length > 0, c.join(','));
    }
    assert.deepEqual(done.progress.by_outcome, { [cells[0]![at('outcome')]!]: LEADS });
  });
});

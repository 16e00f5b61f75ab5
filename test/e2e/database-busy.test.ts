/**
 * A busy embedded database does not stall a live call: `dialer serve` on PGlite (the default) is
 * speaking a long reply to the emulator's callee when a statement holds the database for three
 * seconds. The agent's audio keeps reaching the callee as it plays: measured on the receiving side,
 * from the arrival of Dialer's media frames at the emulator.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { API_PREFIX } from '../../src/app.js';
import type { RunningServer } from '../../src/server.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import type { Client } from '../helpers/app.js';
import { freePort } from '../helpers/net.js';
import { startOpenAIServer, type OpenAIServer } from '../helpers/openai-server.js';
import { serveDialer } from '../helpers/serve.js';

const TWILIO = { accountSid: 'AC00000000000000000000000000000021', authToken: 'busy-db-token' };
/**
 * Dialer makes a call's audio at most half a second ahead of its playout and hands it over in
 * pieces of about 200 ms: frames arrive in bursts about 200 ms apart. A pause between two frames'
 * arrival longer than twice the half second (the margin is for a busy test machine) means the
 * callee's playout ran dry: a gap heard on the line. The statement holds the database four times
 * as long.
 */
const HEARD_GAP_MS = 1000;
const BUSY_SECONDS = 4;

/** One long sentence: spoken by one TTS request, so no pause between sentences is the speech service's. */
const REPLY =
  'Hello Ana, this is Acme calling about your order, which left our warehouse this morning and is on its way to you, ' +
  'and the courier will ring your bell between nine and eleven tomorrow, or if nobody is at home the parcel goes to the shop on the corner, ' +
  'where you can collect it until Friday evening with the code we will send you by message';

let server: RunningServer;
let emulator: Emulator;
let ai: OpenAIServer;
let admin: Client;
let dataDir: string;

before(async () => {
  const port = await freePort();
  ai = await startOpenAIServer();
  emulator = await startEmulator({
    dialerUrl: `http://127.0.0.1:${port}${API_PREFIX}`,
    twilio: TWILIO,
    plivo: { authId: 'MAX', authToken: 'x' },
    exotel: { accountSid: 'x', apiKey: 'x', apiToken: 'x' },
  });
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-busy-'));
  ({ server, admin } = await serveDialer({
    PORT: String(port),
    HOST: '127.0.0.1',
    DIALER_DATA_DIR: dataDir,
    DIALER_JWT_SECRET: 'busy-db-secret-busy-db-secret-busy-db-01',
    DIALER_ADMIN_EMAIL: 'admin@example.com',
    DIALER_ADMIN_PASSWORD: 'admin-password-1',
    DIALER_POLL_MS: '100',
    LOG_LEVEL: 'silent',
    TWILIO_ACCOUNT_SID: TWILIO.accountSid,
    TWILIO_AUTH_TOKEN: TWILIO.authToken,
    TWILIO_API_URL: emulator.url,
    LLM_BASE_URL: ai.url,
    STT_BASE_URL: ai.url,
  }));
});

after(async () => {
  await server?.close();
  await emulator?.close();
  await ai?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('a live call while the embedded database is busy', () => {
  it('keeps sending the agent audio on time while a statement holds the database', async () => {
    assert.equal(server.db.kind, 'pglite');
    const reseller = (await admin.post('/resellers', { name: 'Busy' })).body.id;
    const flow = { initial_node: 'talk', nodes: [{ node_name: 'talk', task_messages: [{ role: 'system', content: 'Tell the customer about the delivery.' }] }] };
    const tpl = await admin.post('/templates', { name: 'busy', reseller_id: reseller, flow });
    assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
    const cfg = await admin.post('/configurations', { reseller_id: reseller, template: tpl.body.id, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00' });
    assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
    assert.equal((await admin.post('/numbers', { phone_number: '+12125550321', provider: 'PROVIDER_A' })).status, 200);
    ai.chat.push({ text: REPLY });
    const callee = '+14155550321';
    emulator.script(callee, { answer: 'answer', steps: [{ waitForAudio: 40_000 }, { hangup: true }], maxSeconds: 60 });
    const pushed = await admin.post('/leads', { request_id: 'busy-1', template: 'busy', reseller_id: reseller, payload: { customer_mobile_number: callee } });
    assert.equal(pushed.status, 201, JSON.stringify(pushed.body));

    const call = await emulator.nextCall((c) => c.to === callee, 30_000);
    // Once the reply is well under way (a second of it has arrived), hold the database.
    while (call.received.audioFrames < 50) {
      if (call.wsCloseCode !== undefined) {
        const lead = (await admin.get(`/leads/${pushed.body.lead_call_tracker_id}`)).body;
        assert.fail(`the call ended before the agent spoke: ${JSON.stringify(lead.metaData)}`);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    const before = call.received.audioFrames;
    await server.db.query(`SELECT pg_sleep(${BUSY_SECONDS})`);
    const during = call.received.audioAtMs.slice(before - 1);
    await call.ended;

    // Frames kept coming while the statement ran: its seconds were spoken, not queued behind it.
    assert.ok(during.length - 1 >= (BUSY_SECONDS * 1000) / 20 / 2, `${during.length - 1} frames arrived while the database was busy`);
    const gaps = during.slice(1).map((at, i) => at - during[i]!);
    assert.ok(Math.max(...gaps) < HEARD_GAP_MS, `longest pause between frames ${Math.max(...gaps)} ms`);
    // And the call was carried to its end as usual.
    for (let lead = (await admin.get(`/leads/${pushed.body.lead_call_tracker_id}`)).body; lead.status !== 'FINISHED'; lead = (await admin.get(`/leads/${pushed.body.lead_call_tracker_id}`)).body) {
      assert.equal(lead.status, 'PROCESSING', JSON.stringify(lead.metaData));
      await new Promise((r) => setTimeout(r, 100));
    }
  });
});

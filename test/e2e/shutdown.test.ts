/**
 * A call cut by Dialer's own shutdown is not the customer's answer: with a one-second grace period,
 * SIGTERM-style close() during a live call (through the provider emulator's real Twilio wire
 * protocol) hangs it up, and the lead goes to RETRY with the shutdown as its error, never a
 * customer outcome such as no_response.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, it } from 'node:test';
import { API_PREFIX } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openAndMigrate } from '../../src/db/index.js';
import { createLogger } from '../../src/lib/logger.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { client } from '../helpers/app.js';
import { migratedDataDir } from '../helpers/db.js';
import { freePort } from '../helpers/net.js';

const TWILIO = { accountSid: 'AC00000000000000000000000000000009', authToken: 'twilio-auth-token-shutdown' };
let emulator: Emulator;
let server: RunningServer | undefined;
let dataDir: string;
let env: Record<string, string>;

before(async () => {
  const port = await freePort();
  emulator = await startEmulator({
    dialerUrl: `http://127.0.0.1:${port}${API_PREFIX}`,
    twilio: TWILIO,
    plivo: { authId: 'MAUNUSED000000000001', authToken: 'unused' },
    exotel: { accountSid: 'unused', apiKey: 'unused', apiToken: 'unused' },
  });
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-shutdown-'));
  env = {
    PORT: String(port),
    HOST: '127.0.0.1',
    DIALER_DATA_DIR: dataDir,
    DIALER_JWT_SECRET: 'shutdown-secret-shutdown-secret-shutdown',
    DIALER_ADMIN_EMAIL: 'admin@example.com',
    DIALER_ADMIN_PASSWORD: 'admin-password-1',
    DIALER_POLL_MS: '100',
    DIALER_AGENT: 'greeter',
    DIALER_SHUTDOWN_GRACE_SECONDS: '1',
    LOG_LEVEL: 'silent',
    TWILIO_ACCOUNT_SID: TWILIO.accountSid,
    TWILIO_AUTH_TOKEN: TWILIO.authToken,
    TWILIO_API_URL: emulator.url,
  };
  for (const [k, v] of Object.entries(env)) process.env[k] = v;
  // The migrated database is in the data directory already: this file is about stopping, not a first start.
  await migratedDataDir(dataDir);
  server = await startServer(loadConfig(env), createLogger('silent'));
});
after(async () => {
  await server?.close();
  await emulator?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

it('a call hung up by the shutdown goes to RETRY as an error, not a customer outcome', async () => {
  const anon = client(server!.app);
  const login = await anon.post('/login', { email: env.DIALER_ADMIN_EMAIL, password: env.DIALER_ADMIN_PASSWORD });
  const admin = client(server!.app, login.body.access_token);
  const reseller = (await admin.post('/resellers', { name: 'Shutdown' })).body.id;
  const tpl = await admin.post('/templates', { name: 'cut', reseller_id: reseller, flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Greet.' }] }] } });
  assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
  const cfg = await admin.post('/configurations', { reseller_id: reseller, template: tpl.body.id, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00', max_retry: 2, retry_offset: 3600 });
  assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
  assert.equal((await admin.post('/numbers', { phone_number: '+12125550199', provider: 'PROVIDER_A' })).status, 200);
  const callee = '+16465550199';
  // The callee answers and stays on the line, silent, far longer than the grace period.
  emulator.script(callee, { answer: 'answer', steps: [{ wait: 20_000 }], maxSeconds: 30 });
  const pushed = await admin.post('/leads', { request_id: 'cut-1', template: 'cut', reseller_id: reseller, payload: { customer_mobile_number: callee } });
  assert.equal(pushed.status, 201);
  const id = pushed.body.lead_call_tracker_id;
  const call = await emulator.nextCall((c) => c.to === callee, 20_000);
  // The conversation is under way: Dialer's greeting is reaching the callee.
  while (call.received.audioFrames < 10) await new Promise((r) => setTimeout(r, 50));

  const stopping = server!.close();
  server = undefined;
  await stopping;
  await call.ended;

  const db = await openAndMigrate(loadConfig(env));
  try {
    const { rows } = await db.query<{ status: string; outcome: string | null; meta_data: Record<string, any>; attempt_count: number }>('SELECT status, outcome, meta_data, attempt_count FROM leads WHERE id = $1', [id]);
    const lead = rows[0]!;
    assert.equal(lead.status, 'RETRY', JSON.stringify(lead));
    assert.equal(lead.attempt_count, 1);
    assert.equal(lead.meta_data.call_ended_by, undefined, 'no customer ending is recorded');
    assert.match(lead.meta_data.last_error.message, /Dialer stopped/);
    const attempts = await db.query<{ outcome: string }>('SELECT outcome FROM call_attempts WHERE lead_id = $1', [id]);
    assert.deepEqual(attempts.rows.map((r) => r.outcome), ['error']);
  } finally {
    await db.close();
  }
});

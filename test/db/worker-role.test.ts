/**
 * `dialer serve --role worker` carries a call through the provider emulator (answer and status
 * callbacks, the media stream) and serves health and metrics, and none of the API. Two API processes
 * on one database are in api-processes.postgres.test.ts.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { API_PREFIX } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/lib/logger.js';
import { startEmulator } from '../../src/emulator/index.js';
import { startServer } from '../../src/server.js';
import { client } from '../helpers/app.js';
import { createPgDatabase, migratedDataDir, testBackend } from '../helpers/db.js';
import { freePort } from '../helpers/net.js';

const EMAIL = 'admin@example.com';
const PASSWORD = 'admin-password-1';
const SECRET = 'any-process-secret-any-process-secret-01';

const backend = testBackend();

describe('--role worker', () => {
  it('carries a call (provider callbacks and media stream) and serves health and metrics, and none of the API', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-worker-role-'));
    const db = backend === 'postgres' ? await createPgDatabase() : undefined;
    // On the embedded database, the migrated database is in the data directory already (not a first start).
    if (!db) await migratedDataDir(dataDir);
    const port = await freePort();
    const twilio = { accountSid: 'AC00000000000000000000000000000036', authToken: 'worker-role-token' };
    const emulator = await startEmulator({
      dialerUrl: `http://127.0.0.1:${port}${API_PREFIX}`,
      twilio,
      plivo: { authId: 'MAX', authToken: 'x' },
      exotel: { accountSid: 'x', apiKey: 'x', apiToken: 'x' },
    });
    const config = loadConfig({
      PORT: String(port), HOST: '127.0.0.1', DIALER_DATA_DIR: dataDir, DATABASE_URL: db?.url ?? '', DIALER_JWT_SECRET: SECRET,
      DIALER_ADMIN_EMAIL: EMAIL, DIALER_ADMIN_PASSWORD: PASSWORD, DIALER_METRICS_TOKEN: 'worker-metrics-token-01', DIALER_AGENT: 'greeter', DIALER_POLL_MS: '100',
      TWILIO_ACCOUNT_SID: twilio.accountSid, TWILIO_AUTH_TOKEN: twilio.authToken, TWILIO_API_URL: emulator.url,
    });
    const callee = '+14155550936';
    let leadId: string;
    try {
      // The lead is pushed through an API process (no scheduler), which then stops.
      const api = await startServer(config, createLogger('silent'), undefined, { role: 'api' });
      try {
        const login = await client(api.app).post('/login', { email: EMAIL, password: PASSWORD });
        const admin = client(api.app, login.body.access_token);
        const reseller = (await admin.post('/resellers', { name: 'Worker' })).body.id;
        const flow = { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] };
        const tpl = await admin.post('/templates', { name: 'worker', reseller_id: reseller, flow });
        assert.equal((await admin.post('/configurations', { reseller_id: reseller, template: tpl.body.id, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00' })).status, 200);
        assert.equal((await admin.post('/numbers', { phone_number: '+12125550936', provider: 'PROVIDER_A' })).status, 200);
        const pushed = await admin.post('/leads', { request_id: 'worker-1', template: 'worker', reseller_id: reseller, payload: { customer_mobile_number: callee } });
        assert.equal(pushed.status, 201, JSON.stringify(pushed.body));
        leadId = pushed.body.lead_call_tracker_id;
      } finally {
        await api.close();
      }

      // The callee hears the greeter out, then hangs up.
      emulator.script(callee, { answer: 'answer', steps: [{ waitForAudio: 30_000 }, { hangup: true }], maxSeconds: 60 });
      const server = await startServer(config, createLogger('silent'), undefined, { role: 'worker' });
      try {
        const at = (p: string, init?: RequestInit) => fetch(`${server.url}${API_PREFIX}${p}`, init);
        const call = await emulator.nextCall((c) => c.to === callee, 60_000);
        await call.ended;
        // The answer and status callbacks reached the worker and its media stream carried the greeting.
        assert.ok(call.received.audioFrames > 0, 'the callee heard nothing');
        let lead: { status: string; outcome: string | null } | undefined;
        for (;;) {
          lead = (await server.db.query<{ status: string; outcome: string | null }>('SELECT status, outcome FROM leads WHERE id = $1', [leadId])).rows[0];
          if (lead?.status !== 'PROCESSING' && lead?.status !== 'BACKLOG') break;
          await new Promise((r) => setTimeout(r, 100));
        }
        assert.equal(lead?.status, 'FINISHED', JSON.stringify(lead));

        assert.equal((await at('/health')).status, 200);
        assert.equal((await at('/metrics', { headers: { authorization: 'Bearer worker-metrics-token-01' } })).status, 200);
        for (const [method, p] of [['POST', '/login'], ['POST', '/leads'], ['GET', '/leads'], ['GET', `/leads/${leadId}`], ['GET', '/openapi.json'], ['GET', '/templates'], ['POST', '/analytics'], ['GET', '/playground'], ['GET', '/docs'], ['POST', `/webrtc/${leadId}/offer`]] as const) {
          assert.equal((await at(p, { method, ...(method === 'POST' ? { headers: { 'content-type': 'application/json' }, body: '{}' } : {}) })).status, 404, `${method} ${p}`);
        }
      } finally {
        await server.close();
      }
    } finally {
      await emulator.close();
      await db?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

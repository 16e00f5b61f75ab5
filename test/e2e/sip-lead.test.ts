/**
 * A lead called through a SIP trunk, end to end: `dialer serve` (API, scheduler, the SIP driver,
 * the built-in greeter) places the call through a trunk added with POST /trunks whose carrier is
 * down (it answers 503), so the call goes at once to the trunk's failover trunk, baresip, which
 * answers, speaks, records, and hangs up when its speech is over.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { OutboundClient } from '../../src/lib/outbound/index.js';
import { decodeWav, rms } from '../../src/lib/audio.js';
import { createLogger } from '../../src/lib/logger.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { client, type TestApp } from '../helpers/app.js';
import { startBaresip, type Baresip } from '../helpers/baresip.js';
import { startSipRefuser, type SipRefuser } from '../helpers/sip-refuser.js';
import { speechClip, RATE_HZ } from '../helpers/clips.js';
import { migratedDataDir } from '../helpers/db.js';
import { freePort } from '../helpers/net.js';
import { buildWorld, type World } from '../helpers/world.js';

const CALLEE = '+14155550142';
const CALLER_ID = '+12125550177';

function loudSeconds(pcm: Int16Array): number {
  let loud = 0;
  for (let i = 0; i + 160 <= pcm.length; i += 160) if (rms(pcm.subarray(i, i + 160)) > 300) loud++;
  return loud * 0.02;
}

describe('a lead called through a SIP trunk (baresip)', () => {
  let server: RunningServer;
  let baresip: Baresip;
  let down: SipRefuser;
  let t: TestApp;
  let w: World;
  let dataDir: string;

  before(async () => {
    const speech = await speechClip('sip-callee', 'Hello, this is Sam. Yes, I can talk now, thank you for calling.');
    baresip = await startBaresip({ user: CALLEE, speech: speech.pcm, sampleRateHz: RATE_HZ });
    down = await startSipRefuser(503, 'Service Unavailable');
    const port = await freePort();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-sip-e2e-'));
    const env = {
      PORT: String(port),
      HOST: '127.0.0.1',
      DIALER_DATA_DIR: dataDir,
      DIALER_JWT_SECRET: 'e2e-secret-e2e-secret-e2e-secret-012345',
      DIALER_ADMIN_EMAIL: 'admin@example.com',
      DIALER_ADMIN_PASSWORD: 'admin-password-1',
      DIALER_POLL_MS: '100',
      DIALER_AGENT: 'greeter',
      DIALER_SANDBOX: 'false',
      // baresip listens on loopback: the operator allows it, as for an on-premises PBX.
      DIALER_OUTBOUND_ALLOW: '127.0.0.0/8',
      DIALER_SIP_HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
    };
    // The migrated database is in the data directory already: this file is about calls, not a first start.
    await migratedDataDir(dataDir);
    server = await startServer(loadConfig(env), createLogger('silent'));
    const anon = client(server.app);
    const login = await anon.post('/login', { email: env.DIALER_ADMIN_EMAIL, password: env.DIALER_ADMIN_PASSWORD });
    assert.equal(login.status, 200);
    t = { app: server.app, db: server.db, config: loadConfig(env), outbound: new OutboundClient(), admin: client(server.app, login.body.access_token), anon, as: (token) => client(server.app, token), close: async () => undefined };
    w = await buildWorld(t);
  });

  after(async () => {
    await server?.close();
    await baresip?.close();
    await down?.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('fails over from a trunk answering 503 and finishes with a call id, a transcript and recordings of both voices, ended by the callee', async () => {
    const trunk = await w.reseller1.post('/trunks', { reseller_id: w.r1, name: 'baresip', address: baresip.address, transport: 'udp', codecs: ['PCMU', 'PCMA'], max_channels: 2 });
    assert.equal(trunk.status, 200, JSON.stringify(trunk.body));
    const first = await w.reseller1.post('/trunks', { reseller_id: w.r1, name: 'down', address: down.address, transport: 'udp', codecs: ['PCMU'], max_channels: 2, failover_trunk_id: trunk.body.id });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal((await t.admin.post('/numbers', { phone_number: CALLER_ID, provider: 'SIP' })).status, 200);
    const tpl = await w.reseller1.post('/templates', {
      name: 'sip-e2e',
      reseller_id: w.r1,
      flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Greet the customer.' }] }] },
    });
    assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
    const cfg = await w.reseller1.post('/configurations', {
      reseller_id: w.r1, template: tpl.body.id, calling_provider: 'SIP', trunk_id: first.body.id, call_start_time: '00:00', call_end_time: '00:00', max_retry: 0,
    });
    assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
    const pushed = await w.reseller1.post('/leads', { request_id: 'sip-1', template: 'sip-e2e', reseller_id: w.r1, payload: { customer_mobile_number: CALLEE } });
    assert.equal(pushed.status, 201, JSON.stringify(pushed.body));
    const leadId = pushed.body.lead_call_tracker_id as string;

    let lead: any;
    const deadline = Date.now() + 60_000;
    for (;;) {
      lead = (await w.reseller1.get(`/leads/${leadId}`)).body;
      if (lead.status === 'FINISHED' || lead.status === 'RETRY') break;
      assert.ok(Date.now() < deadline, `lead still ${lead.status}: ${JSON.stringify(lead)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(lead.status, 'FINISHED', JSON.stringify(lead));
    assert.match(lead.call_id, /^dialer-[0-9a-f]+$/, JSON.stringify(lead));
    const meta = lead.metaData ?? lead.meta_data;
    assert.equal(meta.call_ended_by, 'customer', JSON.stringify(meta));
    // The first trunk refused it once; the failover trunk carried it, the refusal's status kept.
    assert.equal(meta.sip_trunk_id, trunk.body.id);
    assert.equal(down.invites.size, 1);
    assert.deepEqual(
      (meta.sip_failover as Array<{ trunk_id: string; status: number }>).map(({ trunk_id, status }) => ({ trunk_id, status })),
      [{ trunk_id: first.body.id, status: 503 }],
    );
    assert.ok(Array.isArray(meta.transcription) && meta.transcription.length > 0, JSON.stringify(meta));
    // Dialer's recording holds the callee's speech.
    assert.ok(lead.recording_url, 'recorded');
    const recording = await fetch(lead.recording_url, { headers: { authorization: `Bearer ${w.reseller1.token}` } });
    assert.equal(recording.status, 200);
    const pcm = decodeWav(new Uint8Array(await recording.arrayBuffer())).pcm;
    assert.ok(loudSeconds(pcm) >= 2, `the recording has ${loudSeconds(pcm)} s of sound`);
    // baresip's own recording holds the agent's speech.
    await baresip.waitFor(/terminated/);
    const { heard } = await baresip.recordings();
    assert.ok(heard && loudSeconds(heard) >= 1, `baresip heard ${heard ? loudSeconds(heard) : 0} s of the agent`);
  });
});

/**
 * A lead called through a SIP trunk, end to end: `dialer serve` (API, scheduler, the SIP driver,
 * the built-in greeter) places the call through a trunk added with POST /trunks whose carrier is
 * down (it answers 503), so the call goes at once to the trunk's failover trunk, baresip, which
 * answers, speaks, records, and hangs up when its speech is over. Then the other way: baresip,
 * at that trunk's address, calls the SIP number at Dialer's SIP address; the greeter answers on
 * an INBOUND lead; outside the inbound window the block message is spoken instead; and requests
 * that no rule answers are refused with their statuses (a lean caller, helpers/sip-caller.ts).
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
import { freeUdpPort, startBaresip, type Baresip } from '../helpers/baresip.js';
import { startSipCaller } from '../helpers/sip-caller.js';
import { startSipRefuser, type SipRefuser } from '../helpers/sip-refuser.js';
import { speechClip, RATE_HZ } from '../helpers/clips.js';
import { migratedDataDir } from '../helpers/db.js';
import { freePort } from '../helpers/net.js';
import { buildWorld, type World } from '../helpers/world.js';

const CALLEE = '+14155550142';
const CALLER_ID = '+12125550177';
const REDIRECT_TO = '+12125550188';

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
  let sipPort: number;
  let trunk: { id: string };
  let first: { id: string };
  let cfg: Record<string, unknown>;

  async function finished(leadId: string): Promise<any> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const lead = (await w.reseller1.get(`/leads/${leadId}`)).body;
      if (lead.status === 'FINISHED' || lead.status === 'RETRY') return lead;
      assert.ok(Date.now() < deadline, `lead still ${lead.status}: ${JSON.stringify(lead)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async function inboundLeads(): Promise<string[]> {
    const { rows } = await t.db.query<{ id: string }>("SELECT id FROM leads WHERE call_direction = 'INBOUND' ORDER BY created_at");
    return rows.map((r) => r.id);
  }

  before(async () => {
    const speech = await speechClip('sip-callee', 'Hello, this is Sam. Yes, I can talk now, thank you for calling.');
    // Three seconds of quiet first: most of the agent's greeting is heard before the person talks over it.
    const voice = new Int16Array(3 * RATE_HZ + speech.pcm.length);
    voice.set(speech.pcm, 3 * RATE_HZ);
    baresip = await startBaresip({ user: CALLEE, speech: voice, sampleRateHz: RATE_HZ });
    down = await startSipRefuser(503, 'Service Unavailable');
    const port = await freePort();
    sipPort = await freeUdpPort();
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
      // A port of its own: trunks send their calls there.
      DIALER_SIP_PORT: String(sipPort),
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
    const created = await w.reseller1.post('/trunks', { reseller_id: w.r1, name: 'baresip', address: baresip.address, transport: 'udp', codecs: ['PCMU', 'PCMA'], max_channels: 2 });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    trunk = created.body;
    const refusing = await w.reseller1.post('/trunks', { reseller_id: w.r1, name: 'down', address: down.address, transport: 'udp', codecs: ['PCMU'], max_channels: 2, failover_trunk_id: trunk.id });
    assert.equal(refusing.status, 200, JSON.stringify(refusing.body));
    first = refusing.body;
    assert.equal((await t.admin.post('/numbers', { phone_number: CALLER_ID, provider: 'SIP' })).status, 200);
    const tpl = await w.reseller1.post('/templates', {
      name: 'sip-e2e',
      reseller_id: w.r1,
      flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Greet the customer.' }] }] },
    });
    assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
    const configured = await w.reseller1.post('/configurations', {
      reseller_id: w.r1, template: tpl.body.id, calling_provider: 'SIP', trunk_id: first.id, call_start_time: '00:00', call_end_time: '00:00', max_retry: 0,
      // Calls to the SIP number are answered all day.
      enable_inbound: true, inbound_call_start_time: '00:00', inbound_call_end_time: '00:00', inbound_call_timezone: 'UTC',
    });
    assert.equal(configured.status, 200, JSON.stringify(configured.body));
    cfg = configured.body;
  });

  after(async () => {
    await server?.close();
    await baresip?.close();
    await down?.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('fails over from a trunk answering 503 and finishes with a call id, a transcript and recordings of both voices, ended by the callee', async () => {
    const pushed = await w.reseller1.post('/leads', { request_id: 'sip-1', template: 'sip-e2e', reseller_id: w.r1, payload: { customer_mobile_number: CALLEE } });
    assert.equal(pushed.status, 201, JSON.stringify(pushed.body));
    const leadId = pushed.body.lead_call_tracker_id as string;

    const lead = await finished(leadId);
    assert.equal(lead.status, 'FINISHED', JSON.stringify(lead));
    assert.match(lead.call_id, /^dialer-[0-9a-f]+$/, JSON.stringify(lead));
    const meta = lead.metaData ?? lead.meta_data;
    assert.equal(meta.call_ended_by, 'customer', JSON.stringify(meta));
    // The first trunk refused it once; the failover trunk carried it, the refusal's status kept.
    assert.equal(meta.sip_trunk_id, trunk.id);
    assert.equal(down.invites.size, 1);
    assert.deepEqual(
      (meta.sip_failover as Array<{ trunk_id: string; status: number }>).map(({ trunk_id, status }) => ({ trunk_id, status })),
      [{ trunk_id: first.id, status: 503 }],
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

  it('answers a call from the trunk to its SIP number with the greeter, on an INBOUND lead with a transcript and recordings of both voices', async () => {
    const mark = baresip.output().length;
    await baresip.dial(`sip:${CALLER_ID}@127.0.0.1:${sipPort}`);
    let ids: string[] = [];
    const deadline = Date.now() + 30_000;
    while ((ids = await inboundLeads()).length === 0) {
      assert.ok(Date.now() < deadline, `no inbound lead; baresip said:\n${baresip.output().slice(mark)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const lead = await finished(ids[0]!);
    assert.equal(lead.status, 'FINISHED', JSON.stringify(lead));
    assert.equal(lead.call_direction, 'INBOUND');
    assert.equal(lead.provider, 'SIP');
    assert.equal(lead.payload.customer_mobile_number, CALLEE);
    assert.match(lead.call_id, /^dialer-[0-9a-f]+$/, JSON.stringify(lead));
    const meta = lead.metaData;
    assert.equal(meta.sip_trunk_id, trunk.id);
    // The call held one of the trunk's channels.
    assert.equal((await t.db.query<{ trunk_id: string }>('SELECT trunk_id FROM leads WHERE id = $1', [lead.id])).rows[0]!.trunk_id, trunk.id);
    assert.equal(typeof meta.sip_call_id, 'string');
    assert.notEqual(meta.sip_call_id, lead.call_id);
    // baresip offers PCMU first and the trunk allows it; Dialer answered 180, then 200.
    assert.equal(meta.codec, 'PCMU');
    assert.deepEqual(meta.sip_statuses, [180, 200]);
    assert.ok(['customer', 'agent'].includes(meta.sip_ended_by), JSON.stringify(meta));
    assert.ok(Array.isArray(meta.transcription) && meta.transcription.length > 0, JSON.stringify(meta));
    // The greeter heard the caller speak (its energy detector), and Dialer's recording holds speech.
    assert.equal(lead.outcome, 'conversation_completed', JSON.stringify(lead));
    const recording = await fetch(lead.recording_url, { headers: { authorization: `Bearer ${w.reseller1.token}` } });
    assert.equal(recording.status, 200);
    const pcm = decodeWav(new Uint8Array(await recording.arrayBuffer())).pcm;
    assert.ok(loudSeconds(pcm) >= 2, `the recording has ${loudSeconds(pcm)} s of sound`);
    // baresip, the caller, heard the agent.
    await baresip.waitFor(/terminated/, 15_000, mark);
    const { heard } = await baresip.recordings();
    assert.ok(heard && loudSeconds(heard) >= 1, `baresip heard ${heard ? loudSeconds(heard) : 0} s of the agent`);
  });

  it('outside the inbound window speaks the block message and hangs up (REJECT), or redirects with a 302 (REDIRECT); refuses strangers (403) and unknown numbers (404)', async () => {
    const before = (await inboundLeads()).length;
    // A window that is closed now: it opens two hours from now, for an hour.
    const hour = new Date().getUTCHours();
    const at = (h: number) => `${String(h % 24).padStart(2, '0')}:00`;
    const closed = { inbound_call_start_time: at(hour + 2), inbound_call_end_time: at(hour + 3), inbound_call_timezone: 'UTC' };
    const rejecting = await w.reseller1.put(`/configurations/${cfg.id}`, { ...cfg, ...closed, inbound_block_action: 'REJECT', inbound_block_message: 'We are closed now. Please call again tomorrow morning.' });
    assert.equal(rejecting.status, 200, JSON.stringify(rejecting.body));
    const mark = baresip.output().length;
    await baresip.dial(`sip:${CALLER_ID}@127.0.0.1:${sipPort}`);
    await baresip.waitFor(/terminated/, 20_000, mark);
    const { heard } = await baresip.recordings();
    assert.ok(heard && loudSeconds(heard) >= 1, `baresip heard ${heard ? loudSeconds(heard) : 0} s of the block message`);

    const redirecting = await w.reseller1.put(`/configurations/${cfg.id}`, { ...rejecting.body, inbound_block_action: 'REDIRECT', inbound_redirect_number: REDIRECT_TO });
    assert.equal(redirecting.status, 200, JSON.stringify(redirecting.body));
    const caller = await startSipCaller('127.0.0.1');
    const stranger = await startSipCaller('127.0.0.2');
    try {
      const redirected = caller.invite(`127.0.0.1:${sipPort}`, CALLER_ID, CALLEE);
      const moved = await redirected.next((m) => m.status >= 200);
      assert.equal(moved.status, 302, moved.text);
      assert.equal(moved.header('contact'), `<sip:${REDIRECT_TO}@127.0.0.1>`);
      redirected.ack(moved);
      const unknown = caller.invite(`127.0.0.1:${sipPort}`, '+12125550100', CALLEE);
      assert.equal((await unknown.next((m) => m.status >= 200)).status, 404);
      assert.ok(unknown.received.some((m) => m.status === 100), 'a 100 Trying came first');
      const foreign = stranger.invite(`127.0.0.1:${sipPort}`, CALLER_ID, CALLEE);
      assert.equal((await foreign.next((m) => m.status >= 200)).status, 403);
    } finally {
      await caller.close();
      await stranger.close();
    }
    // None of these calls opened a lead.
    assert.equal((await inboundLeads()).length, before);
  });
});

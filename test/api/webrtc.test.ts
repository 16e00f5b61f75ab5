/**
 * WebRTC signalling without a browser: the offer while no LLM is configured (the greeter answers,
 * and says so; a WEBRTC_STREAM session, which has no greeter, is a 503), and a
 * session whose peer never connects (its SDP offer comes from a libwebrtc peer in this process
 * that never completes the handshake): the attempt ends as an error and the lead is retried under
 * its configuration's max_retry, exactly as an unreached phone call. Runs on PGlite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import type { Principal } from '../../src/auth/index.js';
import { createLogger } from '../../src/lib/logger.js';
import type { CallAgent } from '../../src/voice/index.js';
import { WebRtcService } from '../../src/webrtc/index.js';
import { webRtcSettings } from '../../src/config/webrtc.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let resellerId: string;
let seq = 0;

before(async () => {
  t = await buildTestApp();
  resellerId = (await t.admin.post('/resellers', { name: 'Rtc' })).body.id;
  const tpl = await t.admin.post('/templates', {
    name: 'rtc-api',
    reseller_id: resellerId,
    flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] },
  });
  assert.equal(tpl.status, 200);
  const cfg = await t.admin.post('/configurations', { reseller_id: resellerId, template: tpl.body.id, calling_provider: 'PROVIDER_A', max_retry: 1, retry_offset: 60 });
  assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
});
after(async () => {
  await t.close();
  // libwebrtc's audio threads outlive closed peers and hold the process (see src/webrtc/peer.ts).
  setTimeout(() => process.exit(process.exitCode ?? 0), 2000).unref();
});

async function push(mode = 'WEBRTC'): Promise<string> {
  const res = await t.admin.post('/leads', { request_id: `rtc-api-${++seq}`, template: 'rtc-api', reseller_id: resellerId, execution_mode: mode, payload: {} });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.lead_call_tracker_id;
}

/** A real SDP audio offer, made by a libwebrtc peer that will never answer back. */
async function realOffer(): Promise<{ sdp: string; close(): void }> {
  const wrtc = createRequire(import.meta.url)('@roamhq/wrtc');
  const pc = new wrtc.RTCPeerConnection({ iceServers: [] });
  pc.addTransceiver('audio', { direction: 'sendrecv' });
  pc.createDataChannel('dialer');
  await pc.setLocalDescription(await pc.createOffer());
  return { sdp: pc.localDescription.sdp, close: () => pc.close() };
}

describe('webrtc signalling without a browser', () => {
  it('with no LLM configured the greeter answers a WEBRTC_TEST session and says why; WEBRTC_STREAM answers 503 and claims nothing', async () => {
    const stream = await push('WEBRTC_STREAM');
    const res = await t.admin.post(`/webrtc/${stream}/offer`, { sdp: 'v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n' });
    assert.equal(res.status, 503, JSON.stringify(res.body));
    assert.equal(res.body.code, 'voice_not_ready');
    assert.equal((await t.admin.get(`/leads/${stream}`)).body.status, 'BACKLOG');
    assert.equal((await t.admin.post('/webrtc/no-such-lead/offer', { sdp: 'v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n' })).status, 404);

    const leadId = await push('WEBRTC_TEST');
    const offer = await realOffer();
    const answered = await t.admin.post(`/webrtc/${leadId}/offer`, { sdp: offer.sdp });
    assert.equal(answered.status, 200, JSON.stringify(answered.body));
    assert.equal(answered.body.agent, 'greeter');
    assert.match(answered.body.note, /greeter answers instead of the template, because .*LLM/);
    assert.equal((await t.admin.post(`/webrtc/${leadId}/hangup`)).status, 200);
    // The session was an attempt (this configuration retries once).
    const lead = (await t.admin.get(`/leads/${leadId}`)).body;
    assert.deepEqual([lead.status, lead.attempt_count, lead.call_id], ['RETRY', 1, answered.body.room]);
    offer.close();
  });

  it('a peer that never connects ends its attempt as an error: RETRY under max_retry, then FINISHED error', async () => {
    const agent: CallAgent = { label: 'never', converse: async () => assert.fail('a session that never connected must not run the agent') };
    const finished: string[] = [];
    const service = new WebRtcService({
      db: t.db,
      log: createLogger('silent'),
      settings: { ...webRtcSettings({}), connectTimeoutMs: 300 },
      flowAgent: agent,
      streamAgent: agent,
      saveRecording: async () => assert.fail('nothing to record'),
      onFinished: async (_q, leadIds) => void finished.push(...leadIds),
    });
    const admin: Principal = { kind: 'user', id: 'test', label: 'test', role: 'admin', resellerId: null, merchantId: null };
    const leadId = await push('WEBRTC_TEST');
    const waitFor = async (status: string) => {
      for (let i = 0; i < 100; i++) {
        const lead = (await t.admin.get(`/leads/${leadId}`)).body;
        if (lead.status === status) return lead;
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.fail(`lead never reached ${status}`);
    };
    for (const attempt of [1, 2]) {
      const offer = await realOffer();
      const answer = await service.offer(admin, leadId, offer.sdp);
      assert.match(answer.sdp, /^v=0/);
      const lead = await waitFor(attempt === 1 ? 'RETRY' : 'FINISHED');
      assert.equal(lead.attempt_count, attempt);
      assert.equal(lead.call_id, answer.room);
      assert.match(lead.metaData.last_error.message, /never connected/);
      offer.close();
    }
    const lead = (await t.admin.get(`/leads/${leadId}`)).body;
    assert.equal(lead.outcome, 'error');
    assert.deepEqual(finished, [leadId]);
    const { rows } = await t.db.query<{ attempt: number; status: string; outcome: string }>('SELECT attempt, status, outcome FROM call_attempts WHERE lead_id = $1 ORDER BY attempt', [leadId]);
    assert.deepEqual(rows, [
      { attempt: 1, status: 'ENDED', outcome: 'error' },
      { attempt: 2, status: 'ENDED', outcome: 'error' },
    ]);
    await service.close();
  });
});

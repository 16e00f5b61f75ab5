/**
 * The sandbox line: `dialer serve` with no telephony credentials runs the provider emulator inside
 * the process; a sandbox call (POST /sandbox/call) reaches its simulated customer through the real
 * provider protocols, runs the greeter (no LLM here), and leaves a finished lead marked
 * sandbox, with an attempt and a recording. Credentials for a provider take it off the line. Over
 * SIP the call goes through the reseller's sandbox trunk to the far side inside the process (SIP,
 * SDP and G.711 RTP on 127.0.0.1), where the same simulated customer answers; a busy number of the
 * scenarios file is a SIP failure the trunk's failures list.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningServer } from '../../src/server.js';
import type { Client } from '../helpers/app.js';
import { freePort } from '../helpers/net.js';
import { serveDialer } from '../helpers/serve.js';
import { issueToken } from '../helpers/world.js';
import { client } from '../helpers/app.js';
import { API_PREFIX } from '../../src/app.js';
import { decodeWav, rms } from '../../src/lib/audio.js';
import { synthesize } from '../../src/lib/speech.js';
import { GREETER_DEFAULTS } from '../../src/voice/greeter.js';

const BUSY = '+15005550199';

function loudSeconds(pcm: Int16Array): number {
  let loud = 0;
  for (let i = 0; i + 160 <= pcm.length; i += 160) if (rms(pcm.subarray(i, i + 160)) > 300) loud++;
  return loud * 0.02;
}

let server: RunningServer;
let admin: Client;
let dataDir: string;

before(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-sandbox-'));
  const scenarios = path.join(dataDir, 'scenarios.json');
  fs.writeFileSync(scenarios, JSON.stringify({ [BUSY]: { kind: 'busy' } }));
  const port = await freePort();
  ({ server, admin } = await serveDialer({
    PORT: String(port),
    HOST: '127.0.0.1',
    DIALER_DATA_DIR: dataDir,
    DIALER_JWT_SECRET: 'sandbox-secret-sandbox-secret-sandbox-1',
    DIALER_ADMIN_EMAIL: 'admin@example.com',
    DIALER_ADMIN_PASSWORD: 'admin-password-1',
    DIALER_POLL_MS: '100',
    DIALER_SANDBOX: 'true',
    DIALER_SANDBOX_SCENARIOS: scenarios,
    // The outbound policy as shipped: loopback refused to tenants (the sandbox trunk is the service's).
    DIALER_OUTBOUND_ALLOW: '',
    // Plivo has credentials: it calls real phones and stays off the line.
    PLIVO_AUTH_ID: 'MAREALACCOUNT0000001',
    PLIVO_AUTH_TOKEN: 'a-real-plivo-token',
    PLIVO_API_URL: 'http://127.0.0.1:9',
    LOG_LEVEL: 'silent',
    LLM_API_KEY: '',
    OPENAI_API_KEY: '',
    LLM_BASE_URL: '',
  }));
});

after(async () => {
  await server?.close();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

async function finished(id: string): Promise<any> {
  for (let i = 0; i < 900; i++) {
    const lead = (await admin.get(`/leads/${id}`)).body;
    if (lead.status === 'FINISHED') return lead;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`lead ${id} did not finish`);
}

describe('the sandbox line', { timeout: 240_000 }, () => {
  it('health and GET /sandbox say which providers are simulated; a provider with credentials is not', async () => {
    const health = (await admin.get('/health')).body;
    assert.deepEqual(health.sandbox.providers, ['PROVIDER_A', 'PROVIDER_B', 'SIP']);
    assert.equal(health.sandbox.enabled, true);
    assert.equal(health.sandbox.agent, 'greeter');
    assert.match(health.sandbox.note, /no phone rings/);
    assert.match(health.sandbox.note, /LLM/);
    const info = (await admin.get('/sandbox')).body;
    assert.deepEqual(info.providers, ['PROVIDER_A', 'PROVIDER_B', 'SIP']);
    assert.match(info.agent_missing, /LLM_BASE_URL/);
    // The line's caller IDs are in the pool; none for Plivo, which has credentials.
    const numbers = (await admin.get('/numbers?page_size=100')).body.data.filter((n: any) => n.channel === 'sandbox');
    assert.deepEqual(numbers.map((n: any) => `${n.provider}:${n.status}`).sort(), ['PROVIDER_A:AVAILABLE', 'PROVIDER_B:AVAILABLE', 'SIP:AVAILABLE']);
  });

  it('an admin\'s sandbox call reaches the simulated customer and finishes, marked sandbox, with its attempt and recording', async () => {
    const res = await admin.post('/sandbox/call', {});
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.provider, 'PROVIDER_A');
    const lead = await finished(res.body.lead_id);
    assert.equal(lead.outcome, 'conversation_completed', JSON.stringify(lead.metaData));
    assert.equal(lead.metaData.sandbox, true);
    assert.equal(lead.metaData.agent, 'greeter');
    assert.equal(lead.provider, 'PROVIDER_A');
    assert.ok(lead.metaData.transcription.length >= 2, JSON.stringify(lead.metaData.transcription));
    const attempts = (await admin.get(`/leads/${lead.id}/attempts`)).body.data;
    assert.deepEqual(attempts.map((a: any) => [a.attempt, a.outcome, a.from_number]), [[1, 'conversation_completed', '+15555550101']]);
    const rec = await admin.raw({ method: 'GET', path: `/leads/recording/${lead.call_id}` });
    assert.equal(rec.status, 200);
    assert.ok(Number(rec.headers['content-length']) > 8000 * 2 * 2, 'more than two seconds of audio');
    // The sandbox template and its configuration are there to look at (and to call again).
    const tpl = (await admin.get(`/templates/${res.body.template_id}`)).body;
    assert.equal(tpl.name, 'Sandbox greeting');
    const config = (await admin.get(`/configurations?template=${tpl.id}`)).body.data[0];
    assert.equal(config.calling_provider, 'PROVIDER_A');
  });

  it('a sandbox call over SIP goes through the sandbox trunk to the simulated customer inside Dialer and finishes with its transcript and recording; a busy number is a SIP failure of the trunk', async () => {
    const res = await admin.post('/sandbox/call', { provider: 'SIP' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.provider, 'SIP');
    assert.equal(res.body.template, 'Sandbox greeting (SIP)');
    const lead = await finished(res.body.lead_id);
    const meta = lead.metaData;
    assert.equal(lead.outcome, 'conversation_completed', JSON.stringify(meta));
    assert.equal(lead.provider, 'SIP');
    assert.equal(meta.sandbox, true);
    assert.equal(meta.agent, 'greeter');
    assert.match(lead.call_id, /^dialer-[0-9a-f]+$/);
    assert.deepEqual(meta.sip_statuses.slice(-1), [200]);
    // The greeter heard the customer speak between its two lines (it has no speech-to-text: its transcript is its own).
    assert.deepEqual(meta.transcription.map((t: any) => t.role), ['assistant', 'assistant'], JSON.stringify(meta.transcription));
    assert.ok(meta.rtp.frames_sent > 100, JSON.stringify(meta.rtp));
    // The sandbox trunk is the service's: shown, sandbox, never changed; its address is not a tenant's.
    const trunk = (await admin.get(`/trunks/${meta.sip_trunk_id}`)).body;
    assert.equal(trunk.sandbox, true);
    assert.equal(trunk.name, 'Sandbox line');
    assert.equal(typeof trunk.calls_per_second, 'number');
    const put = await admin.put(`/trunks/${trunk.id}`, { ...trunk, address: 'sip.carrier.example' });
    assert.equal(put.status, 409, JSON.stringify(put.body));
    assert.equal((await admin.delete(`/trunks/${trunk.id}`)).status, 409);
    // A tenant's own trunk on this machine's loopback is still refused, and none may fail over to the sandbox's.
    const own = await admin.post('/trunks', { reseller_id: lead.reseller_id, name: 'Mine', address: '127.0.0.1:5060', transport: 'udp', codecs: ['PCMU'] });
    assert.equal(own.status, 400, JSON.stringify(own.body));
    assert.equal(own.body.errors[0].path, '/address');
    const failover = await admin.post('/trunks', { reseller_id: lead.reseller_id, name: 'Mine', address: 'sip.carrier.example', transport: 'udp', codecs: ['PCMU'], failover_trunk_id: trunk.id });
    assert.equal(failover.status, 400, JSON.stringify(failover.body));
    const attempts = (await admin.get(`/leads/${lead.id}/attempts`)).body.data;
    assert.deepEqual(attempts.map((a: any) => [a.attempt, a.provider, a.sip_status, a.sip_trunk_id, a.from_number]), [[1, 'SIP', 200, trunk.id, '+15555550104']]);
    // Dialer's recording holds the customer's voice as well as the greeter's: more sound than the greeter's two lines alone.
    const rec = await fetch(`${server.url}${API_PREFIX}/leads/recording/${lead.call_id}`, { headers: { authorization: `Bearer ${admin.token}` } });
    assert.equal(rec.status, 200);
    const wavBytes = new Uint8Array(await rec.arrayBuffer());
    const recorded = loudSeconds(decodeWav(wavBytes).pcm);
    const greeter = loudSeconds(await synthesize(GREETER_DEFAULTS.greeting, { sampleRateHz: 8000 })) + loudSeconds(await synthesize(GREETER_DEFAULTS.farewell, { sampleRateHz: 8000 }));
    assert.ok(recorded >= greeter + 1.5, `the recording has ${recorded} s of sound, the greeter's lines ${greeter} s`);

    // A number the scenarios make busy: 486 from the far side, kept on the attempt and listed as the trunk's failure.
    const pushed = await admin.post('/leads', { request_id: 'sip-busy', template: 'Sandbox greeting (SIP)', reseller_id: lead.reseller_id, payload: { customer_mobile_number: BUSY, customer_name: 'Busy' } });
    assert.equal(pushed.status, 201, JSON.stringify(pushed.body));
    const busy = await finished(pushed.body.lead_call_tracker_id);
    assert.equal(busy.outcome, 'busy', JSON.stringify(busy.metaData));
    assert.equal(busy.metaData.sip_status, 486);
    const failures = (await admin.get(`/trunks/${trunk.id}/failures`)).body.data;
    assert.deepEqual(failures.map((f: any) => [f.lead_id, f.sip_status, f.outcome, f.failed_over_to]), [[busy.id, 486, 'busy', null]]);
    assert.match(failures[0].reason, /486 Busy Here/);
    assert.equal((await admin.get(`/trunks/${trunk.id}/failures?limit=0`)).status, 400);
  });

  it('a merchant token calls in its own scope; a template that dials a real provider answers 409', async () => {
    const reseller = (await admin.post('/resellers', { name: 'Acme' })).body.id;
    const merchant = (await admin.post('/merchants', { name: 'Shop', reseller_id: reseller, contact_email: 'shop@example.com' })).body.id;
    const m = client(server.app, await issueToken(admin, { role: 'merchant', reseller_id: reseller, merchant_id: merchant }));
    const res = await m.post('/sandbox/call', {});
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const lead = await finished(res.body.lead_id);
    assert.equal(lead.reseller_id, reseller);
    assert.equal(lead.merchant_id, merchant);
    assert.equal(lead.metaData.sandbox, true);
    // Another reseller cannot see it.
    const other = (await admin.post('/resellers', { name: 'Other' })).body.id;
    const r2 = client(server.app, await issueToken(admin, { role: 'reseller', reseller_id: other }));
    assert.equal((await r2.get(`/leads/${lead.id}`)).status, 404);
    assert.equal((await r2.post('/sandbox/call', { template_id: res.body.template_id })).status, 404);
    // A template whose configuration dials Plivo (real credentials) is not on the line.
    const tpl = await admin.post('/templates', { name: 'real', reseller_id: reseller, flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'hi' }] }] } });
    await admin.post('/configurations', { reseller_id: reseller, template: tpl.body.id, calling_provider: 'PROVIDER_C' });
    const refused = await m.post('/sandbox/call', { template_id: tpl.body.id });
    assert.equal(refused.status, 409);
    assert.match(refused.body.detail, /PROVIDER_C/);
    assert.equal((await m.post('/sandbox/call', { template_id: 'x', extra: 1 })).status, 400);
  });

  it('a test case whose callee is a persona is not runnable without an LLM: reported with the reason, neither passed nor failed', async () => {
    const reseller = (await admin.post('/resellers', { name: 'Personas' })).body.id;
    const tpl = await admin.post('/templates', { name: 'persona', reseller_id: reseller, flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'hi' }] }] } });
    const started = await admin.post(`/templates/${tpl.body.id}/tests/run`, {
      cases: [{ name: 'played by the LLM', callee: { persona: 'A busy parent', goal: 'move the visit' }, expectations: [{ kind: 'outcome', equals: 'moved' }] }],
    });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    const run = (await admin.get(`/test-runs/${started.body.id}`)).body;
    assert.deepEqual([run.status, run.passed, run.failed, run.total], ['passed', 0, 0, 1]);
    assert.deepEqual([run.cases[0].status, run.cases[0].lead_id], ['not_runnable', null]);
    assert.match(run.cases[0].error, /a persona callee is played by the LLM, and no LLM is configured here/);
    assert.match(run.note, /1 case\(s\) not runnable/);
  });

  it('a page watching the lead hears its transcript lines while the call is live (GET /events)', async () => {
    const res = await admin.post('/sandbox/call', {});
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const id = res.body.lead_id as string;
    const ctl = new AbortController();
    const stream = await fetch(`${server.url}${API_PREFIX}/events?leads=${id}`, { headers: { authorization: `Bearer ${admin.token}` }, signal: ctl.signal });
    assert.equal(stream.status, 200);
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    const events: Array<{ event: string; data: any }> = [];
    let text = '';
    // Until the first transcript line, or the lead's end if no line came while it was live.
    while (!events.some((e) => e.event === 'transcript' || (e.event === 'lead' && e.data.status === 'FINISHED'))) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended: ${text}`);
      text += value;
      for (let end = text.indexOf('\n\n'); end >= 0; end = text.indexOf('\n\n')) {
        const block = text.slice(0, end);
        text = text.slice(end + 2);
        const event = /^event: (.+)$/m.exec(block)?.[1];
        const data = /^data: (.+)$/m.exec(block)?.[1];
        if (event && data) events.push({ event, data: JSON.parse(data) });
      }
    }
    ctl.abort();
    const line = events.find((e) => e.event === 'transcript');
    assert.ok(line, `a transcript line came before the lead finished: ${JSON.stringify(events)}`);
    assert.equal(line.data.id, id);
    assert.equal(line.data.seq, 1);
    assert.equal(line.data.role, 'assistant');
    assert.equal(typeof line.data.at_ms, 'number');
    // The live line is the line the finished lead keeps.
    const lead = await finished(id);
    assert.equal(lead.metaData.transcription[0].content, line.data.content);
    assert.equal(lead.metaData.transcription[0].at_ms, line.data.at_ms);
  });
});

/**
 * The sandbox line: `dialer serve` with no telephony credentials runs the provider emulator inside
 * the process; a sandbox call (POST /sandbox/call) reaches its simulated customer through the real
 * provider protocols, runs the greeter (no LLM here), and leaves a finished lead marked
 * sandbox, with an attempt and a recording. Credentials for a provider take it off the line.
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

let server: RunningServer;
let admin: Client;
let dataDir: string;

before(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-sandbox-'));
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
    assert.deepEqual(health.sandbox.providers, ['PROVIDER_A', 'PROVIDER_B']);
    assert.equal(health.sandbox.enabled, true);
    assert.equal(health.sandbox.agent, 'greeter');
    assert.match(health.sandbox.note, /no phone rings/);
    assert.match(health.sandbox.note, /LLM/);
    const info = (await admin.get('/sandbox')).body;
    assert.deepEqual(info.providers, ['PROVIDER_A', 'PROVIDER_B']);
    assert.match(info.agent_missing, /LLM_BASE_URL/);
    // The line's caller IDs are in the pool; none for Plivo, which has credentials.
    const numbers = (await admin.get('/numbers?page_size=100')).body.data.filter((n: any) => n.channel === 'sandbox');
    assert.deepEqual(numbers.map((n: any) => `${n.provider}:${n.status}`).sort(), ['PROVIDER_A:AVAILABLE', 'PROVIDER_B:AVAILABLE']);
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

/**
 * Browser voice sessions end to end: `dialer serve` with the voice engine (Silero VAD, local
 * OpenAI-compatible LLM and transcription servers, espeak-ng speech) and a real headless Chromium
 * whose fake microphone speaks an espeak-ng WAV. The dashboard's "Test in browser" places the calls; the browser
 * and Dialer talk Opus over WebRTC with host ICE candidates.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { API_PREFIX } from '../../src/app.js';
import { decodeWav, encodeWav, rms } from '../../src/lib/audio.js';
import { synthesize } from '../../src/lib/speech.js';
import type { RunningServer } from '../../src/server.js';
import type { Client } from '../helpers/app.js';
import { CHROMIUM_PATH, chromiumAvailable, launchBrowser, type TestBrowser } from '../helpers/browser.js';
import { startOpenAIServer, type OpenAIServer } from '../helpers/openai-server.js';
import { issueToken } from '../helpers/world.js';
import { freePort } from '../helpers/net.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { serveDialer } from '../helpers/serve.js';
import { shoot } from '../helpers/dashboard.js';

const EMAIL = 'admin@example.com';
const PASSWORD = 'admin-password-1';
const CALLER_WORDS = 'Yes, please confirm it. Thank you, that is great!';


let server: RunningServer;
let ai: OpenAIServer;
let browser: TestBrowser;
let admin: Client;
let dataDir: string;
let resellerId: string;
let templateId: string;
let hooks: Receiver;
const webhooks = () => hooks.requests.map((r) => r.body);

// Skipped only when asked (npm test provides Chromium or stops with the command to install it).
const skip = process.env.DIALER_TEST_SKIP_BROWSER === '1' ? 'DIALER_TEST_SKIP_BROWSER=1' : false;

/**
 * The fake microphone: 9 s of silence (the agent greets: about 5 s with its synthesis on an idle
 * machine, more on a busy one, and a caller heard over the greeting would cut it), the caller's
 * words, then 12 s of silence.
 */
async function micWav(file: string): Promise<void> {
  const rate = 16_000;
  const words = await synthesize(CALLER_WORDS, { sampleRateHz: rate });
  const pcm = new Int16Array(rate * 9 + words.length + rate * 12);
  pcm.set(words, rate * 9);
  fs.writeFileSync(file, encodeWav(pcm, rate));
}

before(async () => {
  if (skip) return;
  if (!chromiumAvailable()) throw new Error(`Chromium is not at ${CHROMIUM_PATH}: install it (apt-get install -y chromium) or set CHROMIUM_PATH; DIALER_TEST_SKIP_BROWSER=1 skips this suite`);
  // Chromium gathers no ICE candidates on loopback alone: say so instead of timing out later.
  const routable = Object.values(os.networkInterfaces()).flat().some((i) => i && !i.internal);
  if (!routable) throw new Error('no network interface besides loopback: Chromium would offer no ICE candidates (give the sandbox a veth pair, e.g. in an `unshare -n` namespace)');
  const port = await freePort();
  ai = await startOpenAIServer();
  hooks = await startReceiver();
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-webrtc-'));
  const env = {
    PORT: String(port),
    HOST: '127.0.0.1',
    DIALER_DATA_DIR: dataDir,
    DIALER_JWT_SECRET: 'webrtc-secret-webrtc-secret-webrtc-secret',
    DIALER_ADMIN_EMAIL: EMAIL,
    DIALER_ADMIN_PASSWORD: PASSWORD,
    DIALER_POLL_MS: '100',
    LOG_LEVEL: 'silent',
    LLM_BASE_URL: ai.url,
    STT_BASE_URL: ai.url,
  };
  ({ server, admin } = await serveDialer(env));
  resellerId = (await admin.post('/resellers', { name: 'Browser' })).body.id;
  const flow = {
    initial_node: 'greet',
    // The scripted LLM answers requests in order: no speculative replies to use its answers up early.
    turn_taking: { mode: 'vad' },
    nodes: [
      {
        node_name: 'greet',
        role_messages: [{ role: 'system', content: 'You call {customer_name} for Acme. Be brief.' }],
        task_messages: [{ role: 'system', content: 'Ask {customer_name} to confirm order {order_id}.' }],
        functions: [{ name: 'confirm_order', properties: { confirmed: { type: 'boolean' } }, required: ['confirmed'], transition_to: 'end_confirmed' }],
      },
      {
        node_name: 'end_confirmed',
        task_messages: [{ role: 'system', content: 'Thank them.' }],
        pre_actions: [{ type: 'tts_say', text: 'Thank you {customer_name}. Your order is confirmed. Goodbye!' }, { type: 'end_conversation', outcome: 'confirmed' }],
      },
    ],
  };
  const tpl = await admin.post('/templates', { name: 'confirm', reseller_id: resellerId, flow });
  assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
  templateId = tpl.body.id;
  const wav = path.join(dataDir, 'caller.wav');
  await micWav(wav);
  browser = await launchBrowser(wav);
});

after(async () => {
  await browser?.close();
  await server?.close();
  await ai?.close();
  await hooks?.close();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  // libwebrtc may hold the process open after its peers closed (a session cut short by a failed
  // assertion): once everything here is closed, do not let that hang the test run.
  setTimeout(() => process.exit(process.exitCode ?? 0), 5000).unref();
});

/** The dashboard's Test in browser, on the template's page, logged in. */
async function openPlayground(url = server.url, template = templateId): Promise<Page> {
  const page = await browser.context.newPage();
  await page.goto(`${url}${API_PREFIX}/app/templates/${template}?test=1`);
  await page.getByLabel('Email').fill(EMAIL);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.locator('#test-call').waitFor();
  return page;
}

async function waitForLead(leadId: string, done: (lead: any) => boolean = (l) => l.status === 'FINISHED' || l.status === 'RETRY', as: Client = admin): Promise<any> {
  for (let i = 0; i < 600; i++) {
    const lead = (await as.get(`/leads/${leadId}`)).body;
    if (done(lead)) return lead;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`lead ${leadId} did not get there`);
}

/** The browser's view of the audio it receives from Dialer. */
function inboundAudio(page: Page) {
  return page.evaluate(async () => {
    const pc = (window as any).playground.pc as RTCPeerConnection;
    let out = { packetsReceived: 0, totalAudioEnergy: 0, audioLevel: 0 };
    (await pc.getStats()).forEach((s: any) => {
      if (s.type === 'inbound-rtp' && s.kind === 'audio') out = { packetsReceived: s.packetsReceived, totalAudioEnergy: s.totalAudioEnergy ?? 0, audioLevel: s.audioLevel ?? 0 };
    });
    return out;
  });
}

/** Waits until the browser has received some agent speech (or the session ended); its inbound stats then. */
async function heardAgent(page: Page) {
  let audio = await inboundAudio(page);
  for (let i = 0; i < 100 && (audio.totalAudioEnergy < 0.01 || audio.packetsReceived < 100); i++) {
    await new Promise((r) => setTimeout(r, 100));
    audio = await inboundAudio(page);
  }
  return audio;
}

describe('WebRTC sessions from a real browser', { skip }, () => {
  it('Test in browser places a WEBRTC_TEST call: the agent greets, hears the caller, calls the function, ends confirmed, with transcript, nodes, recording', async () => {
    ai.chat.push({ text: 'Hello Ana! I am calling about your order A-42. Shall I confirm it?' }, { tools: [{ name: 'confirm_order', arguments: { confirmed: true } }] });
    ai.transcripts.push(CALLER_WORDS);
    const page = await openPlayground();
    await page.getByLabel('customer_name').fill('Ana');
    await page.getByLabel('order_id').fill('A-42');
    await page.locator('#test-call').click();

    // The greeting is heard in the browser: its audio arrives, with sound in it.
    await page.waitForFunction(() => (window as any).playground.events.some((e: any) => e.type === 'state'), null, { timeout: 30_000 });
    const audio = await heardAgent(page);
    assert.ok(audio.packetsReceived > 50, `packets ${audio.packetsReceived}`);
    assert.ok(audio.totalAudioEnergy > 0.001, `energy ${audio.totalAudioEnergy}`);

    await page.waitForFunction(() => (window as any).playground.lead, null, { timeout: 60_000 });
    const { leadId, room, events } = await page.evaluate(() => {
      const p = (window as any).playground;
      return { leadId: p.leadId as string, room: p.room as string, events: p.events as any[] };
    });
    const lead = await waitForLead(leadId);
    const meta = lead.metaData;
    assert.equal(lead.status, 'FINISHED', JSON.stringify(meta));
    assert.equal(lead.outcome, 'confirmed', JSON.stringify(meta));
    assert.equal(lead.execution_mode, 'WEBRTC_TEST');
    assert.equal(lead.is_playground, true);
    assert.equal(lead.call_id, room);
    assert.equal(lead.attempt_count, 1);
    assert.equal(lead.provider, 'WEBRTC');
    assert.deepEqual(meta.node_traversal, ['greet', 'end_confirmed']);
    assert.deepEqual(
      meta.transcription.map((t: any) => [t.role, t.content]),
      [
        ['assistant', 'Hello Ana! I am calling about your order A-42. Shall I confirm it?'],
        ['user', CALLER_WORDS],
        ['assistant', 'Thank you Ana. Your order is confirmed. Goodbye!'],
      ],
    );
    assert.equal(meta.call_ended_by, 'agent');
    assert.deepEqual(meta.errors, []);
    assert.equal(meta.function_calls[0].name, 'confirm_order');
    assert.ok(ai.transcriptionRequests.at(-1)!.bytes > 16_000, 'the caller\'s spoken words reached the STT');
    // The page was told everything live.
    assert.deepEqual(events.filter((e) => e.type === 'node').map((e) => e.node), ['greet', 'end_confirmed']);
    assert.deepEqual(events.filter((e) => e.type === 'function_call').map((e) => e.name), ['confirm_order']);
    assert.ok(events.some((e) => e.type === 'transcript' && e.role === 'user' && e.final && e.text === CALLER_WORDS));
    assert.deepEqual(events.at(-1), { type: 'ended', outcome: 'confirmed', call_ended_by: 'agent' });
    assert.equal(await page.locator('#test-nodes li').count(), 2);
    // The attempt history, as for a phone call.
    const { rows: attempts } = await server.db.query<any>('SELECT status, outcome, call_id, provider FROM call_attempts WHERE lead_id = $1', [leadId]);
    assert.deepEqual(attempts, [{ status: 'ENDED', outcome: 'confirmed', call_id: room, provider: 'WEBRTC' }]);
    // The recording holds both sides, and the page can play it.
    const rec = await fetch(lead.recording_url, { headers: { authorization: `Bearer ${admin.token}` } });
    assert.equal(rec.status, 200);
    const wav = decodeWav(new Uint8Array(await rec.arrayBuffer()));
    assert.ok(wav.pcm.length / wav.sampleRateHz > 5, `${wav.pcm.length / wav.sampleRateHz} s recorded`);
    assert.ok(rms(wav.pcm) > 100);
    // The page plays the recording (through a signed link, seeking with Range requests).
    await page.waitForFunction(() => ((document.getElementById('recording-audio') as HTMLAudioElement | null)?.duration ?? 0) > 5, null, { timeout: 30_000 });
    await page.close();
  });
});

describe('Test in browser with no LLM configured', { skip }, () => {
  it('connects to the built-in greeter, says so on the page, and streams its words into the transcript while the call is live', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-webrtc-nollm-'));
    // The same service with no LLM_BASE_URL (nor any other LLM): the template cannot run, the greeter can.
    const bare = await serveDialer({
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      DIALER_DATA_DIR: dir,
      DIALER_JWT_SECRET: 'webrtc-secret-webrtc-secret-webrtc-secret',
      DIALER_ADMIN_EMAIL: EMAIL,
      DIALER_ADMIN_PASSWORD: PASSWORD,
      DIALER_POLL_MS: '100',
      LOG_LEVEL: 'silent',
    });
    let page: Page | undefined;
    try {
      const reseller = (await bare.admin.post('/resellers', { name: 'No LLM' })).body.id;
      const flow = { initial_node: 'greet', nodes: [{ node_name: 'greet', task_messages: [{ role: 'system', content: 'Greet {customer_name}.' }] }] };
      const tpl = await bare.admin.post('/templates', { name: 'needs-llm', reseller_id: reseller, flow });
      assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
      page = await openPlayground(bare.server.url, tpl.body.id);
      await page.getByLabel('customer_name').fill('Ana');
      await page.locator('#test-call').click();
      // The page says who answers and why, instead of a 503.
      assert.match(await page.locator('#test-note').innerText({ timeout: 30_000 }), /greeter answers instead of the template, because .*LLM/);
      // The greeting reaches the transcript while the call is still up (the hang-up button is there).
      const line = page.locator('#test-transcript li.turn-agent').first();
      assert.match(await line.innerText({ timeout: 30_000 }), /automated call from Dialer/);
      assert.ok(await page.locator('#test-hangup').isVisible(), 'the call is still live when its first line shows');
      assert.match(await page.locator('.test-live').innerText(), /greeter follows no flow/);
      await shoot(page, 'webrtc-greeter');
      const audio = await heardAgent(page);
      assert.ok(audio.totalAudioEnergy > 0.001, `energy ${audio.totalAudioEnergy}`);
      const leadId = await page.evaluate(() => (window as any).playground.leadId as string);
      await page.locator('#test-hangup').click();
      const lead = await waitForLead(leadId, (l) => l.status === 'FINISHED', bare.admin);
      assert.equal(lead.metaData.agent, 'greeter');
      assert.equal(lead.attempt_count, 1);
      assert.match(lead.metaData.transcription[0].content, /automated call from Dialer/);
      // Nothing was left queued by the try.
      const { rows } = await bare.server.db.query<{ n: number }>("SELECT count(*)::int AS n FROM leads WHERE status IN ('BACKLOG', 'RETRY')");
      assert.equal(rows[0]!.n, 0);
    } finally {
      await page?.close();
      await bare.server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('WEBRTC_STREAM: the client drives the speech', { skip }, () => {
  it('tts-speak over HTTP and over the data channel is spoken and transcribed, the caller\'s words arrive as transcript events, no LLM is asked', async () => {
    ai.transcripts.push(CALLER_WORDS);
    const chatsBefore = ai.chatRequests.length;
    const page = await openPlayground();
    await page.locator('select[name="mode"]').selectOption('WEBRTC_STREAM');
    await page.getByLabel('customer_name').fill('Ana');
    await page.getByLabel('order_id').fill('A-42');
    await page.locator('#test-call').click();
    const events = () => page.evaluate(() => (window as any).playground.events as any[]);
    const heard = (role: string, text: string) =>
      page.waitForFunction(([r, t]) => (window as any).playground.events.some((e: any) => e.type === 'transcript' && e.role === r && e.final && e.text === t), [role, text], { timeout: 30_000 });

    // The caller speaks first (the fake microphone); their words come back as a final transcript.
    await heard('user', CALLER_WORDS);
    const leadId = await page.evaluate(() => (window as any).playground.leadId as string);
    const spoken = await admin.post(`/leads/${leadId}/tts-speak`, { text: 'Hello from the stream.' });
    assert.equal(spoken.status, 202, JSON.stringify(spoken.body));
    await heard('assistant', 'Hello from the stream.');
    const audio = await heardAgent(page);
    assert.ok(audio.packetsReceived > 50 && audio.totalAudioEnergy > 0.001, JSON.stringify(audio));

    await page.getByLabel('Say (tts-speak)').fill('Second line over the data channel.');
    await page.getByRole('button', { name: 'Speak' }).click();
    await heard('assistant', 'Second line over the data channel.');
    assert.ok((await events()).some((e) => e.type === 'transcript' && e.role === 'user' && !e.final), 'interim caller words were sent too');

    await page.getByRole('button', { name: 'Hang up' }).click();
    await page.waitForFunction(() => (window as any).playground.lead, null, { timeout: 30_000 });
    const lead = await waitForLead(leadId);
    assert.equal(lead.status, 'FINISHED');
    assert.equal(lead.outcome, 'completed');
    assert.equal(lead.execution_mode, 'WEBRTC_STREAM');
    assert.equal(lead.metaData.call_ended_by, 'customer');
    assert.equal(lead.metaData.agent, 'stream');
    assert.deepEqual(
      lead.metaData.transcription.map((t: any) => [t.role, t.content]),
      [
        ['user', CALLER_WORDS],
        ['assistant', 'Hello from the stream.'],
        ['assistant', 'Second line over the data channel.'],
      ],
    );
    assert.equal(ai.chatRequests.length, chatsBefore, 'stream mode asks no LLM');
    assert.ok(lead.recording_url);
    await page.close();
  });
});

/** Joins a lead's session from the page with a bare RTCPeerConnection (no playground UI). */
async function join(page: Page, leadId: string, token: string): Promise<{ status: number; body: any }> {
  return page.evaluate(
    async ([id, auth, prefix]) => {
      const mic = await navigator.mediaDevices.getUserMedia({ audio: true });
      const pc = new RTCPeerConnection();
      mic.getAudioTracks().forEach((t) => pc.addTrack(t, mic));
      const channel = pc.createDataChannel('dialer');
      const events: any[] = [];
      channel.onmessage = (e) => events.push(JSON.parse(e.data));
      await pc.setLocalDescription(await pc.createOffer());
      await new Promise<void>((resolve) => {
        if (pc.iceGatheringState === 'complete') return resolve();
        pc.onicegatheringstatechange = () => pc.iceGatheringState === 'complete' && resolve();
        setTimeout(resolve, 3000);
      });
      const sentAt = performance.now();
      const res = await fetch(`${prefix}/webrtc/${id}/offer`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${auth}` }, body: JSON.stringify({ sdp: pc.localDescription!.sdp }) });
      const body = await res.json();
      const answeredAt = performance.now();
      if (res.ok) await pc.setRemoteDescription({ type: 'answer', sdp: body.sdp });
      const timing: Record<string, number> = { answerMs: answeredAt - sentAt };
      pc.addEventListener('connectionstatechange', () => {
        if (pc.connectionState === 'connected') timing.connectedMs ??= performance.now() - sentAt;
      });
      channel.addEventListener('message', () => (timing.firstEventMs ??= performance.now() - sentAt));
      (window as any).rtc = { pc, events, channel, timing };
      return { status: res.status, body };
    },
    [leadId, token, API_PREFIX] as const,
  );
}

describe('signalling', { skip }, () => {
  it('scoped, joined once, ICE restart, bad offers refused; a peer that disappears ends the session (customer) and the webhook reports it', async (t) => {
    const openapi = (await admin.get('/openapi.json')).body;
    for (const route of ['/webrtc/{lead_id}/offer', '/webrtc/{lead_id}/ice-restart', '/webrtc/{lead_id}/hangup', '/leads/{lead_id}/tts-speak']) {
      assert.ok(openapi.paths[`${API_PREFIX}${route}`]?.post, `${route} is in the OpenAPI document`);
    }
    const hookUrl = `${hooks.url}/report`;
    const push = (mode: string) =>
      admin.post('/leads', { request_id: `sig-${mode}`, template: 'confirm', reseller_id: resellerId, execution_mode: mode, reporting_webhook_url: hookUrl, payload: { customer_name: 'Bo', order_id: 'B-7' } });
    const lead = await push('WEBRTC');
    assert.equal(lead.status, 201, JSON.stringify(lead.body));
    const leadId = lead.body.lead_call_tracker_id;
    const phoneLead = (await push('TELEPHONY')).body.lead_call_tracker_id;

    const page = await browser.context.newPage();
    await page.goto(`${server.url}${API_PREFIX}/app/login`);
    // Another reseller's token cannot see the lead: 404, as for any lead out of scope.
    const otherReseller = (await admin.post('/resellers', { name: 'Other' })).body.id;
    const outsider = await issueToken(admin, { role: 'reseller', reseller_id: otherReseller });
    assert.equal((await join(page, leadId, outsider)).status, 404);
    // A phone lead takes no browser session; an offer without audio and a body without sdp are 400.
    const notWebRtc = await join(page, phoneLead, admin.token!);
    assert.equal(notWebRtc.status, 409);
    assert.equal(notWebRtc.body.code, 'not_webrtc');
    const noAudio = await admin.post(`/webrtc/${leadId}/offer`, { sdp: 'v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\n' });
    assert.equal(noAudio.status, 400);
    assert.equal(noAudio.body.code, 'invalid_offer');
    assert.equal((await admin.post(`/webrtc/${leadId}/offer`, {})).status, 400);
    assert.equal((await admin.post(`/leads/${leadId}/tts-speak`, { text: 'hi' })).status, 409, 'no live session yet');
    assert.equal((await admin.get(`/leads/${leadId}`)).body.status, 'BACKLOG', 'refused offers claim nothing');

    ai.chat.push({ text: 'Hello Bo! Shall I confirm order B-7?' });
    const joined = await join(page, leadId, admin.token!);
    assert.equal(joined.status, 200, JSON.stringify(joined.body));
    assert.match(joined.body.room, /^rtc-[0-9a-f]{24}$/);
    assert.match(joined.body.sdp, /a=candidate:/);
    const claimed = (await admin.get(`/leads/${leadId}`)).body;
    assert.deepEqual([claimed.status, claimed.call_id, claimed.attempt_count], ['PROCESSING', joined.body.room, 1]);
    // The room cannot be joined twice.
    const again = await admin.post(`/webrtc/${leadId}/offer`, { sdp: 'v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n' });
    assert.equal(again.status, 409);
    // tts-speak is for WEBRTC_STREAM leads only.
    assert.equal((await admin.post(`/leads/${leadId}/tts-speak`, { text: 'hi' })).body.code, 'not_stream');

    await page.waitForFunction(() => (window as any).rtc.events.some((e: any) => e.type === 'state'), null, { timeout: 30_000 });
    // Session setup as the browser sees it (reported, not asserted): offer POST to answer, to ICE+DTLS connected, to the first event.
    const timing = await page.evaluate(() => (window as any).rtc.timing as Record<string, number>);
    t.diagnostic(`session setup: ${Object.entries(timing).map(([k, v]) => `${k} ${Math.round(v)}`).join(', ')}`);
    // ICE restart: a new offer on the same connection gets a new answer; the session goes on.
    const restart = await page.evaluate(
      async ([id, auth, prefix]) => {
        const { pc } = (window as any).rtc as { pc: RTCPeerConnection };
        await pc.setLocalDescription(await pc.createOffer({ iceRestart: true }));
        await new Promise((r) => setTimeout(r, 500));
        const res = await fetch(`${prefix}/webrtc/${id}/ice-restart`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${auth}` }, body: JSON.stringify({ sdp: pc.localDescription!.sdp }) });
        const body = await res.json();
        if (res.ok) await pc.setRemoteDescription({ type: 'answer', sdp: body.sdp });
        for (let i = 0; i < 50 && pc.connectionState !== 'connected'; i++) await new Promise((r) => setTimeout(r, 100));
        return { status: res.status, room: body.room, state: pc.connectionState };
      },
      [leadId, admin.token!, API_PREFIX] as const,
    );
    assert.deepEqual(restart, { status: 200, room: joined.body.room, state: 'connected' });

    // The browser goes away without hanging up.
    await page.close();
    const done = await waitForLead(leadId);
    assert.equal(done.status, 'FINISHED');
    assert.equal(done.metaData.call_ended_by, 'customer');
    assert.equal(done.call_id, joined.body.room);
    for (let i = 0; i < 100 && !webhooks().some((w) => w.leadId === leadId); i++) await new Promise((r) => setTimeout(r, 100));
    const hook = webhooks().find((w) => w.leadId === leadId);
    assert.ok(hook, 'the reporting webhook was sent');
    assert.equal(hook.orderId, 'sig-WEBRTC');
    // A finished lead takes no new session.
    assert.equal((await admin.post(`/webrtc/${leadId}/offer`, { sdp: 'v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n' })).status, 409);
  });
});

/**
 * The provider emulator against a small fake Dialer (an http server and a ws server written here):
 * REST as each provider's real API takes it, signed answer and status callbacks checked with the
 * official SDKs, the media streams in each provider's frame format with real espeak audio, marks,
 * clears, hangups from either side, busy/no-answer, auth failures and inbound calls.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import * as plivo from 'plivo';
import twilio from 'twilio';
import { WebSocketServer, type WebSocket } from 'ws';
import { bytesToPcm, decodeMulaw, encodeMulaw, pcmToBytes, rms } from '../../src/lib/audio.js';
import { startEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator/index.js';

const TW = { accountSid: `AC${'1'.repeat(32)}`, authToken: 'twilio-token' };
const PL = { authId: 'MAEMULATORTEST000001', authToken: 'plivo-token' };
const EX = { accountSid: 'emulatortest1', apiKey: 'exo-key', apiToken: 'exo-token' };

interface Hit {
  method: string;
  url: string;
  path: string;
  headers: IncomingMessage['headers'];
  raw: string;
  params: Record<string, string>;
}
interface Socket {
  path: string;
  ws: WebSocket;
  frames: Array<Record<string, any>>;
  closed: boolean;
}
type Handler = (hit: Hit) => { status?: number; type?: string; body: string };

/** Just enough of Dialer: records callbacks, answers with configured markup, accepts media sockets. */
class FakeDialer {
  hits: Hit[] = [];
  sockets: Socket[] = [];
  handlers = new Map<string, Handler>();
  url = '';
  private server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString();
      const u = new URL(req.url ?? '/', this.url);
      const params: Record<string, string> = Object.fromEntries(u.searchParams);
      if ((req.headers['content-type'] ?? '').startsWith('application/json')) Object.assign(params, JSON.parse(raw));
      else Object.assign(params, Object.fromEntries(new URLSearchParams(raw)));
      const hit: Hit = { method: req.method ?? '', url: `${this.url}${req.url}`, path: u.pathname, headers: req.headers, raw, params };
      this.hits.push(hit);
      const h = this.handlers.get(u.pathname);
      const out = h ? h(hit) : { body: '{}', type: 'application/json' };
      res.writeHead(out.status ?? 200, { 'content-type': out.type ?? 'text/xml' }).end(out.body);
    });
  });
  private wss = new WebSocketServer({ server: this.server });

  async start(): Promise<void> {
    this.wss.on('connection', (ws, req) => {
      const s: Socket = { path: req.url ?? '', ws, frames: [], closed: false };
      this.sockets.push(s);
      ws.on('message', (d) => s.frames.push(JSON.parse(d.toString()) as Record<string, any>));
      ws.on('close', () => (s.closed = true));
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  async stop(): Promise<void> {
    for (const c of this.wss.clients) c.terminate();
    this.wss.close();
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
  socket(path: string): Promise<Socket> {
    return waitFor(() => this.sockets.find((s) => s.path === path));
  }
  hitsFor(path: string, token: string): Hit[] {
    return this.hits.filter((h) => h.path === path && (h.params.s === token || h.params.CustomField === token));
  }
}

async function waitFor<T>(fn: () => T | undefined | false, timeoutMs = 10_000, what = 'condition'): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const tone = (ms: number, amp = 8000) => Int16Array.from({ length: (ms * 8000) / 1000 }, (_, i) => Math.round(amp * Math.sin((2 * Math.PI * 440 * i) / 8000)));
const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;
const form = (pairs: Array<[string, string]>) => new URLSearchParams(pairs).toString();

/** Loudest 20 ms window of some PCM. */
function peakRms(pcm: Int16Array): number {
  let best = 0;
  for (let i = 0; i + 160 <= pcm.length; i += 160) best = Math.max(best, rms(pcm.subarray(i, i + 160)));
  return best;
}

function twilioValid(hit: Hit): boolean {
  const body = hit.method === 'GET' ? {} : Object.fromEntries(new URLSearchParams(hit.raw));
  return twilio.validateRequest(TW.authToken, String(hit.headers['x-twilio-signature']), hit.url, body);
}

function plivoValid(hit: Hit): boolean {
  const body = hit.method === 'GET' ? {} : Object.fromEntries(new URLSearchParams(hit.raw));
  return Boolean(plivo.validateV3Signature(hit.method, hit.url, String(hit.headers['x-plivo-signature-v3-nonce']), PL.authToken, String(hit.headers['x-plivo-signature-v3']), body));
}

/** A fake Dialer and an emulator pointed at it (with `options`), started before a suite's tests and closed after them. */
function emulatorSuite(options: Partial<EmulatorOptions> = {}): { dialer: FakeDialer; emulator(): Emulator } {
  const dialer = new FakeDialer();
  let emu: Emulator | undefined;
  before(async () => {
    await dialer.start();
    emu = await startEmulator({ dialerUrl: dialer.url, twilio: TW, plivo: PL, exotel: EX, ...options });
  });
  after(async () => {
    await emu?.close();
    await dialer.stop();
  });
  return { dialer, emulator: () => emu! };
}

/** POST Calls.json to the emulated Twilio: a call to `to` whose answer URL is Dialer's `answerUrl`. */
function placeTwilioCall(emu: Emulator, to: string, answerUrl: string): Promise<Response> {
  return fetch(`${emu.url}/2010-04-01/Accounts/${TW.accountSid}/Calls.json`, {
    method: 'POST',
    headers: { authorization: basic(TW.accountSid, TW.authToken), 'content-type': 'application/x-www-form-urlencoded' },
    body: form([['To', to], ['From', '+15559990000'], ['Url', answerUrl]]),
  });
}

describe('provider emulator', () => {
  const logs: string[] = [];
  const { dialer, emulator } = emulatorSuite({ log: (m) => logs.push(m) });

  it('Twilio: REST call, signed callbacks, <Connect><Stream>, audio both ways, mark and clear, the callee hangs up', async () => {
    const emu = emulator();
    const to = '+15550000001';
    emu.script(to, { answer: 'answer', ringMs: 100, steps: [{ say: 'Hello there.' }, { waitForAudio: 4000 }, { hangup: true }] });
    dialer.handlers.set('/provider_a/answer', () => ({ body: `<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="${dialer.url.replace('http', 'ws')}/media/tw1"><Parameter name="k" value="v"/></Stream></Connect></Response>` }));
    const res = await fetch(`${emu.url}/2010-04-01/Accounts/${TW.accountSid}/Calls.json`, {
      method: 'POST',
      headers: { authorization: basic(TW.accountSid, TW.authToken), 'content-type': 'application/x-www-form-urlencoded' },
      body: form([
        ['To', to], ['From', '+15559990000'], ['Url', `${dialer.url}/provider_a/answer?s=tw1`], ['Method', 'POST'],
        ['StatusCallback', `${dialer.url}/provider_a/callback/status?s=tw1`], ['StatusCallbackMethod', 'POST'],
        ['StatusCallbackEvent', 'initiated'], ['StatusCallbackEvent', 'ringing'], ['StatusCallbackEvent', 'answered'], ['StatusCallbackEvent', 'completed'],
        ['Timeout', '30'], ['TimeLimit', '60'], ['MachineDetection', 'Enable'],
      ]),
    });
    assert.equal(res.status, 201);
    const created = (await res.json()) as { sid: string; status: string };
    assert.match(created.sid, /^CA[0-9a-f]{32}$/);
    assert.equal(created.status, 'queued');
    const call = await emu.nextCall((c) => c.callSid === created.sid);
    assert.equal(call.rest[0]!.params.To, to);

    const sock = await dialer.socket('/media/tw1');
    await waitFor(() => sock.frames.length >= 2);
    assert.deepEqual(sock.frames[0], { event: 'connected', protocol: 'Call', version: '1.0.0' });
    const start = sock.frames[1]!;
    assert.equal(start.event, 'start');
    assert.equal(start.sequenceNumber, '1');
    assert.match(start.streamSid, /^MZ[0-9a-f]{32}$/);
    assert.deepEqual(start.start, {
      accountSid: TW.accountSid, streamSid: start.streamSid, callSid: created.sid, tracks: ['inbound'], customParameters: { k: 'v' },
      mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
    });
    // The callee speaks (real synthesised audio), then Dialer answers: 0.5 s, a mark, 2 s, a mark, then a barge-in clear.
    const callee = () => decodeMulaw(Buffer.concat(sock.frames.filter((f) => f.event === 'media').map((f) => Buffer.from(f.media.payload, 'base64'))));
    await waitFor(() => sock.frames.filter((f) => f.event === 'media').length >= 70 && peakRms(callee()) > 1000, 10_000, 'callee speech');
    const media = sock.frames.filter((f) => f.event === 'media');
    assert.equal(Buffer.from(media[0]!.media.payload, 'base64').length, 160);
    assert.equal(media[0]!.media.track, 'inbound');
    const heard = decodeMulaw(Buffer.concat(media.map((f) => Buffer.from(f.media.payload, 'base64'))));
    assert.ok(peakRms(heard) > 1000, `callee speech energy ${peakRms(heard)}`);
    const sid = start.streamSid as string;
    const payload = (ms: number) => encodeMulaw(tone(ms)).toString('base64');
    for (let i = 0; i < 5; i++) sock.ws.send(JSON.stringify({ event: 'media', streamSid: sid, media: { payload: payload(100) } }));
    sock.ws.send(JSON.stringify({ event: 'mark', streamSid: sid, mark: { name: 'm1' } }));
    sock.ws.send(JSON.stringify({ event: 'media', streamSid: sid, media: { payload: payload(2000) } }));
    sock.ws.send(JSON.stringify({ event: 'mark', streamSid: sid, mark: { name: 'm2' } }));
    await waitFor(() => sock.frames.some((f) => f.event === 'mark'), 3000, 'mark m1');
    await sleep(200);
    sock.ws.send(JSON.stringify({ event: 'clear', streamSid: sid }));
    await call.ended;
    assert.deepEqual(sock.frames.filter((f) => f.event === 'mark').map((f) => f.mark.name), ['m1', 'm2']);
    assert.deepEqual(call.received.marks.map((m) => m.name), ['m1', 'm2']);
    assert.ok(call.received.marks[0]!.atMs < call.received.marks[1]!.atMs);
    assert.equal(call.received.clears.length, 1);
    assert.equal(call.received.audioFrames, 6);
    const playedMs = call.received.pcm.length / 8;
    assert.ok(playedMs >= 600 && playedMs < 1400, `played ${playedMs} ms before the clear`);
    assert.ok(rms(call.received.pcm.subarray(0, 4000)) > 4000);
    assert.ok(call.sent.pcm.length > 8000);
    await waitFor(() => sock.closed, 3000, 'socket closed');
    assert.equal(sock.frames.at(-1)!.event, 'stop');
    assert.deepEqual(sock.frames.at(-1)!.stop, { accountSid: TW.accountSid, callSid: created.sid });

    const answer = dialer.hitsFor('/provider_a/answer', 'tw1');
    assert.equal(answer.length, 1);
    assert.ok(twilioValid(answer[0]!), 'answer request signed');
    assert.equal(answer[0]!.params.CallStatus, 'in-progress');
    assert.equal(answer[0]!.params.Direction, 'outbound-api');
    assert.equal(answer[0]!.params.AnsweredBy, 'human');
    const statuses = dialer.hitsFor('/provider_a/callback/status', 'tw1');
    assert.deepEqual(statuses.map((h) => h.params.CallStatus), ['initiated', 'ringing', 'in-progress', 'completed']);
    assert.deepEqual(statuses.map((h) => h.params.SequenceNumber), ['0', '1', '2', '3']);
    for (const h of statuses) assert.ok(twilioValid(h), `status ${h.params.CallStatus} signed`);
    const done = statuses.at(-1)!.params;
    assert.ok(Number(done.CallDuration) >= 1, `duration ${done.CallDuration}`);
    assert.equal(done.CallSid, created.sid);
    assert.equal(call.status, 'completed');
    assert.deepEqual(call.statusHistory, ['queued', 'ringing', 'in-progress', 'completed']);
    assert.equal(call.callbacks.length, 5);
    assert.ok(call.callbacks.every((c) => c.status === 200));
  });

  it('Plivo: REST call, V3-signed answer, <Stream>, playAudio/checkpoint/clearAudio, Dialer hangs up over REST', async () => {
    const emu = emulator();
    const to = '+15550000002';
    emu.script(to, { answer: 'answer', ringMs: 100, steps: [{ say: 'Hi.' }, { dtmf: '12' }] });
    dialer.handlers.set('/provider_c/answer', () => ({
      body: `<Response><Stream bidirectional="true" keepCallAlive="true" contentType="audio/x-mulaw;rate=8000" statusCallbackUrl="${dialer.url}/provider_c/callback/status?s=pl1&amp;stream=1">${dialer.url.replace('http', 'ws')}/media/pl1</Stream></Response>`,
    }));
    const res = await fetch(`${emu.url}/v1/Account/${PL.authId}/Call/`, {
      method: 'POST',
      headers: { authorization: basic(PL.authId, PL.authToken), 'content-type': 'application/json' },
      body: JSON.stringify({
        from: '+15559990000', to, answer_url: `${dialer.url}/provider_c/answer?s=pl1`, answer_method: 'POST',
        hangup_url: `${dialer.url}/provider_c/callback/status?s=pl1`, ring_url: `${dialer.url}/provider_c/callback/status?s=pl1`,
        machine_detection: 'true', ring_timeout: 30, time_limit: 60,
      }),
    });
    assert.equal(res.status, 201);
    const body = (await res.json()) as { message: string; request_uuid: string; api_id: string };
    assert.equal(body.message, 'call fired');
    const call = await emu.nextCall((c) => c.requestUuid === body.request_uuid);
    assert.match(call.callSid, /^[0-9a-f-]{36}$/);
    const sock = await dialer.socket('/media/pl1');
    await waitFor(() => sock.frames.length >= 1);
    const start = sock.frames[0]!;
    assert.equal(start.event, 'start');
    assert.equal(start.sequenceNumber, 1);
    assert.deepEqual(start.start, { callId: call.callSid, streamId: start.start.streamId, accountId: PL.authId, tracks: ['inbound'], mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000 } });
    await waitFor(() => sock.frames.filter((f) => f.event === 'dtmf').length === 2, 8000, 'dtmf');
    assert.deepEqual(sock.frames.filter((f) => f.event === 'dtmf').map((f) => f.dtmf.digit), ['1', '2']);
    const media = sock.frames.filter((f) => f.event === 'media');
    assert.equal(media[0]!.streamId, start.start.streamId);
    assert.ok(peakRms(decodeMulaw(Buffer.concat(media.map((f) => Buffer.from(f.media.payload, 'base64'))))) > 1000);
    const streamId = start.start.streamId as string;
    // 16 kHz L16 audio is accepted too.
    const l16 = pcmToBytes(Int16Array.from(tone(600), (v, i) => v)).toString('base64');
    sock.ws.send(JSON.stringify({ event: 'playAudio', media: { contentType: 'audio/x-mulaw', sampleRate: 8000, payload: encodeMulaw(tone(300)).toString('base64') } }));
    sock.ws.send(JSON.stringify({ event: 'checkpoint', streamId, name: 'c1' }));
    sock.ws.send(JSON.stringify({ event: 'playAudio', media: { contentType: 'audio/x-l16', sampleRate: 16000, payload: l16 } }));
    sock.ws.send(JSON.stringify({ event: 'checkpoint', streamId, name: 'c2' }));
    await waitFor(() => sock.frames.some((f) => f.event === 'playedStream'), 3000, 'playedStream');
    sock.ws.send(JSON.stringify({ event: 'clearAudio', streamId }));
    await waitFor(() => sock.frames.some((f) => f.event === 'clearedAudio'), 3000, 'clearedAudio');
    assert.deepEqual(sock.frames.filter((f) => f.event === 'playedStream').map((f) => [f.name, f.streamId]), [['c1', streamId], ['c2', streamId]]);
    assert.deepEqual(call.received.marks.map((m) => m.name), ['c1', 'c2']);
    assert.equal(call.received.clears.length, 1);

    const del = await fetch(`${emu.url}/v1/Account/${PL.authId}/Call/${call.callSid}/`, { method: 'DELETE', headers: { authorization: basic(PL.authId, PL.authToken) } });
    assert.equal(del.status, 204);
    await call.ended;
    await waitFor(() => sock.closed, 3000, 'socket closed');
    assert.ok(!sock.frames.some((f) => f.event === 'stop'), 'Plivo closes the socket without a stop message');
    const again = await fetch(`${emu.url}/v1/Account/${PL.authId}/Call/${call.callSid}/`, { method: 'DELETE', headers: { authorization: basic(PL.authId, PL.authToken) } });
    assert.equal(again.status, 404);

    const answer = dialer.hitsFor('/provider_c/answer', 'pl1');
    assert.equal(answer.length, 1);
    assert.ok(plivoValid(answer[0]!), 'answer V3 signature');
    assert.equal(answer[0]!.params.CallUUID, call.callSid);
    assert.equal(answer[0]!.params.RequestUUID, body.request_uuid);
    assert.equal(answer[0]!.params.Direction, 'outbound');
    assert.equal(answer[0]!.params.Machine, 'false');
    const cbs = dialer.hitsFor('/provider_c/callback/status', 'pl1');
    for (const h of cbs) assert.ok(plivoValid(h), `${h.params.Event} signed`);
    assert.deepEqual(cbs.map((h) => [h.params.Event, h.params.CallStatus]), [['Ring', 'ringing'], ['StartStream', undefined], ['StopStream', undefined], ['Hangup', 'completed']]);
    assert.equal(cbs[1]!.params.StreamID, streamId);
    assert.equal(cbs[1]!.params.stream, '1');
    const hangup = cbs.at(-1)!.params;
    assert.equal(hangup.HangupCause, 'NORMAL_CLEARING');
    assert.equal(hangup.HangupSource, 'API Request');
    assert.ok(Number(hangup.Duration) >= 1);
    assert.deepEqual(call.rest.map((r) => r.method), ['POST', 'DELETE', 'DELETE']);
  });

  it('Exotel: connect to the flow, the Voicebot URL, slin media, mark and clear, Dialer closes the socket, JSON status callback', async () => {
    const emu = emulator();
    const to = '+919800000003';
    emu.script(to, { answer: 'answer', ringMs: 100, steps: [{ say: 'Yes?' }] });
    // The flow: Voicebot applet (a stream URL), then the Connect applet (?transfer=1: the human to dial), then Hangup.
    dialer.handlers.set('/provider_b/answer', (hit) => ({
      type: 'application/json',
      body: JSON.stringify(
        hit.params.transfer === '1'
          ? { fetch_after_attempt: false, destination: { numbers: ['+919811111111'] }, start_call_playback: { playback_to: 'callee', type: 'text', value: 'Connecting you.' } }
          : { url: `${dialer.url.replace('http', 'ws')}/media/ex1` },
      ),
    }));
    const res = await fetch(`${emu.url}/v1/Accounts/${EX.accountSid}/Calls/connect.json`, {
      method: 'POST',
      headers: { authorization: basic(EX.apiKey, EX.apiToken), 'content-type': 'application/x-www-form-urlencoded' },
      body: form([
        ['From', to], ['CallerId', '08000000000'], ['Url', emu.exotelFlowUrl], ['CustomField', 'ex1'],
        ['StatusCallback', `${dialer.url}/provider_b/callback/status?s=ex1`], ['StatusCallbackEvents[0]', 'terminal'],
        ['StatusCallbackContentType', 'application/json'], ['TimeLimit', '60'], ['TimeOut', '30'],
      ]),
    });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { Call: { Sid: string; Status: string } };
    assert.match(body.Call.Sid, /^[0-9a-f]{32}$/);
    assert.equal(body.Call.Status, 'in-progress');
    const call = await emu.nextCall((c) => c.callSid === body.Call.Sid);
    const sock = await dialer.socket('/media/ex1');
    await waitFor(() => sock.frames.filter((f) => f.event === 'media').length >= 10, 8000, 'exotel media');
    assert.deepEqual(sock.frames[0], { event: 'connected' });
    const start = sock.frames[1]!;
    assert.equal(start.event, 'start');
    assert.deepEqual(start.start, {
      stream_sid: start.stream_sid, call_sid: call.callSid, account_sid: EX.accountSid, from: '08000000000', to, custom_parameters: {},
      media_format: { encoding: 'raw/slin', sample_rate: '8000', bit_rate: '128kbps' },
    });
    const media = sock.frames.filter((f) => f.event === 'media');
    assert.equal(Buffer.from(media[0]!.media.payload, 'base64').length, 1600);
    assert.ok(peakRms(bytesToPcm(Buffer.concat(media.map((f) => Buffer.from(f.media.payload, 'base64'))))) > 1000);
    const answer = dialer.hitsFor('/provider_b/answer', 'ex1')[0]!;
    assert.equal(answer.method, 'GET');
    assert.equal(answer.params.CallSid, call.callSid);
    assert.equal(answer.params.CallFrom, to);
    assert.equal(answer.params.Direction, 'outbound-api');
    const sid = start.stream_sid as string;
    sock.ws.send(JSON.stringify({ event: 'media', stream_sid: sid, media: { payload: pcmToBytes(tone(400)).toString('base64') } }));
    sock.ws.send(JSON.stringify({ event: 'mark', stream_sid: sid, mark: { name: 'x1' } }));
    sock.ws.send(JSON.stringify({ event: 'media', stream_sid: sid, media: { payload: pcmToBytes(tone(3000)).toString('base64') } }));
    sock.ws.send(JSON.stringify({ event: 'mark', stream_sid: sid, mark: { name: 'x2' } }));
    await waitFor(() => sock.frames.some((f) => f.event === 'mark'), 3000, 'mark');
    sock.ws.send(JSON.stringify({ event: 'clear', stream_sid: sid }));
    await waitFor(() => sock.frames.filter((f) => f.event === 'mark').length === 2, 3000, 'both marks');
    await sleep(1000);
    sock.ws.close(1000);
    await call.ended;
    assert.equal(call.wsCloseCode, 1000);
    assert.deepEqual(call.received.marks.map((m) => m.name), ['x1', 'x2']);
    assert.equal(call.received.clears.length, 1);
    const cb = dialer.hitsFor('/provider_b/callback/status', 'ex1');
    assert.equal(cb.length, 1);
    assert.match(String(cb[0]!.headers['content-type']), /application\/json/);
    assert.equal(cb[0]!.params.Status, 'completed');
    assert.equal(cb[0]!.params.EventType, 'terminal');
    assert.equal(cb[0]!.params.CustomField, 'ex1');
    assert.ok(Number(cb[0]!.params.ConversationDuration) >= 1);
    const connect = dialer.hitsFor('/provider_b/answer', 'ex1');
    assert.deepEqual(connect.map((h) => h.params.transfer), [undefined, '1']);
    assert.equal(call.redirectedTo, '+919811111111');
    assert.deepEqual(call.said, ['Connecting you.']);
    assert.equal(call.markup.length, 2);
    const legs = (JSON.parse(cb[0]!.raw) as { Legs: Array<{ OnCallDuration: number; AnsweredBy: string }> }).Legs;
    assert.deepEqual(legs.map((l) => l.AnsweredBy), ['NA', 'HUMAN']);
  });

  it('busy and no-answer end with their terminal callbacks', async () => {
    const emu = emulator();
    emu.script('+15550000011', { answer: 'busy', ringMs: 50 });
    emu.script('+15550000012', { answer: 'no_answer', ringMs: 50 });
    emu.script('+919800000013', { answer: 'busy', ringMs: 50 });
    const tw = await fetch(`${emu.url}/2010-04-01/Accounts/${TW.accountSid}/Calls.json`, {
      method: 'POST',
      headers: { authorization: basic(TW.accountSid, TW.authToken), 'content-type': 'application/x-www-form-urlencoded' },
      body: form([['To', '+15550000011'], ['From', '+15559990000'], ['Url', `${dialer.url}/provider_a/answer?s=b1`], ['StatusCallback', `${dialer.url}/provider_a/callback/status?s=b1`]]),
    });
    const pl = await fetch(`${emu.url}/v1/Account/${PL.authId}/Call/`, {
      method: 'POST',
      headers: { authorization: basic(PL.authId, PL.authToken), 'content-type': 'application/json' },
      body: JSON.stringify({ from: '+15559990000', to: '+15550000012', answer_url: `${dialer.url}/provider_c/answer?s=n1`, hangup_url: `${dialer.url}/provider_c/callback/status?s=n1` }),
    });
    const ex = await fetch(`${emu.url}/v1/Accounts/${EX.accountSid}/Calls/connect`, {
      method: 'POST',
      headers: { authorization: basic(EX.apiKey, EX.apiToken), 'content-type': 'application/x-www-form-urlencoded' },
      body: form([['From', '+919800000013'], ['CallerId', '08000000000'], ['Url', emu.exotelFlowUrl], ['CustomField', 'e2'], ['StatusCallback', `${dialer.url}/provider_b/callback/status?s=e2`]]),
    });
    assert.equal(tw.status, 201);
    assert.equal(pl.status, 201);
    assert.equal(ex.status, 200);
    assert.match(await ex.text(), /<TwilioResponse><Call><Sid>[0-9a-f]{32}<\/Sid>/);
    const [a, c, b] = await Promise.all([
      emu.nextCall((x) => x.to === '+15550000011'),
      emu.nextCall((x) => x.to === '+15550000012'),
      emu.nextCall((x) => x.to === '+919800000013'),
    ]);
    await Promise.all([a.ended, b.ended, c.ended]);
    const twCb = dialer.hitsFor('/provider_a/callback/status', 'b1');
    assert.deepEqual(twCb.map((h) => [h.params.CallStatus, h.params.CallDuration, h.params.Direction]), [['busy', '0', 'outbound-api']]);
    assert.ok(twilioValid(twCb[0]!));
    const plCb = dialer.hitsFor('/provider_c/callback/status', 'n1');
    assert.deepEqual(plCb.map((h) => [h.params.CallStatus, h.params.HangupCause, h.params.Duration]), [['no-answer', 'NO_ANSWER', '0']]);
    assert.ok(plivoValid(plCb[0]!));
    const exCb = dialer.hits.filter((h) => h.path === '/provider_b/callback/status' && h.params.s === 'e2');
    assert.deepEqual(exCb.map((h) => h.params.Status), ['busy']);
    assert.equal(exCb[0]!.params.EventType, undefined, 'no event fields when no events were subscribed');
    assert.equal(dialer.hitsFor('/provider_a/answer', 'b1').length, 0);
    assert.equal(b.status, 'busy');
    assert.equal(c.status, 'no-answer');
  });

  it('voicemail: Twilio AMD reports machine_start, Plivo Machine=true; Dialer hangs up with markup', async () => {
    const emu = emulator();
    emu.script('+15550000021', { answer: 'voicemail', ringMs: 50 });
    emu.script('+15550000022', { answer: 'voicemail', ringMs: 50 });
    dialer.handlers.set('/provider_a/answer', () => ({ body: '<Response><Hangup/></Response>' }));
    dialer.handlers.set('/provider_c/answer', () => ({ body: '<Response><Hangup/></Response>' }));
    await fetch(`${emu.url}/2010-04-01/Accounts/${TW.accountSid}/Calls.json`, {
      method: 'POST',
      headers: { authorization: basic(TW.accountSid, TW.authToken), 'content-type': 'application/x-www-form-urlencoded' },
      body: form([['To', '+15550000021'], ['From', '+15559990000'], ['Url', `${dialer.url}/provider_a/answer?s=v1`], ['StatusCallback', `${dialer.url}/provider_a/callback/status?s=v1`], ['MachineDetection', 'Enable']]),
    });
    await fetch(`${emu.url}/v1/Account/${PL.authId}/Call/`, {
      method: 'POST',
      headers: { authorization: basic(PL.authId, PL.authToken), 'content-type': 'application/json' },
      body: JSON.stringify({ from: '+15559990000', to: '+15550000022', answer_url: `${dialer.url}/provider_c/answer?s=v2`, machine_detection: 'true' }),
    });
    const [a, c] = await Promise.all([emu.nextCall((x) => x.to === '+15550000021'), emu.nextCall((x) => x.to === '+15550000022')]);
    await Promise.all([a.ended, c.ended]);
    assert.equal(dialer.hitsFor('/provider_a/answer', 'v1')[0]!.params.AnsweredBy, 'machine_start');
    const final = dialer.hitsFor('/provider_a/callback/status', 'v1');
    assert.deepEqual(final.map((h) => [h.params.CallStatus, h.params.AnsweredBy]), [['completed', 'machine_start']]);
    // Without a hangup_url Plivo posts the hangup to the answer_url.
    const pl = dialer.hitsFor('/provider_c/answer', 'v2');
    assert.deepEqual(pl.map((h) => [h.params.Event, h.params.Machine ?? '']), [['StartApp', 'true'], ['Hangup', '']]);
    assert.equal(pl[1]!.params.HangupSource, 'Plivo');
    assert.ok(pl.every(plivoValid));
  });

  it('Plivo: a transfer over REST (legs=aleg, aleg_url) dials the human; a queued call is canceled by its request_uuid', async () => {
    const emu = emulator();
    const to = '+15550000050';
    emu.script(to, { answer: 'answer', ringMs: 50 });
    const ws = dialer.url.replace('http', 'ws');
    dialer.handlers.set('/provider_c/answer', (hit) => ({
      body:
        hit.params.transfer === '1'
          ? `<Response><Dial action="${dialer.url}/provider_c/callback/transfer/status?s=pt" callbackUrl="${dialer.url}/provider_c/callback/transfer/events?s=pt" callerId="+15559990000"><Number>+15557770001</Number></Dial></Response>`
          : `<Response><Stream bidirectional="true" keepCallAlive="true" contentType="audio/x-mulaw;rate=8000">${ws}/media/pt</Stream></Response>`,
    }));
    dialer.handlers.set('/provider_c/callback/transfer/status', () => ({ body: '<Response><Hangup/></Response>' }));
    const auth = { authorization: basic(PL.authId, PL.authToken), 'content-type': 'application/json' };
    const res = await fetch(`${emu.url}/v1/Account/${PL.authId}/Call/`, {
      method: 'POST', headers: auth,
      body: JSON.stringify({ from: '+15559990000', to, answer_url: `${dialer.url}/provider_c/answer?s=pt`, hangup_url: `${dialer.url}/provider_c/callback/status?s=pt` }),
    });
    const { request_uuid } = (await res.json()) as { request_uuid: string };
    const call = await emu.nextCall((c) => c.requestUuid === request_uuid);
    const sock = await dialer.socket('/media/pt');
    await waitFor(() => sock.frames.length >= 1);
    const byRequest = await fetch(`${emu.url}/v1/Account/${PL.authId}/Call/${request_uuid}/`, { method: 'POST', headers: auth, body: JSON.stringify({ legs: 'aleg', aleg_url: 'x' }) });
    assert.equal(byRequest.status, 404, 'live calls are known by their CallUUID');
    const tr = await fetch(`${emu.url}/v1/Account/${PL.authId}/Call/${call.callSid}/`, {
      method: 'POST', headers: auth, body: JSON.stringify({ legs: 'aleg', aleg_url: `${dialer.url}/provider_c/answer?s=pt&transfer=1`, aleg_method: 'POST' }),
    });
    assert.equal(tr.status, 202);
    assert.equal(((await tr.json()) as { message: string }).message, 'call transferred');
    await call.ended;
    assert.ok(sock.closed);
    assert.equal(call.redirectedTo, '+15557770001');
    assert.equal(call.markup.length, 3);
    const events = dialer.hitsFor('/provider_c/callback/transfer/events', 'pt');
    assert.deepEqual(events.map((h) => h.params.DialAction), ['answer', 'hangup']);
    const action = dialer.hitsFor('/provider_c/callback/transfer/status', 'pt');
    assert.equal(action[0]!.params.DialStatus, 'completed');
    assert.ok([...events, ...action].every(plivoValid));
    assert.equal(dialer.hitsFor('/provider_c/callback/status', 'pt').at(-1)!.params.CallStatus, 'completed');

    emu.script('+15550000051', { answer: 'answer', ringMs: 5000 });
    const queued = await fetch(`${emu.url}/v1/Account/${PL.authId}/Call/`, {
      method: 'POST', headers: auth,
      body: JSON.stringify({ from: '+15559990000', to: '+15550000051', answer_url: `${dialer.url}/provider_c/answer?s=pq`, hangup_url: `${dialer.url}/provider_c/callback/status?s=pq` }),
    });
    const q = (await queued.json()) as { request_uuid: string };
    const del = await fetch(`${emu.url}/v1/Account/${PL.authId}/Request/${q.request_uuid}/`, { method: 'DELETE', headers: auth });
    assert.equal(del.status, 204);
    const canceled = await emu.nextCall((c) => c.requestUuid === q.request_uuid);
    await canceled.ended;
    assert.deepEqual(dialer.hitsFor('/provider_c/callback/status', 'pq').map((h) => h.params.CallStatus), ['cancel']);
  });

  it('REST: wrong credentials get 401 and missing fields 400, in each provider\'s error shape', async () => {
    const emu = emulator();
    const tw = await fetch(`${emu.url}/2010-04-01/Accounts/${TW.accountSid}/Calls.json`, { method: 'POST', headers: { authorization: basic(TW.accountSid, 'wrong') }, body: '' });
    assert.equal(tw.status, 401);
    assert.deepEqual(await tw.json(), { code: 20003, message: 'Authenticate', more_info: 'https://www.twilio.com/docs/errors/20003', status: 401 });
    const pl = await fetch(`${emu.url}/v1/Account/${PL.authId}/Call/`, { method: 'POST' });
    assert.equal(pl.status, 401);
    assert.ok(((await pl.json()) as { error: string }).error);
    const ex = await fetch(`${emu.url}/v1/Accounts/${EX.accountSid}/Calls/connect.json`, { method: 'POST', headers: { authorization: basic(EX.apiKey, 'nope') } });
    assert.equal(ex.status, 401);
    assert.equal(((await ex.json()) as { RestException: { Status: number } }).RestException.Status, 401);
    const missing = await fetch(`${emu.url}/2010-04-01/Accounts/${TW.accountSid}/Calls.json`, {
      method: 'POST', headers: { authorization: basic(TW.accountSid, TW.authToken), 'content-type': 'application/x-www-form-urlencoded' }, body: form([['To', '+15550000020']]),
    });
    assert.equal(missing.status, 400);
    assert.equal(((await missing.json()) as { code: number }).code, 21213);
    const unknown = await fetch(`${emu.url}/2010-04-01/Accounts/${TW.accountSid}/Calls/CA${'0'.repeat(32)}.json`, {
      method: 'POST', headers: { authorization: basic(TW.accountSid, TW.authToken), 'content-type': 'application/x-www-form-urlencoded' }, body: form([['Status', 'completed']]),
    });
    assert.equal(unknown.status, 404);
    assert.equal(((await unknown.json()) as { code: number }).code, 20404);
  });

  it('inbound: the caller reaches Dialer\'s answer URL; <Say> then <Hangup/>', async () => {
    const emu = emulator();
    dialer.handlers.set('/provider_a/answer', (hit) =>
      hit.params.Direction === 'inbound' ? { body: '<Response><Say>We are closed.</Say><Hangup/></Response>' } : { status: 404, body: '' },
    );
    const call = await emu.inbound({ provider: 'PROVIDER_A', from: '+15550000030', to: '+15559990000' });
    assert.equal(call.direction, 'inbound');
    await call.ended;
    assert.deepEqual(call.said, ['We are closed.']);
    const answer = dialer.hits.find((h) => h.path === '/provider_a/answer' && h.params.CallSid === call.callSid)!;
    assert.ok(twilioValid(answer));
    assert.equal(answer.params.Direction, 'inbound');
    assert.equal(answer.params.From, '+15550000030');
    assert.equal(answer.params.CallStatus, 'ringing');
    const status = dialer.hits.find((h) => h.path === '/provider_a/callback/status' && h.params.CallSid === call.callSid)!;
    assert.equal(status.params.CallStatus, 'completed');
    assert.ok(twilioValid(status));
    assert.equal(call.markup.length, 1);

    dialer.handlers.set('/provider_b/answer', () => ({ type: 'application/json', body: JSON.stringify({ url: `${dialer.url.replace('http', 'ws')}/media/ex-in` }) }));
    emu.script('+919800000031', { answer: 'answer', steps: [{ wait: 100 }, { hangup: true }] });
    const exo = await emu.inbound({ provider: 'PROVIDER_B', from: '+919800000031', to: '08000000000' });
    await exo.ended;
    const exAnswer = dialer.hits.find((h) => h.path === '/provider_b/answer' && h.params.CallSid === exo.callSid)!;
    assert.equal(exAnswer.params.Direction, 'incoming');
    assert.equal(exAnswer.params.CallFrom, '+919800000031');
    const sock = await dialer.socket('/media/ex-in');
    await waitFor(() => sock.closed, 3000, 'socket closed');
    assert.equal(sock.frames.at(-1)!.event, 'stop');
  });

  it('Twilio: new TwiML over REST moves the callee to a human (<Dial>)', async () => {
    const emu = emulator();
    const to = '+15550000040';
    emu.script(to, { answer: 'answer', ringMs: 50 });
    dialer.handlers.set('/provider_a/answer', () => ({ body: `<Response><Connect><Stream url="${dialer.url.replace('http', 'ws')}/media/tw-x"/></Connect></Response>` }));
    const res = await fetch(`${emu.url}/2010-04-01/Accounts/${TW.accountSid}/Calls.json`, {
      method: 'POST',
      headers: { authorization: basic(TW.accountSid, TW.authToken), 'content-type': 'application/x-www-form-urlencoded' },
      body: form([['To', to], ['From', '+15559990000'], ['Url', `${dialer.url}/provider_a/answer?s=tx`], ['StatusCallback', `${dialer.url}/provider_a/callback/status?s=tx`]]),
    });
    const { sid } = (await res.json()) as { sid: string };
    const sock = await dialer.socket('/media/tw-x');
    await waitFor(() => sock.frames.length >= 2);
    const twiml = `<Response><Dial callerId="+15559990000"><Number statusCallback="${dialer.url}/provider_a/callback/transfer/status?s=tx" statusCallbackEvent="answered completed">+15557770000</Number></Dial></Response>`;
    const upd = await fetch(`${emu.url}/2010-04-01/Accounts/${TW.accountSid}/Calls/${sid}.json`, {
      method: 'POST', headers: { authorization: basic(TW.accountSid, TW.authToken), 'content-type': 'application/x-www-form-urlencoded' }, body: form([['Twiml', twiml]]),
    });
    assert.equal(upd.status, 200);
    const call = await emu.nextCall((c) => c.callSid === sid);
    await call.ended;
    assert.equal(call.redirectedTo, '+15557770000');
    assert.equal(sock.frames.at(-1)!.event, 'stop');
    const transfer = dialer.hitsFor('/provider_a/callback/transfer/status', 'tx');
    assert.deepEqual(transfer.map((h) => h.params.CallStatus), ['in-progress', 'completed']);
    assert.ok(transfer.every((h) => h.params.ParentCallSid === sid && twilioValid(h)));
    assert.equal(dialer.hitsFor('/provider_a/callback/status', 'tx').at(-1)!.params.CallStatus, 'completed');
    assert.ok(logs.length > 0);
  });
});

describe('provider emulator without media records (load)', () => {
  const { dialer, emulator } = emulatorSuite({ recordMedia: false });

  it('streams, hears and echoes marks as before, but keeps no frames or audio of the call', async () => {
    const emu = emulator();
    const to = '+15550000901';
    emu.script(to, { answer: 'answer', ringMs: 100, steps: [{ say: 'Hello there.' }, { waitForAudio: 4000 }, { hangup: true }] });
    dialer.handlers.set('/provider_a/answer', () => ({ body: `<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="${dialer.url.replace('http', 'ws')}/media/light1"/></Connect></Response>` }));
    const res = await placeTwilioCall(emu, to, `${dialer.url}/provider_a/answer?s=light1`);
    assert.equal(res.status, 201);
    const call = await emu.nextCall((c) => c.to === to);
    const sock = await dialer.socket('/media/light1');
    // The callee's speech still reaches Dialer.
    const callee = () => decodeMulaw(Buffer.concat(sock.frames.filter((f) => f.event === 'media').map((f) => Buffer.from(f.media.payload, 'base64'))));
    await waitFor(() => sock.frames.filter((f) => f.event === 'media').length >= 70 && peakRms(callee()) > 1000, 10_000, 'callee speech');
    const sid = sock.frames[1]!.streamSid as string;
    sock.ws.send(JSON.stringify({ event: 'media', streamSid: sid, media: { payload: encodeMulaw(tone(600)).toString('base64') } }));
    sock.ws.send(JSON.stringify({ event: 'mark', streamSid: sid, mark: { name: 'end' } }));
    await call.ended;
    // Heard and echoed as with records: the mark after the audio played, the voice's span, the count.
    assert.deepEqual(sock.frames.filter((f) => f.event === 'mark').map((f) => f.mark.name), ['end']);
    assert.deepEqual(call.received.marks.map((m) => m.name), ['end']);
    assert.equal(call.received.audioFrames, 1);
    assert.equal(call.received.voiced.length, 1);
    const span = call.received.voiced[0]!;
    assert.ok(span.toMs - span.fromMs >= 560 && span.toMs - span.fromMs <= 640, `voiced ${span.fromMs}-${span.toMs}`);
    assert.ok(call.sent.frames > 70);
    // ... and nothing of the media kept.
    assert.equal(call.received.pcm.length, 0);
    assert.equal(call.sent.pcm.length, 0);
    assert.deepEqual(call.received.audioAtMs, []);
    assert.deepEqual((call.received.frames as Array<{ event: string }>).map((f) => f.event), ['mark']);
  });
});

describe('provider emulator keeping a bounded number of ended calls', () => {
  const { dialer, emulator } = emulatorSuite({ keepEndedCalls: 1 });

  it('forgets the oldest ended call beyond the number kept: gone from calls and from the REST API', async () => {
    const emu = emulator();
    const place = async (to: string) => {
      emu.script(to, { answer: 'busy', ringMs: 50 });
      const res = await placeTwilioCall(emu, to, `${dialer.url}/provider_a/answer?s=k`);
      assert.equal(res.status, 201);
      const call = await emu.nextCall((c) => c.to === to);
      await call.ended;
      return call;
    };
    const lookup = (sid: string) =>
      fetch(`${emu.url}/2010-04-01/Accounts/${TW.accountSid}/Calls/${sid}.json`, { headers: { authorization: basic(TW.accountSid, TW.authToken) } });
    const first = await place('+15550000701');
    assert.equal((await lookup(first.callSid)).status, 200);
    const second = await place('+15550000702');
    await waitFor(() => emu.calls.length === 1, 2000, 'the first call forgotten');
    assert.deepEqual(emu.calls.map((c) => c.callSid), [second.callSid]);
    assert.equal((await lookup(first.callSid)).status, 404);
    const kept = await lookup(second.callSid);
    assert.equal(kept.status, 200);
    assert.equal(((await kept.json()) as { status: string }).status, 'busy');
  });
});

import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import plivo from 'plivo';
import { decodeMulaw } from '../../src/lib/audio.js';
import { createPlivoKit, plivoSignatureV3 } from '../../src/telephony/plivo/index.js';
import { ProtocolError, ProviderError, type CallbackRequest, type MediaEvent, type PlaceCallRequest } from '../../src/telephony/provider.js';

/** The plivo SDK's XML builder (its typings declare Response as a plain function). */
interface PlivoXml {
  addSpeak(body: string): unknown;
  addHangup(): unknown;
  addStream(body: string, attributes: Record<string, string>): unknown;
  addDial(attributes: Record<string, string>): { addNumber(body: string): unknown };
  toXML(): string;
}
const PlivoResponse = plivo.Response as unknown as new () => PlivoXml;

const AUTH_ID = 'MAXXXXXXXXXXXXXXXXXX';
const TOKEN = 'plivo-auth-token-456';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}
type Reply = { status: number; body?: unknown };

/** A local stand-in for api.plivo.com: records every request and answers from a queue. */
class FakeApi {
  seen: Seen[] = [];
  replies: Reply[] = [];
  url = '';
  private server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      this.seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const reply = this.replies.shift() ?? { status: 200, body: {} };
      if (reply.body === undefined) {
        res.writeHead(reply.status);
        res.end();
      } else {
        res.writeHead(reply.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(reply.body));
      }
    });
  });
  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  reset(...replies: Reply[]): void {
    this.seen = [];
    this.replies = replies;
  }
  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const api = new FakeApi();
before(() => api.start());
after(() => api.close());
const kit = () => createPlivoKit({ authId: AUTH_ID, authToken: TOKEN, apiBaseUrl: api.url });
const BASIC = `Basic ${Buffer.from(`${AUTH_ID}:${TOKEN}`).toString('base64')}`;

const CALL: PlaceCallRequest = {
  to: '+919876543210',
  from: '+918047491899',
  answerUrl: 'https://dialer.example/api/v1/provider_c/answer?s=tok123',
  statusUrl: 'https://dialer.example/api/v1/provider_c/callback/status?s=tok123',
  token: 'tok123',
  machineDetection: 'answer',
  ringTimeoutSeconds: 30,
  maxDurationSeconds: 900,
};

const TRANSFER = {
  to: '+919876500000',
  from: '+918047491899',
  statusUrl: 'https://dialer.example/api/v1/provider_c/callback/transfer/status?s=tok123',
  eventsUrl: 'https://dialer.example/api/v1/provider_c/callback/transfer/events?s=tok123',
  markupUrl: 'https://dialer.example/api/v1/provider_c/answer?s=tok123&transfer=1',
};

const REQUEST_UUID = '9834029e-58b6-11e1-b8b7-a5bd0e4e126f';
const CALL_UUID = 'c1a2b3c4-0000-4000-8000-123456789abc';

async function rejects(promise: Promise<unknown>, check: (err: ProviderError) => void): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof ProviderError, `expected ProviderError, got ${String(err)}`);
    check(err);
    return true;
  });
}

describe('Plivo REST', () => {
  it('makes a call with a JSON body, basic auth and machine detection', async () => {
    api.reset({ status: 201, body: { message: 'call fired', request_uuid: REQUEST_UUID, api_id: '97ceeb52-58b6-11e1-86da-77300b68f8bb' } });
    const { callSid } = await kit().placeCall(CALL);
    assert.equal(callSid, REQUEST_UUID);
    const req = api.seen[0]!;
    assert.equal(req.method, 'POST');
    assert.equal(req.url, `/v1/Account/${AUTH_ID}/Call/`);
    assert.equal(req.headers.authorization, BASIC);
    assert.equal(req.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(req.body), {
      from: CALL.from,
      to: CALL.to,
      answer_url: CALL.answerUrl,
      answer_method: 'POST',
      hangup_url: CALL.statusUrl,
      hangup_method: 'POST',
      ring_url: CALL.statusUrl,
      ring_method: 'POST',
      ring_timeout: 30,
      time_limit: 900,
      machine_detection: 'true',
      machine_detection_time: 5000,
    });
  });

  it('leaves machine detection out when not wanted', async () => {
    api.reset({ status: 201, body: { message: 'call queued', request_uuid: REQUEST_UUID, api_id: 'x' } });
    await kit().placeCall({ ...CALL, machineDetection: false });
    const body = JSON.parse(api.seen[0]!.body) as Record<string, unknown>;
    assert.equal('machine_detection' in body, false);
    assert.equal('machine_detection_time' in body, false);
  });

  it('turns error answers into ProviderError with Plivo\'s error text, retryable only for 429 and 5xx', async () => {
    api.reset({ status: 400, body: { api_id: 'a1', error: 'invalid to number format' } });
    await rejects(kit().placeCall(CALL), (err) => {
      assert.equal(err.status, 400);
      assert.equal(err.retryable, false);
      assert.match(err.message, /invalid to number format/);
    });
    for (const [status, retryable] of [[401, false], [404, false], [429, true], [500, true], [502, true]] as const) {
      api.reset({ status, body: { api_id: 'a2', error: `failure ${status}` } });
      await rejects(kit().placeCall(CALL), (err) => {
        assert.equal(err.status, status);
        assert.equal(err.retryable, retryable, `HTTP ${status}`);
        assert.match(err.message, new RegExp(`failure ${status}`));
      });
      // The call may have been created: Dialer does not ask for it twice.
      assert.equal(api.seen.length, 1, `HTTP ${status}`);
    }
    api.reset({ status: 201, body: { message: 'call fired', api_id: 'x' } });
    await rejects(kit().placeCall(CALL), (err) => assert.equal(err.retryable, false));
  });

  it('reports an unreachable API as a retryable ProviderError with the cause', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const offline = createPlivoKit({ authId: AUTH_ID, authToken: TOKEN, apiBaseUrl: `http://127.0.0.1:${port}` });
    await rejects(offline.placeCall(CALL), (err) => {
      assert.equal(err.status, undefined);
      assert.equal(err.retryable, true);
      assert.ok(err.cause);
    });
  });

  it('hangs up a live call, else a queued request; 404 on both is success', async () => {
    api.reset({ status: 204 });
    await kit().hangup(CALL_UUID);
    assert.deepEqual(api.seen.map((s) => [s.method, s.url]), [['DELETE', `/v1/Account/${AUTH_ID}/Call/${CALL_UUID}/`]]);
    assert.equal(api.seen[0]!.headers.authorization, BASIC);

    api.reset({ status: 404, body: { api_id: 'a', error: 'not found' } }, { status: 204 });
    await kit().hangup(REQUEST_UUID);
    assert.deepEqual(api.seen.map((s) => [s.method, s.url]), [
      ['DELETE', `/v1/Account/${AUTH_ID}/Call/${REQUEST_UUID}/`],
      ['DELETE', `/v1/Account/${AUTH_ID}/Request/${REQUEST_UUID}/`],
    ]);

    api.reset({ status: 404, body: { api_id: 'a', error: 'not found' } }, { status: 404, body: { api_id: 'b', error: 'not found' } });
    await kit().hangup(REQUEST_UUID);
    assert.equal(api.seen.length, 2);

    // A DELETE is harmless twice: a 5xx is tried again, three times in all.
    const serverError = { status: 500, body: { api_id: 'a', error: 'server error' } };
    api.reset(serverError, serverError, serverError);
    await rejects(kit().hangup(CALL_UUID), (err) => assert.equal(err.retryable, true));
    assert.equal(api.seen.length, 3);
    api.reset(serverError, { status: 204 });
    await kit().hangup(CALL_UUID);
    assert.equal(api.seen.length, 2);
    const busy = { status: 503, body: { api_id: 'b', error: 'busy' } };
    api.reset({ status: 404, body: { api_id: 'a', error: 'not found' } }, busy, busy, busy);
    await rejects(kit().hangup(CALL_UUID), (err) => assert.equal(err.status, 503));
    assert.equal(api.seen.length, 4);
  });

  it('transfers the A leg to the markup URL', async () => {
    api.reset({ status: 202, body: { message: 'call transferred', api_id: 'x' } });
    await kit().transfer(CALL_UUID, TRANSFER);
    const req = api.seen[0]!;
    assert.equal(req.method, 'POST');
    assert.equal(req.url, `/v1/Account/${AUTH_ID}/Call/${CALL_UUID}/`);
    assert.equal(req.headers.authorization, BASIC);
    assert.equal(req.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(req.body), { legs: 'aleg', aleg_url: TRANSFER.markupUrl, aleg_method: 'POST' });
    api.reset({ status: 404, body: { api_id: 'x', error: 'call not found' } });
    await rejects(kit().transfer(CALL_UUID, TRANSFER), (err) => assert.match(err.message, /call not found/));
  });
});

function signedRequest(method: string, url: string, params: Record<string, string>, headers: Record<string, string>): CallbackRequest {
  const query = Object.fromEntries(new URL(url).searchParams);
  return {
    method,
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    rawBody: method === 'GET' ? '' : new URLSearchParams(params).toString(),
    params: { ...query, ...params },
  };
}

describe('Plivo V3 signatures', () => {
  const url = 'https://dialer.example/api/v1/provider_c/callback/status?s=tok123';
  const params = { CallUUID: CALL_UUID, CallStatus: 'completed', From: '+918047491899', To: '+919876543210', HangupCause: 'NORMAL_CLEARING', Duration: '42' };
  const nonce = '05429567804466091622';

  it('computes what the plivo SDK validates', () => {
    const cases: [string, string, Record<string, string>][] = [
      ['POST', url, params],
      ['POST', 'https://dialer.example/api/v1/provider_c/answer?s=tok&b=2&a=1&a=0', params],
      ['POST', 'https://dialer.example:8443/hook/', { B: 'x y', A: 'z+w' }],
      ['POST', 'https://dialer.example/hook?s=1', {}],
      ['POST', 'https://dialer.example/hook', {}],
      ['GET', 'https://dialer.example/hook?s=1&CallUUID=abc&From=%2B91', {}],
      ['GET', 'https://dialer.example/hook?s=1', { extra: 'v' }],
    ];
    for (const [method, u, p] of cases) {
      const signature = plivoSignatureV3(TOKEN, method, u, nonce, p);
      assert.equal(plivo.validateV3Signature(method, u, nonce, TOKEN, signature, p), true, `${method} ${u}`);
      assert.equal(plivo.validateV3Signature(method, u, nonce, 'other-token', signature, p), false);
    }
  });

  it('verifies a signed callback and rejects tampering', () => {
    const k = kit();
    const signature = plivoSignatureV3(TOKEN, 'POST', url, nonce, params);
    const headers = { 'x-plivo-signature-v3': signature, 'x-plivo-signature-v3-nonce': nonce };
    assert.equal(k.verify(signedRequest('POST', url, params, headers)), true);
    assert.equal(k.verify(signedRequest('POST', url, params, { ...headers, 'x-plivo-signature-v3': `bm90LXRoaXMtb25l,${signature}` })), true, 'one of several signatures');
    assert.equal(k.verify(signedRequest('POST', url, { ...params, CallStatus: 'busy' }, headers)), false, 'tampered param');
    assert.equal(k.verify(signedRequest('POST', url.replace('tok123', 'tok124'), params, headers)), false, 'wrong URL');
    assert.equal(k.verify(signedRequest('POST', url, params, { ...headers, 'x-plivo-signature-v3-nonce': '1' })), false, 'wrong nonce');
    assert.equal(k.verify(signedRequest('POST', url, params, { 'x-plivo-signature-v3-nonce': nonce })), false, 'missing signature');
    assert.equal(k.verify(signedRequest('POST', url, params, { 'x-plivo-signature-v3': signature })), false, 'missing nonce');
    const other = createPlivoKit({ authId: AUTH_ID, authToken: 'another', apiBaseUrl: api.url });
    assert.equal(other.verify(signedRequest('POST', url, params, headers)), false, 'wrong token');
  });

  it('verifies GET callbacks by their URL', () => {
    const getUrl = 'https://dialer.example/api/v1/provider_c/answer?s=tok&CallUUID=abc&From=%2B918047491899';
    const signature = plivoSignatureV3(TOKEN, 'GET', getUrl, nonce, {});
    assert.equal(plivo.validateV3Signature('GET', getUrl, nonce, TOKEN, signature, {}), true);
    const request = signedRequest('GET', getUrl, {}, { 'x-plivo-signature-v3': signature, 'x-plivo-signature-v3-nonce': nonce });
    assert.equal(kit().verify(request), true);
  });
});

describe('Plivo XML', () => {
  const k = createPlivoKit({ authId: AUTH_ID, authToken: TOKEN, apiBaseUrl: 'https://api.plivo.com' });
  it('streams the call bidirectionally and keeps it up', () => {
    const expected = new PlivoResponse();
    expected.addStream('wss://dialer.example/api/v1/media/tok123', {
      bidirectional: 'true',
      keepCallAlive: 'true',
      contentType: 'audio/x-mulaw;rate=8000',
      statusCallbackUrl: 'https://dialer.example/api/v1/provider_c/callback/status?s=tok123&a=1',
    });
    const markup = k.streamMarkup('wss://dialer.example/api/v1/media/tok123', 'https://dialer.example/api/v1/provider_c/callback/status?s=tok123&a=1');
    assert.equal(markup.contentType, 'application/xml');
    assert.equal(markup.body, expected.toXML());
  });

  it('blocks with <Speak> then <Hangup/> or a <Dial>', () => {
    const message = 'Sorry & goodbye <now>';
    const a = new PlivoResponse();
    a.addSpeak(message);
    a.addHangup();
    assert.equal(k.blockMarkup({ message }).body, a.toXML());
    const b = new PlivoResponse();
    b.addSpeak(message);
    b.addDial({ callerId: '+918047491899' }).addNumber('+919876500000');
    assert.equal(k.blockMarkup({ message, redirectTo: '+919876500000', callerId: '+918047491899' }).body, b.toXML());
    assert.equal(k.blockMarkup({}).body, '<Response><Hangup/></Response>');
  });

  it('dials the human of a transfer and hangs up', () => {
    const t = new PlivoResponse();
    t.addDial({ action: TRANSFER.statusUrl, callbackUrl: TRANSFER.eventsUrl, callerId: TRANSFER.from }).addNumber(TRANSFER.to);
    assert.equal(k.transferMarkup(TRANSFER).body, t.toXML());
    const h = new PlivoResponse();
    h.addHangup();
    assert.equal(k.hangupMarkup().body, h.toXML());
  });

  it('escapes quotes in attributes', () => {
    const body = k.transferMarkup({ ...TRANSFER, statusUrl: 'https://x.example/a?b="c"&d=1' }).body;
    assert.match(body, /action="https:\/\/x\.example\/a\?b=&quot;c&quot;&amp;d=1"/);
  });
});

describe('Plivo answer and callbacks', () => {
  const k = createPlivoKit({ authId: AUTH_ID, authToken: TOKEN, apiBaseUrl: 'https://api.plivo.com' });
  it('reads the answer request, with Machine', () => {
    const base = { CallUUID: CALL_UUID, RequestUUID: REQUEST_UUID, From: '+918047491899', To: '+919876543210', Direction: 'outbound', CallStatus: 'in-progress', Event: 'StartApp' };
    assert.deepEqual(k.parseAnswer(base), { callSid: CALL_UUID, from: '+918047491899', to: '+919876543210', direction: 'outbound' });
    assert.equal(k.parseAnswer({ ...base, Direction: 'inbound' }).direction, 'inbound');
    assert.equal(k.parseAnswer({ ...base, Machine: 'true' }).answeredBy, 'machine');
    assert.equal(k.parseAnswer({ ...base, Machine: 'false' }).answeredBy, 'human');
    assert.throws(() => k.parseAnswer({ From: '+1' }), ProtocolError);
  });

  it('maps every call status word', () => {
    const cases: [string, string, string | undefined][] = [
      ['ringing', 'ringing', undefined],
      ['in-progress', 'answered', undefined],
      ['completed', 'ended', 'completed'],
      ['busy', 'ended', 'busy'],
      ['failed', 'ended', 'failed'],
      ['timeout', 'ended', 'no_answer'],
      ['no-answer', 'ended', 'no_answer'],
      ['cancel', 'ended', 'canceled'],
    ];
    for (const [word, phase, end] of cases) {
      const status = k.parseStatus({ CallUUID: CALL_UUID, CallStatus: word, Event: phase === 'ended' ? 'Hangup' : 'Ring' });
      assert.equal(status.callSid, CALL_UUID);
      assert.equal(status.providerStatus, word);
      assert.equal(status.phase, phase, word);
      assert.equal(status.end, end, word);
    }
    assert.equal(k.parseStatus({ CallUUID: CALL_UUID, Event: 'Ring' }).phase, 'ringing');
    assert.equal(k.parseStatus({ CallUUID: CALL_UUID, Event: 'StartStream', StreamID: 's1' }).phase, 'answered');
    assert.throws(() => k.parseStatus({ CallUUID: CALL_UUID, CallStatus: 'exploded' }), ProtocolError);
    assert.throws(() => k.parseStatus({ CallUUID: CALL_UUID }), ProtocolError);
    assert.throws(() => k.parseStatus({ CallStatus: 'completed' }), ProtocolError);
  });

  it('reads the hangup callback: duration, cost, machine, cause; a request_uuid when there is no CallUUID', () => {
    const done = k.parseStatus({
      CallUUID: CALL_UUID,
      RequestUUID: REQUEST_UUID,
      CallStatus: 'completed',
      Event: 'Hangup',
      HangupCause: 'NORMAL_CLEARING',
      Duration: '42',
      BillDuration: '60',
      TotalCost: '0.00850',
      Machine: 'true',
    });
    assert.equal(done.durationSeconds, 42);
    assert.equal(done.cost, 0.0085);
    assert.equal(done.answeredBy, 'machine');
    assert.equal(done.reason, undefined);
    const busy = k.parseStatus({ RequestUUID: REQUEST_UUID, CallStatus: 'busy', Event: 'Hangup', HangupCause: 'USER_BUSY', Duration: '0' });
    assert.equal(busy.callSid, REQUEST_UUID);
    assert.equal(busy.end, 'busy');
    assert.equal(busy.reason, 'USER_BUSY');
  });
});

describe('Plivo Audio Streams serializer', () => {
  const STREAM = '87654321-4321-4321-4321-cba987654321';
  const start = JSON.stringify({
    event: 'start',
    sequenceNumber: 1,
    start: {
      callId: CALL_UUID,
      streamId: STREAM,
      accountId: AUTH_ID,
      tracks: ['inbound'],
      mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000 },
    },
    extra_headers: 'userId=12345;sessionId=abc-xyz',
  });

  it('decodes every inbound frame type', () => {
    const s = kit().serializer();
    assert.deepEqual(s.decode(start), { type: 'start', streamId: STREAM, callSid: CALL_UUID, customParameters: { userId: '12345', sessionId: 'abc-xyz' } });
    const bytes = Buffer.from([0xff, 0x7f, 0x00, 0x80, 0x9c, 0x1c]);
    const media = s.decode(
      JSON.stringify({ event: 'media', sequenceNumber: 42, streamId: STREAM, media: { track: 'inbound', timestamp: '1705312200000', chunk: 41, payload: bytes.toString('base64') }, extra_headers: 'userId=12345' }),
    );
    assert.equal(media.type, 'audio');
    assert.deepEqual((media as Extract<MediaEvent, { type: 'audio' }>).pcm, decodeMulaw(bytes));
    assert.deepEqual(s.decode(JSON.stringify({ event: 'dtmf', sequenceNumber: 50, streamId: STREAM, dtmf: { track: 'inbound', digit: '0', timestamp: '1705312205000' } })), { type: 'dtmf', digit: '0' });
    assert.deepEqual(s.decode(JSON.stringify({ event: 'playedStream', sequenceNumber: 51, streamId: STREAM, name: 'turn-3' })), { type: 'mark', name: 'turn-3' });
    assert.deepEqual(s.decode(JSON.stringify({ event: 'clearedAudio', sequenceNumber: 52, streamId: STREAM })), { type: 'other' });
    assert.deepEqual(s.decode(JSON.stringify({ event: 'stop', sequenceNumber: 53, streamId: STREAM })), { type: 'stop' });
  });

  it('plays PCM as playAudio mu-law frames that survive a round trip', () => {
    const s = kit().serializer();
    s.decode(start);
    const pcm = new Int16Array(500);
    for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round(-9000 * Math.sin((2 * Math.PI * 300 * i) / 8000));
    const frames = s.audio(pcm);
    assert.equal(frames.length, 4);
    const back: number[] = [];
    const echo = kit().serializer();
    for (const [i, frame] of frames.entries()) {
      const parsed = JSON.parse(frame) as { event: string; media: { contentType: string; sampleRate: number; payload: string } };
      assert.deepEqual(Object.keys(parsed), ['event', 'media']);
      assert.equal(parsed.event, 'playAudio');
      assert.equal(parsed.media.contentType, 'audio/x-mulaw');
      assert.equal(parsed.media.sampleRate, 8000);
      assert.equal(Buffer.from(parsed.media.payload, 'base64').length, i < 3 ? 160 : 20);
      const event = echo.decode(JSON.stringify({ event: 'media', streamId: STREAM, media: { track: 'inbound', payload: parsed.media.payload } }));
      back.push(...(event as Extract<MediaEvent, { type: 'audio' }>).pcm);
    }
    assert.equal(back.length, pcm.length);
    for (let i = 0; i < pcm.length; i++) assert.ok(Math.abs(back[i]! - pcm[i]!) <= Math.max(8, Math.abs(pcm[i]!) * 0.07), `sample ${i}: ${pcm[i]} -> ${back[i]}`);
  });

  it('writes checkpoint and clearAudio frames for the stream', () => {
    const s = kit().serializer();
    s.decode(start);
    assert.deepEqual(JSON.parse(s.mark('turn-3')), { event: 'checkpoint', streamId: STREAM, name: 'turn-3' });
    assert.deepEqual(JSON.parse(s.clear()), { event: 'clearAudio', streamId: STREAM });
  });

  it('rejects frames that are not the protocol', () => {
    const s = kit().serializer();
    const bad = [
      'not json',
      '[]',
      '{}',
      '{"event":"connected"}',
      '{"event":"start"}',
      '{"event":"start","start":{"streamId":"s1"}}',
      '{"event":"start","start":{"streamId":"s1","callId":"c1","mediaFormat":{"encoding":"audio/x-l16","sampleRate":16000}}}',
      '{"event":"media","media":{}}',
      '{"event":"media","media":{"payload":"!!"}}',
      '{"event":"dtmf","dtmf":{}}',
      '{"event":"playedStream"}',
    ];
    for (const frame of bad) assert.throws(() => s.decode(frame), ProtocolError, frame);
  });
});

import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import twilio from 'twilio';
import { decodeMulaw } from '../../src/lib/audio.js';
import { ProtocolError, ProviderError, type CallbackRequest, type MediaEvent, type PlaceCallRequest } from '../../src/telephony/provider.js';
import { createTwilioKit, twilioSignature } from '../../src/telephony/twilio/index.js';

const SID = 'AC0123456789abcdef0123456789abcdef';
const TOKEN = 'twilio-auth-token-123';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}
type Reply = { status: number; body?: unknown };

/** A local stand-in for api.twilio.com: records every request and answers with `next`. */
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
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(reply.body === undefined ? '' : JSON.stringify(reply.body));
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
const kit = () => createTwilioKit({ accountSid: SID, authToken: TOKEN, apiBaseUrl: api.url });

const CALL: PlaceCallRequest = {
  to: '+14155550100',
  from: '+14155550199',
  answerUrl: 'https://dialer.example/api/v1/provider_a/answer?s=tok123',
  statusUrl: 'https://dialer.example/api/v1/provider_a/callback/status?s=tok123',
  token: 'tok123',
  machineDetection: 'answer',
  ringTimeoutSeconds: 30,
  maxDurationSeconds: 900,
};

const TRANSFER = {
  to: '+14155550142',
  from: '+14155550199',
  statusUrl: 'https://dialer.example/api/v1/provider_a/callback/transfer/status?s=tok123&x=1',
  eventsUrl: 'https://dialer.example/api/v1/provider_a/callback/transfer/events?s=tok123&x=1',
  markupUrl: 'https://dialer.example/api/v1/provider_a/answer?s=tok123&transfer=1',
};

async function rejects(promise: Promise<unknown>, check: (err: ProviderError) => void): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof ProviderError, `expected ProviderError, got ${String(err)}`);
    check(err);
    return true;
  });
}

describe('Twilio REST', () => {
  it('creates a call with every documented field, basic auth and a form body', async () => {
    api.reset({ status: 201, body: { sid: 'CA11111111111111111111111111111111', status: 'queued' } });
    const { callSid } = await kit().placeCall(CALL);
    assert.equal(callSid, 'CA11111111111111111111111111111111');
    assert.equal(api.seen.length, 1);
    const req = api.seen[0]!;
    assert.equal(req.method, 'POST');
    assert.equal(req.url, `/2010-04-01/Accounts/${SID}/Calls.json`);
    assert.equal(req.headers.authorization, `Basic ${Buffer.from(`${SID}:${TOKEN}`).toString('base64')}`);
    assert.equal(req.headers['content-type'], 'application/x-www-form-urlencoded');
    const form = new URLSearchParams(req.body);
    assert.equal(form.get('To'), CALL.to);
    assert.equal(form.get('From'), CALL.from);
    assert.equal(form.get('Url'), CALL.answerUrl);
    assert.equal(form.get('Method'), 'POST');
    assert.equal(form.get('StatusCallback'), CALL.statusUrl);
    assert.equal(form.get('StatusCallbackMethod'), 'POST');
    assert.deepEqual(form.getAll('StatusCallbackEvent'), ['initiated', 'ringing', 'answered', 'completed']);
    assert.equal(form.get('Timeout'), '30');
    assert.equal(form.get('TimeLimit'), '900');
    assert.equal(form.get('MachineDetection'), 'Enable');
    assert.deepEqual(
      [...new Set(form.keys())].sort(),
      ['From', 'MachineDetection', 'Method', 'StatusCallback', 'StatusCallbackEvent', 'StatusCallbackMethod', 'TimeLimit', 'Timeout', 'To', 'Url'],
    );
  });

  it('asks for no machine detection when not wanted', async () => {
    api.reset({ status: 201, body: { sid: 'CA2' } });
    await kit().placeCall({ ...CALL, machineDetection: false });
    assert.equal(new URLSearchParams(api.seen[0]!.body).has('MachineDetection'), false);
  });

  it('turns error answers into ProviderError with Twilio\'s message, retryable only for 429 and 5xx', async () => {
    api.reset({ status: 400, body: { code: 21211, message: "The 'To' number +1415 is not a valid phone number.", more_info: 'https://www.twilio.com/docs/errors/21211', status: 400 } });
    await rejects(kit().placeCall(CALL), (err) => {
      assert.equal(err.status, 400);
      assert.equal(err.retryable, false);
      assert.match(err.message, /not a valid phone number/);
      assert.match(err.message, /21211/);
    });
    for (const [status, retryable] of [[401, false], [404, false], [429, true], [500, true], [503, true]] as const) {
      api.reset({ status, body: { code: 20003, message: `failure ${status}`, status } });
      await rejects(kit().placeCall(CALL), (err) => {
        assert.equal(err.status, status);
        assert.equal(err.retryable, retryable, `HTTP ${status}`);
      });
      // The call may have been created: Dialer does not ask for it twice.
      assert.equal(api.seen.length, 1, `HTTP ${status}`);
    }
    api.reset({ status: 201, body: { status: 'queued' } });
    await rejects(kit().placeCall(CALL), (err) => assert.equal(err.retryable, false));
  });

  it('reports an unreachable API as a retryable ProviderError with the cause', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const offline = createTwilioKit({ accountSid: SID, authToken: TOKEN, apiBaseUrl: `http://127.0.0.1:${port}` });
    await rejects(offline.placeCall(CALL), (err) => {
      assert.equal(err.status, undefined);
      assert.equal(err.retryable, true);
      assert.ok(err.cause);
    });
  });

  it('hangs up with Status=completed; a missing or already-ended call is success', async () => {
    api.reset({ status: 200, body: { sid: 'CA3', status: 'completed' } });
    await kit().hangup('CA3');
    assert.equal(api.seen[0]!.method, 'POST');
    assert.equal(api.seen[0]!.url, `/2010-04-01/Accounts/${SID}/Calls/CA3.json`);
    assert.equal(api.seen[0]!.headers['content-type'], 'application/x-www-form-urlencoded');
    assert.deepEqual([...new URLSearchParams(api.seen[0]!.body)], [['Status', 'completed']]);
    api.reset({ status: 404, body: { code: 20404, message: 'The requested resource was not found', status: 404 } });
    await kit().hangup('CA404');
    api.reset({ status: 400, body: { code: 21220, message: 'Call is not in-progress. Cannot redirect.', status: 400 } });
    await kit().hangup('CA5');
    // Completing a call twice is harmless: a 5xx is tried again, three times in all.
    const serverError = { status: 500, body: { code: 20500, message: 'Internal Server Error', status: 500 } };
    api.reset(serverError, serverError, serverError);
    await rejects(kit().hangup('CA6'), (err) => assert.equal(err.retryable, true));
    assert.equal(api.seen.length, 3);
    api.reset(serverError, { status: 200, body: { sid: 'CA6', status: 'completed' } });
    await kit().hangup('CA6');
    assert.equal(api.seen.length, 2);
  });

  it('transfers by updating the call with inline TwiML that dials the human', async () => {
    api.reset({ status: 200, body: { sid: 'CA7' } });
    await kit().transfer('CA7', TRANSFER);
    const req = api.seen[0]!;
    assert.equal(req.method, 'POST');
    assert.equal(req.url, `/2010-04-01/Accounts/${SID}/Calls/CA7.json`);
    const form = new URLSearchParams(req.body);
    assert.deepEqual([...form.keys()], ['Twiml']);
    const expected = new twilio.twiml.VoiceResponse();
    expected
      .dial({ callerId: TRANSFER.from, action: TRANSFER.statusUrl })
      .number({ statusCallback: TRANSFER.eventsUrl, statusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'] }, TRANSFER.to);
    assert.equal(form.get('Twiml'), expected.toString());
    api.reset({ status: 400, body: { code: 21220, message: 'Call is not in-progress. Cannot redirect.', status: 400 } });
    await rejects(kit().transfer('CA8', TRANSFER), (err) => assert.match(err.message, /not in-progress/));
  });
});

function formRequest(url: string, params: Record<string, string>, signature: string | undefined): CallbackRequest {
  const query = Object.fromEntries(new URL(url).searchParams);
  return {
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(signature === undefined ? {} : { 'x-twilio-signature': signature }) },
    rawBody: new URLSearchParams(params).toString(),
    params: { ...query, ...params },
  };
}

describe('Twilio signatures', () => {
  const url = 'https://dialer.example/api/v1/provider_a/callback/status?s=tok123';
  const params = { CallSid: 'CA1', CallStatus: 'completed', From: '+14155550100', To: '+14155550199', Caller: 'Jane & "Co" é', CallDuration: '42' };

  it('computes what the official library computes and accepts', () => {
    const mine = twilioSignature(TOKEN, url, params);
    assert.equal(mine, twilio.getExpectedTwilioSignature(TOKEN, url, params));
    assert.equal(twilio.validateRequest(TOKEN, mine, url, params), true);
    assert.equal(twilioSignature(TOKEN, url, {}), twilio.getExpectedTwilioSignature(TOKEN, url, {}));
  });

  it('verifies a callback signed by the official library and rejects tampering', () => {
    const k = kit();
    const signature = twilio.getExpectedTwilioSignature(TOKEN, url, params);
    assert.equal(k.verify(formRequest(url, params, signature)), true);
    assert.equal(k.verify(formRequest(url, { ...params, CallStatus: 'busy' }, signature)), false, 'tampered param');
    assert.equal(k.verify(formRequest(url, { ...params, Extra: '1' }, signature)), false, 'added param');
    assert.equal(k.verify(formRequest(url.replace('tok123', 'tok124'), params, signature)), false, 'wrong URL');
    assert.equal(k.verify(formRequest(url, params, undefined)), false, 'missing header');
    assert.equal(k.verify(formRequest(url, params, '')), false, 'empty header');
    const other = createTwilioKit({ accountSid: SID, authToken: 'another-token', apiBaseUrl: api.url });
    assert.equal(other.verify(formRequest(url, params, signature)), false, 'wrong token');
  });

  it('accepts a signature over the URL with or without the default port', () => {
    const signedWithPort = twilio.getExpectedTwilioSignature(TOKEN, 'https://dialer.example:443/api/v1/provider_a/answer?s=t', params);
    assert.equal(kit().verify(formRequest('https://dialer.example/api/v1/provider_a/answer?s=t', params, signedWithPort)), true);
    const signedWithout = twilio.getExpectedTwilioSignature(TOKEN, 'https://dialer.example/api/v1/provider_a/answer?s=t', params);
    assert.equal(kit().verify(formRequest('https://dialer.example:443/api/v1/provider_a/answer?s=t', params, signedWithout)), true);
  });

  it('signs GET requests by URL alone', () => {
    const getUrl = 'https://dialer.example/api/v1/provider_a/answer?s=tok&CallSid=CA1&From=%2B1415';
    const signature = twilio.getExpectedTwilioSignature(TOKEN, getUrl, {});
    const request: CallbackRequest = { method: 'GET', url: getUrl, headers: { 'x-twilio-signature': signature }, rawBody: '', params: { s: 'tok', CallSid: 'CA1', From: '+1415' } };
    assert.equal(kit().verify(request), true);
  });

  it('checks JSON bodies through bodySHA256 and the URL-only signature', () => {
    const body = JSON.stringify({ CallSid: 'CA1', CallStatus: 'completed' });
    const jsonUrl = `https://dialer.example/api/v1/provider_a/callback/status?s=tok&bodySHA256=${twilio.getExpectedBodyHash(body)}`;
    const signature = twilio.getExpectedTwilioSignature(TOKEN, jsonUrl, {});
    assert.equal(twilio.validateRequestWithBody(TOKEN, signature, jsonUrl, body), true);
    const request = (raw: string): CallbackRequest => ({ method: 'POST', url: jsonUrl, headers: { 'content-type': 'application/json', 'x-twilio-signature': signature }, rawBody: raw, params: {} });
    assert.equal(kit().verify(request(body)), true);
    assert.equal(kit().verify(request(body.replace('completed', 'busy'))), false);
  });
});

describe('TwiML', () => {
  const k = createTwilioKit({ accountSid: SID, authToken: TOKEN, apiBaseUrl: 'https://api.twilio.com' });
  it('streams the call to the media WebSocket as <Connect><Stream>', () => {
    const expected = new twilio.twiml.VoiceResponse();
    expected.connect().stream({ url: 'wss://dialer.example/api/v1/media/tok123' });
    const markup = k.streamMarkup('wss://dialer.example/api/v1/media/tok123', CALL.statusUrl);
    assert.equal(markup.contentType, 'text/xml');
    assert.equal(markup.body, expected.toString());
    assert.equal(markup.body, '<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="wss://dialer.example/api/v1/media/tok123"/></Connect></Response>');
  });

  it('blocks with <Say> then <Hangup/> or a <Dial> redirect, escaping text', () => {
    const message = 'Sorry & goodbye <now>';
    const a = new twilio.twiml.VoiceResponse();
    a.say(message);
    a.hangup();
    assert.equal(k.blockMarkup({ message }).body, a.toString());
    const b = new twilio.twiml.VoiceResponse();
    b.say(message);
    b.dial({ callerId: '+14155550199' }, '+14155550142');
    assert.equal(k.blockMarkup({ message, redirectTo: '+14155550142', callerId: '+14155550199' }).body, b.toString());
    const c = new twilio.twiml.VoiceResponse();
    c.hangup();
    assert.equal(k.blockMarkup({}).body, c.toString());
  });

  it('dials the human of a transfer and hangs up', () => {
    const t = new twilio.twiml.VoiceResponse();
    t.dial({ callerId: TRANSFER.from, action: TRANSFER.statusUrl }).number({ statusCallback: TRANSFER.eventsUrl, statusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'] }, TRANSFER.to);
    assert.equal(k.transferMarkup(TRANSFER).body, t.toString());
    const h = new twilio.twiml.VoiceResponse();
    h.hangup();
    assert.equal(k.hangupMarkup().body, h.toString());
    assert.equal(k.hangupMarkup().contentType, 'text/xml');
  });

  it('escapes quotes and ampersands in attributes', () => {
    const body = k.transferMarkup({ ...TRANSFER, statusUrl: 'https://x.example/a?b="c"&d=<e>' }).body;
    assert.match(body, /action="https:\/\/x\.example\/a\?b=&quot;c&quot;&amp;d=&lt;e>"/);
  });
});

describe('Twilio answer and status callbacks', () => {
  const k = createTwilioKit({ accountSid: SID, authToken: TOKEN, apiBaseUrl: 'https://api.twilio.com' });
  it('reads the answer request, with AnsweredBy', () => {
    const base = { CallSid: 'CA1', From: '+14155550199', To: '+14155550100', Direction: 'outbound-api', CallStatus: 'in-progress' };
    assert.deepEqual(k.parseAnswer(base), { callSid: 'CA1', from: '+14155550199', to: '+14155550100', direction: 'outbound' });
    assert.equal(k.parseAnswer({ ...base, Direction: 'inbound' }).direction, 'inbound');
    assert.equal(k.parseAnswer({ ...base, Direction: 'outbound-dial' }).direction, 'outbound');
    const cases: Record<string, string> = {
      human: 'human',
      machine_start: 'machine',
      machine_end_beep: 'machine',
      machine_end_silence: 'machine',
      machine_end_other: 'machine',
      fax: 'machine',
      unknown: 'unknown',
    };
    for (const [word, expected] of Object.entries(cases)) assert.equal(k.parseAnswer({ ...base, AnsweredBy: word }).answeredBy, expected, word);
    assert.throws(() => k.parseAnswer({ From: '+1' }), ProtocolError);
  });

  it('maps every call status word', () => {
    const cases: [string, string, string | undefined][] = [
      ['queued', 'queued', undefined],
      ['initiated', 'queued', undefined],
      ['ringing', 'ringing', undefined],
      ['in-progress', 'answered', undefined],
      ['completed', 'ended', 'completed'],
      ['busy', 'ended', 'busy'],
      ['no-answer', 'ended', 'no_answer'],
      ['failed', 'ended', 'failed'],
      ['canceled', 'ended', 'canceled'],
    ];
    for (const [word, phase, end] of cases) {
      const status = k.parseStatus({ CallSid: 'CA1', CallStatus: word });
      assert.equal(status.callSid, 'CA1');
      assert.equal(status.providerStatus, word);
      assert.equal(status.phase, phase, word);
      assert.equal(status.end, end, word);
    }
    assert.throws(() => k.parseStatus({ CallSid: 'CA1', CallStatus: 'exploded' }), ProtocolError);
    assert.throws(() => k.parseStatus({ CallSid: 'CA1' }), ProtocolError);
    assert.throws(() => k.parseStatus({ CallStatus: 'completed' }), ProtocolError);
  });

  it('reads duration, machine detection and failure reasons', () => {
    const done = k.parseStatus({ CallSid: 'CA1', CallStatus: 'completed', CallDuration: '42', Duration: '1', AnsweredBy: 'machine_end_beep', SipResponseCode: '200' });
    assert.equal(done.durationSeconds, 42);
    assert.equal(done.answeredBy, 'machine');
    assert.equal(done.reason, undefined);
    const failed = k.parseStatus({ CallSid: 'CA1', CallStatus: 'failed', ErrorCode: '13224', SipResponseCode: '404' });
    assert.equal(failed.end, 'failed');
    assert.match(failed.reason ?? '', /13224/);
    assert.match(failed.reason ?? '', /SIP 404/);
  });
});

describe('Twilio Media Streams serializer', () => {
  const STREAM = 'MZ18ad3ab5a668481ce02b83e7395059f0';
  const start = JSON.stringify({
    event: 'start',
    sequenceNumber: '1',
    start: {
      accountSid: SID,
      streamSid: STREAM,
      callSid: 'CA11111111111111111111111111111111',
      tracks: ['inbound'],
      customParameters: { FirstName: 'Jane' },
      mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
    },
    streamSid: STREAM,
  });

  it('decodes every inbound frame type', () => {
    const s = kit().serializer();
    assert.deepEqual(s.decode(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' })), { type: 'other' });
    assert.deepEqual(s.decode(start), { type: 'start', streamId: STREAM, callSid: 'CA11111111111111111111111111111111', customParameters: { FirstName: 'Jane' } });
    const bytes = Buffer.from([0xff, 0x7f, 0x00, 0x80, 0x9c, 0x1c]);
    const media = s.decode(JSON.stringify({ event: 'media', sequenceNumber: '3', media: { track: 'inbound', chunk: '1', timestamp: '5', payload: bytes.toString('base64') }, streamSid: STREAM }));
    assert.equal(media.type, 'audio');
    assert.deepEqual((media as Extract<MediaEvent, { type: 'audio' }>).pcm, decodeMulaw(bytes));
    assert.equal((media as Extract<MediaEvent, { type: 'audio' }>).timestampMs, 5, "Twilio's media.timestamp, in ms");
    assert.deepEqual(s.decode(JSON.stringify({ event: 'mark', sequenceNumber: '4', streamSid: STREAM, mark: { name: 'turn-3' } })), { type: 'mark', name: 'turn-3' });
    assert.deepEqual(s.decode(JSON.stringify({ event: 'dtmf', streamSid: STREAM, sequenceNumber: '5', dtmf: { track: 'inbound_track', digit: '0' } })), { type: 'dtmf', digit: '0' });
    assert.deepEqual(s.decode(JSON.stringify({ event: 'stop', sequenceNumber: '6', streamSid: STREAM, stop: { accountSid: SID, callSid: 'CA1' } })), { type: 'stop' });
  });

  it('plays PCM as 20 ms mu-law frames that survive a round trip', () => {
    const s = kit().serializer();
    s.decode(start);
    const pcm = new Int16Array(500);
    for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round(12000 * Math.sin((2 * Math.PI * 440 * i) / 8000));
    const frames = s.audio(pcm);
    assert.equal(frames.length, 4);
    const back: number[] = [];
    const echo = kit().serializer();
    for (const [i, frame] of frames.entries()) {
      const parsed = JSON.parse(frame) as { event: string; streamSid: string; media: { payload: string } };
      assert.deepEqual(Object.keys(parsed), ['event', 'streamSid', 'media']);
      assert.equal(parsed.event, 'media');
      assert.equal(parsed.streamSid, STREAM);
      assert.deepEqual(Object.keys(parsed.media), ['payload']);
      assert.equal(Buffer.from(parsed.media.payload, 'base64').length, i < 3 ? 160 : 20);
      const event = echo.decode(JSON.stringify({ event: 'media', streamSid: STREAM, media: { track: 'inbound', payload: parsed.media.payload } }));
      assert.equal(event.type, 'audio');
      back.push(...(event as Extract<MediaEvent, { type: 'audio' }>).pcm);
    }
    assert.equal(back.length, pcm.length);
    for (let i = 0; i < pcm.length; i++) assert.ok(Math.abs(back[i]! - pcm[i]!) <= Math.max(8, Math.abs(pcm[i]!) * 0.07), `sample ${i}: ${pcm[i]} -> ${back[i]}`);
    assert.deepEqual(s.audio(new Int16Array(0)), []);
  });

  it('writes mark and clear frames for the stream', () => {
    const s = kit().serializer();
    s.decode(start);
    assert.deepEqual(JSON.parse(s.mark('turn-3')), { event: 'mark', streamSid: STREAM, mark: { name: 'turn-3' } });
    assert.deepEqual(JSON.parse(s.clear()), { event: 'clear', streamSid: STREAM });
  });

  it('rejects frames that are not the protocol', () => {
    const s = kit().serializer();
    const bad = [
      'not json',
      '[]',
      'null',
      '{}',
      '{"event":42}',
      '{"event":"hello"}',
      '{"event":"start"}',
      '{"event":"start","start":{"streamSid":"MZ1"}}',
      '{"event":"start","start":{"streamSid":"MZ1","callSid":"CA1","mediaFormat":{"encoding":"audio/x-l16","sampleRate":8000}}}',
      '{"event":"media"}',
      '{"event":"media","media":{}}',
      '{"event":"media","media":{"payload":"@@@"}}',
      '{"event":"mark","mark":{}}',
      '{"event":"dtmf"}',
    ];
    for (const frame of bad) assert.throws(() => s.decode(frame), ProtocolError, frame);
  });
});

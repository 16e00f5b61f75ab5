import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createExotelKit, type ExotelOptions } from '../../src/telephony/exotel/index.js';
import { ProtocolError, ProviderError, type PlaceCallRequest } from '../../src/telephony/provider.js';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

let server: http.Server;
let baseUrl = '';
const seen: Seen[] = [];
let reply: { status: number; body: string } = { status: 200, body: '' };

before(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(reply.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(() => new Promise<void>((resolve) => server.close(() => resolve())));

const options = (): ExotelOptions => ({
  accountSid: 'acme1',
  apiKey: 'key123',
  apiToken: 'tok456',
  apiBaseUrl: `${baseUrl}/`,
  flowUrl: 'http://my.exotel.com/acme1/exoml/start_voice/926',
});

const call: PlaceCallRequest = {
  to: '+919876543210',
  from: '+918047491899',
  answerUrl: 'https://dialer.example/api/v1/provider_b/answer?s=tok',
  statusUrl: 'https://dialer.example/api/v1/provider_b/callback/status?s=sesstoken',
  token: 'sesstoken',
  machineDetection: 'answer',
  ringTimeoutSeconds: 30,
  maxDurationSeconds: 99_999,
};

describe('Exotel REST', () => {
  it('places a call with Calls/connect.json, basic auth and every form field', async () => {
    seen.length = 0;
    reply = { status: 200, body: JSON.stringify({ Call: { Sid: 'b6cfaf0b8e2f4e1a9f3c0c0c5f0a1234', Status: 'in-progress', From: '09876543210' } }) };
    const { callSid } = await createExotelKit(options()).placeCall(call);
    assert.equal(callSid, 'b6cfaf0b8e2f4e1a9f3c0c0c5f0a1234');
    assert.equal(seen.length, 1);
    const req = seen[0]!;
    assert.equal(req.method, 'POST');
    assert.equal(req.url, '/v1/Accounts/acme1/Calls/connect.json');
    assert.equal(req.headers.authorization, `Basic ${Buffer.from('key123:tok456').toString('base64')}`);
    assert.match(String(req.headers['content-type']), /^application\/x-www-form-urlencoded/);
    const form = new URLSearchParams(req.body);
    assert.deepEqual(Object.fromEntries(form), {
      From: '+919876543210',
      CallerId: '+918047491899',
      Url: 'http://my.exotel.com/acme1/exoml/start_voice/926',
      CallType: 'trans',
      TimeLimit: '14400',
      TimeOut: '30',
      CustomField: 'sesstoken',
      StatusCallback: call.statusUrl,
      'StatusCallbackEvents[0]': 'terminal',
      'StatusCallbackEvents[1]': 'answered',
      StatusCallbackContentType: 'application/json',
    });
  });

  it('turns error statuses into ProviderError, retryable for 429 and 5xx', async () => {
    const kit = createExotelKit(options());
    for (const [status, retryable] of [[400, false], [401, false], [403, false], [429, true], [500, true], [503, true]] as const) {
      seen.length = 0;
      reply = { status, body: JSON.stringify({ RestException: { Status: status, Message: `nope ${status}` } }) };
      await assert.rejects(kit.placeCall(call), (err: unknown) => {
        assert.ok(err instanceof ProviderError);
        assert.equal(err.status, status);
        assert.equal(err.retryable, retryable);
        assert.match(err.message, new RegExp(`nope ${status}`));
        return true;
      });
      // The call may have been placed: Dialer does not ask for it twice.
      assert.equal(seen.length, 1, `HTTP ${status}`);
    }
    reply = { status: 200, body: '{"Call":{}}' };
    await assert.rejects(kit.placeCall(call), (err: unknown) => err instanceof ProviderError && !err.retryable);
  });

  it('reports an unreachable API as a retryable ProviderError', async () => {
    const kit = createExotelKit({ ...options(), apiBaseUrl: 'http://127.0.0.1:1' });
    await assert.rejects(kit.placeCall(call), (err: unknown) => err instanceof ProviderError && err.retryable && err.status === undefined);
  });

  it('hangup and transfer resolve without an API call (Exotel has none for v1 calls)', async () => {
    seen.length = 0;
    const kit = createExotelKit(options());
    await kit.hangup('sid');
    await kit.transfer('sid', { to: '+911', from: '+912', statusUrl: 'x', eventsUrl: 'y', markupUrl: 'z' });
    assert.equal(seen.length, 0);
  });
});

describe('Exotel callbacks and markup', () => {
  const kit = createExotelKit({ accountSid: 'a', apiKey: 'k', apiToken: 't', apiBaseUrl: 'https://api.exotel.com', flowUrl: 'f' });

  it('parses every status word', () => {
    const cases: Array<[string, string, string | undefined]> = [
      ['queued', 'queued', undefined],
      ['ringing', 'ringing', undefined],
      ['in-progress', 'answered', undefined],
      ['answered', 'answered', undefined],
      ['completed', 'ended', 'completed'],
      ['busy', 'ended', 'busy'],
      ['no-answer', 'ended', 'no_answer'],
      ['failed', 'ended', 'failed'],
      ['canceled', 'ended', 'canceled'],
    ];
    for (const [word, phase, end] of cases) {
      const s = kit.parseStatus({ CallSid: 'c1', Status: word });
      assert.equal(s.phase, phase, word);
      assert.equal(s.end, end, word);
      assert.equal(s.providerStatus, word);
    }
  });

  it('reads a terminal callback as Exotel posts it (JSON flattened by the route)', () => {
    const s = kit.parseStatus({
      CallSid: 'b6cf',
      EventType: 'terminal',
      Status: 'completed',
      DateUpdated: '2026-11-23 10:00:42',
      ConversationDuration: '37',
      Legs: JSON.stringify([{ OnCallDuration: 40, Status: 'completed' }]),
      CustomField: 'sesstoken',
      RecordingUrl: '',
      s: 'sesstoken',
    });
    assert.deepEqual(s, { callSid: 'b6cf', providerStatus: 'completed', phase: 'ended', end: 'completed', durationSeconds: 37 });
    assert.equal(kit.parseStatus({ CallSid: 'x', Status: 'completed', Legs: '[{"OnCallDuration":12}]' }).durationSeconds, 12);
    assert.equal(kit.parseStatus({ CallSid: 'x', Status: 'completed', Duration: '8' }).durationSeconds, 8);
    assert.equal(kit.parseStatus({ CallSid: 'x', Status: 'busy' }).reason, 'busy');
  });

  it('rejects unknown words and missing CallSid', () => {
    assert.throws(() => kit.parseStatus({ CallSid: 'c', Status: 'exploded' }), ProtocolError);
    assert.throws(() => kit.parseStatus({ CallSid: 'c' }), ProtocolError);
    assert.throws(() => kit.parseStatus({ Status: 'completed' }), ProtocolError);
  });

  it('parses the Voicebot applet request in both directions', () => {
    const out = kit.parseAnswer({ CallSid: 'c', CallFrom: '09876543210', CallTo: '08047491899', Direction: 'outbound-api', CustomField: 'tok' });
    assert.deepEqual(out, { callSid: 'c', from: '08047491899', to: '09876543210', direction: 'outbound' });
    const inb = kit.parseAnswer({ CallSid: 'c', From: '+91987', To: '+91804', Direction: 'incoming' });
    assert.deepEqual(inb, { callSid: 'c', from: '+91987', to: '+91804', direction: 'inbound' });
    assert.throws(() => kit.parseAnswer({ CallFrom: '1', CallTo: '2' }), ProtocolError);
    assert.throws(() => kit.parseAnswer({ CallSid: 'c', CallTo: '2' }), ProtocolError);
  });

  it('verifies every callback (Exotel does not sign; the session token guards)', () => {
    assert.equal(kit.verify({ method: 'POST', url: 'https://x/provider_b/callback/status', headers: {}, rawBody: '', params: {} }), true);
  });

  it('answers the applets with JSON', () => {
    const stream = kit.streamMarkup('wss://dialer.example/api/v1/media/tok', 'https://x');
    assert.equal(stream.contentType, 'application/json');
    assert.deepEqual(JSON.parse(stream.body), { url: 'wss://dialer.example/api/v1/media/tok' });
    const t = JSON.parse(kit.transferMarkup({ to: '+911234', from: '+918047', statusUrl: 's', eventsUrl: 'e', markupUrl: 'm' }).body);
    assert.deepEqual(t.destination, { numbers: ['+911234'] });
    assert.equal(t.outgoing_phone_number, '+918047');
    assert.equal(t.fetch_after_attempt, false);
    const b = JSON.parse(kit.blockMarkup({ message: 'Sorry', redirectTo: '+915', callerId: '+918' }).body);
    assert.deepEqual(b.destination, { numbers: ['+915'] });
    assert.deepEqual(b.start_call_playback, { playback_to: 'callee', type: 'text', value: 'Sorry' });
    for (const m of [kit.blockMarkup({ message: 'no' }), kit.hangupMarkup()]) {
      const body = JSON.parse(m.body);
      assert.equal(body.url, undefined, 'no stream URL: the Voicebot applet ends');
      assert.deepEqual(body.destination.numbers, [], 'no number: the Connect applet ends');
    }
  });
});

describe('Exotel media serializer', () => {
  const kit = createExotelKit({ accountSid: 'a', apiKey: 'k', apiToken: 't', apiBaseUrl: 'https://api.exotel.com', flowUrl: 'f' });
  const start = (rate = '8000') =>
    JSON.stringify({
      event: 'start',
      sequence_number: '1',
      stream_sid: 'MZ18ad3ab5a668481ce02b83e7395059f0',
      start: {
        stream_sid: 'MZ18ad3ab5a668481ce02b83e7395059f0',
        call_sid: 'CA2f5c4e1b7f2c4a7f9d2c1b0e9a8f7e6d',
        account_sid: 'acme1',
        from: '+919876543210',
        to: '+918047491899',
        custom_parameters: { s: 'tok' },
        media_format: { encoding: 'raw/slin', sample_rate: rate, bit_rate: '128kbps' },
      },
    });
  const ramp = (n: number) => Int16Array.from({ length: n }, (_, i) => ((i * 997) % 65536) - 32768);

  it('decodes realistic frames', () => {
    const ser = kit.serializer();
    assert.deepEqual(ser.decode('{"event":"connected"}'), { type: 'other' });
    assert.deepEqual(ser.decode(start()), { type: 'start', streamId: 'MZ18ad3ab5a668481ce02b83e7395059f0', callSid: 'CA2f5c4e1b7f2c4a7f9d2c1b0e9a8f7e6d', customParameters: { s: 'tok' } });
    const pcm = Int16Array.from([0, 1, -1, 32767, -32768, 1234]);
    const payload = Buffer.from(pcm.buffer).toString('base64');
    const audio = ser.decode(JSON.stringify({ event: 'media', sequence_number: '3', stream_sid: 'MZ1', media: { chunk: '2', timestamp: '200', payload } }));
    assert.equal(audio.type, 'audio');
    assert.deepEqual(Array.from((audio as { pcm: Int16Array }).pcm), Array.from(pcm));
    assert.deepEqual(ser.decode('{"event":"dtmf","sequence_number":"7","stream_sid":"MZ1","dtmf":{"digit":"5","duration":"100"}}'), { type: 'dtmf', digit: '5' });
    assert.deepEqual(ser.decode('{"event":"mark","sequence_number":"15","stream_sid":"MZ1","mark":{"name":"play-1"}}'), { type: 'mark', name: 'play-1' });
    assert.deepEqual(ser.decode('{"event":"stop","sequence_number":"20","stream_sid":"MZ1","stop":{"call_sid":"CA1","account_sid":"a","reason":"callended"}}'), { type: 'stop' });
  });

  it('round-trips audio exactly in chunks that are multiples of 320 bytes', () => {
    const ser = kit.serializer();
    ser.decode(start());
    const pcm = ramp(8000 * 2 + 160 * 3); // 2.06 s
    const frames = ser.audio(pcm);
    const chunks = frames.map((f) => JSON.parse(f) as { event: string; stream_sid: string; media: { payload: string } });
    for (const c of chunks) {
      assert.equal(c.event, 'media');
      assert.equal(c.stream_sid, 'MZ18ad3ab5a668481ce02b83e7395059f0');
      const bytes = Buffer.from(c.media.payload, 'base64').length;
      assert.equal(bytes % 320, 0);
      assert.ok(bytes >= 3200 && bytes <= 100_000, `chunk of ${bytes} bytes`);
    }
    const back = frames.map((f) => ser.decode(f)).flatMap((e) => Array.from((e as { pcm: Int16Array }).pcm));
    assert.deepEqual(back, Array.from(pcm));
  });

  it('pads a clip that is not a multiple of 320 bytes with silence', () => {
    const ser = kit.serializer();
    ser.decode(start());
    const pcm = ramp(1000);
    const frames = ser.audio(pcm);
    assert.equal(frames.length, 1);
    const back = (ser.decode(frames[0]!) as { pcm: Int16Array }).pcm;
    assert.equal(back.length, 1120);
    assert.deepEqual(Array.from(back.subarray(0, 1000)), Array.from(pcm));
    assert.ok(back.subarray(1000).every((s) => s === 0));
    assert.deepEqual(ser.audio(new Int16Array(0)), []);
  });

  it('resamples a 16 kHz stream both ways', () => {
    const ser = kit.serializer();
    ser.decode(start('16000'));
    const frames = ser.audio(new Int16Array(1600).fill(1000));
    const bytes = frames.reduce((n, f) => n + Buffer.from(JSON.parse(f).media.payload, 'base64').length, 0);
    assert.equal(bytes, 6400);
    const back = (ser.decode(frames[0]!) as { pcm: Int16Array }).pcm;
    assert.equal(back.length, 1600);
  });

  it('writes mark and clear as Exotel expects', () => {
    const ser = kit.serializer();
    ser.decode(start());
    assert.deepEqual(JSON.parse(ser.mark('play-7')), { event: 'mark', stream_sid: 'MZ18ad3ab5a668481ce02b83e7395059f0', mark: { name: 'play-7' } });
    assert.deepEqual(JSON.parse(ser.clear()), { event: 'clear', stream_sid: 'MZ18ad3ab5a668481ce02b83e7395059f0' });
  });

  it('rejects malformed frames with ProtocolError', () => {
    const ser = kit.serializer();
    for (const bad of [
      'not json',
      '[]',
      '{"no":"event"}',
      '{"event":"bogus"}',
      '{"event":"start","stream_sid":"MZ1","start":{}}',
      '{"event":"start","stream_sid":"MZ1","start":{"call_sid":"c","media_format":{"sample_rate":"11025"}}}',
      '{"event":"media","media":{"payload":"***"}}',
      '{"event":"media","media":{"payload":"AAAA"}}',
      '{"event":"media"}',
      '{"event":"dtmf","dtmf":{"digit":"x"}}',
      '{"event":"mark","mark":{}}',
    ]) {
      assert.throws(() => ser.decode(bad), ProtocolError, bad);
    }
  });
});

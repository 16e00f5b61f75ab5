import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { decodeAlaw, encodeAlaw } from '../../src/lib/alaw.js';
import { authorization, parseChallenge } from '../../src/telephony/sip/digest.js';
import { inviteFailure } from '../../src/telephony/sip/call.js';
import { parseMessage, param, serialize } from '../../src/telephony/sip/message.js';
import { JitterBuffer } from '../../src/telephony/sip/rtp.js';
import { answer, offer, readRemote } from '../../src/telephony/sip/sdp.js';
import { SipEndpoint } from '../../src/telephony/sip/endpoint.js';
import { InboundCall, uriUser } from '../../src/telephony/sip/inbound-call.js';
import { numberOf } from '../../src/telephony/sip/inbound.js';
import { createLogger } from '../../src/lib/logger.js';
import { startSipCaller } from '../helpers/sip-caller.js';
import { parseAddress, SipTransport, type Destination } from '../../src/telephony/sip/transport.js';
import { connect } from 'node:net';

const md5 = (s: string) => createHash('md5').update(s).digest('hex');

describe('SIP messages', () => {
  it('reads compact headers, comma lists and the body by Content-Length, and writes them back', () => {
    const text = 'SIP/2.0 180 Ringing\r\nv: SIP/2.0/UDP a;branch=z9hG4bK1, SIP/2.0/UDP b;branch=z9hG4bK2\r\ni: abc\r\nt: <sip:x@h>;tag=t1\r\nCSeq: 1 INVITE\r\nl: 3\r\n\r\nabcdef';
    const m = parseMessage(text);
    assert.equal(m.kind, 'response');
    assert.equal(m.kind === 'response' && m.status, 180);
    assert.deepEqual(m.headers.get('via'), ['SIP/2.0/UDP a;branch=z9hG4bK1', 'SIP/2.0/UDP b;branch=z9hG4bK2']);
    assert.equal(param(m.headers.get('to')![0], 'tag'), 't1');
    assert.equal(m.body, 'abc');
    const again = parseMessage(serialize(m));
    assert.deepEqual(again.headers.get('call-id'), ['abc']);
    assert.throws(() => parseMessage('HELLO\r\n\r\n'));
  });
});

describe('SIP over TCP', () => {
  it('frames messages on a connection by Content-Length (coalesced, split mid-body, CRLF keep-alives between) and answers on the same connection', async () => {
    const transport = await SipTransport.open({ host: '127.0.0.1', port: 0, log: createLogger('silent') });
    const received: Array<{ text: string; from: Destination }> = [];
    let arrived: () => void = () => undefined;
    transport.onMessage = (data, from) => {
      received.push({ text: data.toString('utf8'), from });
      arrived();
    };
    const until = (check: () => boolean) => new Promise<void>((resolve) => {
      if (check()) return resolve();
      arrived = () => check() && resolve();
    });
    const client = connect(transport.port, '127.0.0.1');
    let heard = '';
    client.on('data', (chunk: Buffer) => {
      heard += chunk.toString('utf8');
      arrived();
    });
    try {
      const message = (n: number, body: string) => serialize({ kind: 'request', method: 'OPTIONS', uri: 'sip:dialer@127.0.0.1', headers: new Map([['call-id', [`c${n}`]], ['cseq', [`${n} OPTIONS`]]]), body }).toString('utf8');
      const third = Buffer.from(message(3, 'körper: ünïcode'), 'utf8');
      client.write(`${message(1, 'one')}\r\n\r\n${message(2, '')}`);
      client.write(third.subarray(0, third.length - 4));
      await until(() => received.length === 2 && heard === '\r\n');
      client.write(third.subarray(third.length - 4));
      await until(() => received.length === 3);
      assert.deepEqual(received.map((r) => parseMessage(r.text).body), ['one', '', 'körper: ünïcode']);
      assert.deepEqual(received.map((r) => r.from.transport), ['tcp', 'tcp', 'tcp']);
      // A reply to what came in goes back on that connection.
      await transport.send(Buffer.from('SIP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n'), received[0]!.from);
      await until(() => heard.endsWith('SIP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n'));
    } finally {
      client.destroy();
      await transport.close();
    }
  });
});

describe('digest authentication', () => {
  it('answers a qop=auth challenge as RFC 2617 computes it', () => {
    const challenge = parseChallenge('Digest realm="carrier", nonce="n0nce", qop="auth", opaque="op"')!;
    const value = authorization(challenge, { username: 'u', password: 'p' }, 'INVITE', 'sip:+1@h');
    const field = (name: string) => new RegExp(`${name}="?([^",]+)`).exec(value)![1]!;
    const ha1 = md5('u:carrier:p');
    const ha2 = md5('INVITE:sip:+1@h');
    assert.equal(field('response'), md5(`${ha1}:n0nce:${field('nc')}:${field('cnonce')}:auth:${ha2}`));
    assert.equal(field('opaque'), 'op');
    assert.equal(parseChallenge('Basic realm="x"'), undefined);
  });
});

describe('SDP', () => {
  it('offers the codecs in order with telephone-events and reads the answer', () => {
    const sdp = offer({ address: '10.0.0.1', port: 4000, codecs: ['PCMA', 'PCMU'], sessionId: 1, version: 1 });
    assert.match(sdp, /m=audio 4000 RTP\/AVP 8 0 101/);
    const remote = readRemote('v=0\r\nc=IN IP4 10.0.0.2\r\nm=audio 5000 RTP/AVP 8 96\r\na=rtpmap:96 telephone-event/8000\r\n', ['PCMU', 'PCMA']);
    assert.deepEqual(remote, { address: '10.0.0.2', port: 5000, codec: 'PCMA', payloadType: 8, eventPayloadType: 96 });
    assert.throws(() => readRemote('v=0\r\nc=IN IP4 1.2.3.4\r\nm=audio 5000 RTP/AVP 18\r\n', ['PCMU']), /none of PCMU/);
  });

  it('answers an offer with the first of its codecs the trunk allows and its own telephone-event type', () => {
    const offered = 'v=0\r\nc=IN IP4 10.0.0.2\r\nm=audio 5000 RTP/AVP 8 0 96\r\na=rtpmap:96 telephone-event/8000\r\n';
    const remote = readRemote(offered, ['PCMU']);
    const sdp = answer(remote, { address: '10.0.0.1', port: 4000, sessionId: 7 });
    assert.match(sdp, /m=audio 4000 RTP\/AVP 0 96\r\n/);
    assert.match(sdp, /a=rtpmap:0 PCMU\/8000/);
    assert.match(sdp, /a=rtpmap:96 telephone-event\/8000/);
    assert.doesNotMatch(sdp, /PCMA/);
    // What Dialer answered reads back as the same stream.
    assert.deepEqual(readRemote(sdp, ['PCMU']), { address: '10.0.0.1', port: 4000, codec: 'PCMU', payloadType: 0, eventPayloadType: 96 });
  });
});

describe('calls that come in (the user agent server)', () => {
  it('reads the dialled number and the caller as a trunk writes them', () => {
    assert.equal(uriUser('sip:+12125550177@10.0.0.1;user=phone'), '+12125550177');
    assert.equal(uriUser('tel:+12125550177'), '+12125550177');
    assert.equal(uriUser('sip:%zz@10.0.0.1'), '%zz');
    assert.equal(uriUser('sip:10.0.0.1'), undefined);
    assert.equal(numberOf('12125550177'), '+12125550177');
    assert.equal(numberOf('+1 (212) 555-0177'), '+12125550177');
    assert.equal(numberOf('anonymous'), undefined);
  });

  it('answers 100 at once, 487 to a CANCEL before the answer; sends its 200 again until the ACK; BYE either side', async () => {
    const endpoint = await SipEndpoint.open({ host: '127.0.0.1', port: 0, log: createLogger('silent') });
    const caller = await startSipCaller();
    const calls: InboundCall[] = [];
    endpoint.accept((invite, from) => void calls.push(new InboundCall(endpoint, invite, from)));
    const target = `127.0.0.1:${endpoint.address.port}`;
    try {
      // A CANCEL before the answer: 200 to it, 487 to the INVITE, acknowledged.
      const canceled = caller.invite(target, '+12125550177');
      await canceled.next((m) => m.status === 100);
      calls[0]!.ringing();
      await canceled.next((m) => m.status === 180);
      canceled.cancel();
      const terminated = await canceled.next((m) => m.status === 487);
      assert.ok(canceled.received.some((m) => m.status === 200 && /CANCEL/.test(m.header('cseq') ?? '')), 'the CANCEL was answered');
      assert.equal(calls[0]!.canceled, true);
      canceled.ack(terminated);
      assert.equal(await calls[0]!.acknowledged, true);

      // An answer not acknowledged is sent again (timer G), until the ACK.
      const answered = caller.invite(target, '+12125550177');
      await answered.next((m) => m.status === 100);
      const call = calls[1]!;
      assert.equal(call.toUser, '+12125550177');
      assert.equal(call.fromUser, '+14155550142');
      void call.answer('v=0\r\n');
      await answered.next(() => answered.received.filter((m) => m.status === 200).length >= 2);
      const ok = answered.received.find((m) => m.status === 200)!;
      assert.match(ok.header('to') ?? '', /;tag=/);
      answered.ack(ok);
      assert.equal(await call.acknowledged, true);
      // The caller hangs up: 200, and the call hears it.
      const hungUp = new Promise<void>((resolve) => (call.onBye = resolve));
      answered.bye(ok);
      await hungUp;

      // Dialer hangs up: a BYE in the dialog (our tag in From, theirs in To), answered by the caller.
      const third = caller.invite(target, '+12125550177');
      await third.next((m) => m.status === 100);
      void calls[2]!.answer('v=0\r\n');
      third.ack(await third.next((m) => m.status === 200));
      await calls[2]!.bye();
      const bye = await third.next((m) => m.method === 'BYE');
      assert.match(bye.header('from') ?? '', /sip:\+12125550177@.*;tag=/);
      assert.match(bye.header('to') ?? '', /sip:\+14155550142@/);
    } finally {
      await caller.close();
      await endpoint.close();
    }
  });
});

describe('the jitter buffer', () => {
  const frame = (v: number) => new Int16Array(160).fill(v);
  it('puts reordered frames back in order and conceals a lost one', () => {
    const jb = new JitterBuffer(2);
    const out: number[] = [];
    const push = (seq: number) => out.push(...jb.push(seq, frame(seq * 10)).map((f) => f[0]!));
    push(65534);
    push(0); // wraps past 65535, which is late
    push(65535);
    push(2);
    push(3); // 1 never comes: concealed once three wait
    push(4);
    assert.deepEqual(out.slice(0, 3), [655340, 655350, 0].map((v) => (v << 16) >> 16));
    assert.equal(jb.lost, 1);
    assert.deepEqual(out.slice(4), [20, 30, 40]);
    push(0);
    assert.equal(jb.late, 1);
    // The far side's stream starts again far away (a new source): followed at once, nothing concealed.
    out.length = 0;
    push(30_000);
    push(30_001);
    assert.deepEqual(out, [300_000, 300_010].map((v) => (v << 16) >> 16));
    assert.equal(jb.lost, 1);
    assert.equal(jb.resyncs, 1);
  });
});

describe('call progress', () => {
  it('maps the INVITE final status to the call ends of the other drivers, keeping the status', () => {
    assert.deepEqual(inviteFailure(486, 'Busy Here', false, 30), { kind: 'busy', error: 'SIP 486 Busy Here' });
    assert.equal(inviteFailure(600, 'Busy Everywhere', false, 30).kind, 'busy');
    assert.equal(inviteFailure(480, 'Temporarily Unavailable', false, 30).kind, 'no_answer');
    assert.equal(inviteFailure(408, 'Request Timeout', false, 30).kind, 'no_answer');
    assert.match(JSON.stringify(inviteFailure(487, 'Request Terminated', true, 30)), /no_answer.*CANCEL/);
    assert.deepEqual(inviteFailure(603, 'Decline', false, 30), { kind: 'failed', error: 'rejected: SIP 603 Decline' });
    assert.deepEqual(inviteFailure(503, 'Service Unavailable', false, 30), { kind: 'error', error: 'carrier error: SIP 503 Service Unavailable' });
    assert.equal(inviteFailure(404, 'Not Found', false, 30).kind, 'failed');
    assert.deepEqual(parseAddress('sip.example:5070'), { host: 'sip.example', port: 5070, transport: 'udp' });
    assert.deepEqual(parseAddress('[2001:db8::1]'), { host: '2001:db8::1', port: 5060, transport: 'udp' });
    // TLS listens on 5061 unless the address says otherwise.
    assert.deepEqual(parseAddress('sip.example', 'tls'), { host: 'sip.example', port: 5061, transport: 'tls' });
    assert.deepEqual(parseAddress('sip.example', 'tcp'), { host: 'sip.example', port: 5060, transport: 'tcp' });
  });
});

describe('G.711 A-law', () => {
  it('encodes silence as 0xD5 and round-trips within the segment step', () => {
    assert.equal(encodeAlaw(new Int16Array([0]))[0], 0xd5);
    const samples = new Int16Array([0, 100, -100, 1000, -1000, 10000, -10000, 32767, -32768]);
    const back = decodeAlaw(encodeAlaw(samples));
    samples.forEach((s, i) => assert.ok(Math.abs(back[i]! - s) <= Math.max(16, Math.abs(s) / 16), `${s} -> ${back[i]}`));
  });
});

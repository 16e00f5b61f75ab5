import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { decodeAlaw, encodeAlaw } from '../../src/lib/alaw.js';
import { authorization, parseChallenge } from '../../src/telephony/sip/digest.js';
import { inviteFailure, parseAddress } from '../../src/telephony/sip/driver.js';
import { parseMessage, param, serialize } from '../../src/telephony/sip/message.js';
import { JitterBuffer } from '../../src/telephony/sip/rtp.js';
import { offer, readRemote } from '../../src/telephony/sip/sdp.js';

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
    assert.deepEqual(parseAddress('sip.example:5070'), { host: 'sip.example', port: 5070 });
    assert.deepEqual(parseAddress('[2001:db8::1]'), { host: '2001:db8::1', port: 5060 });
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

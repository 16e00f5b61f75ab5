/**
 * A lean SIP callee for tests of what baresip cannot be made to do on demand: a UDP SIP user agent
 * server and RTP peer on 127.0.0.1 that shares no code with Dialer's SIP stack (its messages are
 * built from the request's own headers, as RFC 3261 section 8.2.6 says).
 *
 * - It answers every INVITE (100 Trying, then 200 OK with a PCMU answer), sends RTP continuously
 *   (silence, then its speech once the caller has spoken and gone quiet for 800 ms), and keeps what
 *   it heard.
 * - `channel` decides what happens to each frame it sends on the way (a lossy, reordering network):
 *   frame i (counted from the first, silence included) is dropped, sent now, or held and sent after
 *   `later` more frames.
 * - A REFER is answered 202 Accepted, then NOTIFY (message/sipfrag) 100 Trying and the transfer's
 *   final status (`referOutcome`, default 200 OK), as a carrier that moves the callee does
 *   (RFC 3515); the caller is expected to hang up after a successful one. `referResponse` refuses
 *   the REFER with that status instead.
 */
import { createSocket, type RemoteInfo } from 'node:dgram';
import { decodeMulaw, encodeMulaw } from '../../src/lib/audio.js';

export type FrameFate = { drop: true } | { later: number } | 'send';

export interface SipCallee {
  /** host:port of its SIP socket. */
  address: string;
  /** The frames it sent, in their order before the channel (what the caller should hear). */
  sentPcm(): Int16Array;
  /** What it heard (decoded), frame by frame in arrival order. */
  heardPcm(): Int16Array;
  /** Frames the channel dropped. */
  dropped: number;
  /** The Refer-To of each REFER, and the BYE it got. */
  refers: string[];
  byes: number;
  /** Resolves when the call is over (a BYE came, either way). */
  ended: Promise<void>;
  close(): Promise<void>;
}

const FRAME = 160;

export async function startSipCallee(options: { speech: Int16Array; channel?: (i: number) => FrameFate; referOutcome?: string; referResponse?: string }): Promise<SipCallee> {
  const sip = createSocket('udp4');
  const rtp = createSocket('udp4');
  await Promise.all([sip, rtp].map((s) => new Promise<void>((resolve) => s.bind(0, '127.0.0.1', resolve))));
  const speech = encodeMulaw(options.speech);
  const silence = Buffer.alloc(FRAME, 0xff);
  const heard: Buffer[] = [];
  const sent: Buffer[] = [];
  const refers: string[] = [];
  let byes = 0;
  let dropped = 0;
  let endCall!: () => void;
  const ended = new Promise<void>((resolve) => (endCall = resolve));
  let timer: NodeJS.Timeout | undefined;
  let dialog: { from: string; to: string; callId: string; contact: string; peer: RemoteInfo; cseq: number } | undefined;

  const headerOf = (text: string, name: string, short: string) => new RegExp(`^(?:${name}|${short})\\s*:\\s*(.*)$`, 'im').exec(text)?.[1]?.trim() ?? '';
  const reply = (request: string, status: string, from: RemoteInfo, extra: string[] = [], body = '') => {
    const lines = request.split('\r\n\r\n')[0]!.split('\r\n').slice(1);
    const copied = lines.filter((l) => /^(via|v|from|f|call-id|i|cseq)\s*:/i.test(l));
    const to = lines.find((l) => /^(to|t)\s*:/i.test(l))!;
    send([`SIP/2.0 ${status}`, ...copied, /;tag=/.test(to) ? to : `${to};tag=callee`, ...extra], body, from);
  };
  const send = (lines: string[], body: string, to: RemoteInfo) => sip.send([...lines, `Content-Length: ${Buffer.byteLength(body)}`, '', body].join('\r\n'), to.port, to.address);

  /** A request of ours inside the call (NOTIFY, BYE): From and To swapped from the INVITE's. */
  const request = (method: string, extra: string[], body = '') => {
    const d = dialog!;
    send([`${method} ${d.contact} SIP/2.0`, `Via: SIP/2.0/UDP 127.0.0.1:${sip.address().port};branch=z9hG4bKcallee${++d.cseq}`, 'Max-Forwards: 70', `From: ${d.to};tag=callee`, `To: ${d.from}`, `Call-ID: ${d.callId}`, `CSeq: ${d.cseq} ${method}`, ...extra], body, d.peer);
  };

  function startMedia(host: string, port: number): void {
    let i = 0;
    let spoken = 0;
    let heardSpeech = false;
    let quietFrames = 0;
    const held: Array<{ due: number; packet: Buffer }> = [];
    rtp.on('message', (data) => {
      const payload = data.subarray(12);
      if ((data[1]! & 0x7f) !== 0) return;
      heard.push(Buffer.from(payload));
      const pcm = decodeMulaw(payload);
      let energy = 0;
      for (const s of pcm) energy += s * s;
      const loud = Math.sqrt(energy / pcm.length) > 300;
      if (loud) heardSpeech = true;
      quietFrames = loud ? 0 : quietFrames + 1;
    });
    const ssrc = 0x1234;
    // Frames go out by the clock (those a late timer owes are sent at once), as a phone's do: the
    // recording places what it hears by frame count and what it plays by time.
    const startedAt = performance.now();
    const sendFrame = () => {
      // Speech once the caller spoke and then stayed quiet for 800 ms; silence before and after.
      const speaking = spoken > 0 ? spoken * FRAME < speech.length : heardSpeech && quietFrames >= 40;
      const payload = speaking ? speech.subarray(spoken * FRAME, ++spoken * FRAME) : silence;
      const frame = Buffer.alloc(FRAME, 0xff);
      payload.copy(frame);
      sent.push(frame);
      const packet = Buffer.alloc(12 + FRAME);
      packet[0] = 0x80;
      packet[1] = 0;
      packet.writeUInt16BE((60_000 + i) & 0xffff, 2); // wraps past 65535 on the way
      packet.writeUInt32BE(i * FRAME, 4);
      packet.writeUInt32BE(ssrc, 8);
      frame.copy(packet, 12);
      const fate = options.channel?.(i) ?? 'send';
      if (fate === 'send') rtp.send(packet, port, host);
      else if ('drop' in fate) dropped++;
      else held.push({ due: i + fate.later, packet });
      for (let h = held.length - 1; h >= 0; h--) {
        if (held[h]!.due > i) continue;
        rtp.send(held[h]!.packet, port, host);
        held.splice(h, 1);
      }
      i++;
    };
    timer = setInterval(() => {
      const owed = Math.floor((performance.now() - startedAt) / 20) + 1 - i;
      for (let n = 0; n < owed; n++) sendFrame();
    }, 20);
  }

  const stop = () => {
    clearInterval(timer);
    timer = undefined;
    endCall();
  };

  sip.on('message', (data, from) => {
    const text = data.toString('utf8');
    const start = text.slice(0, text.indexOf('\r\n'));
    const callId = headerOf(text, 'call-id', 'i');
    if (start.startsWith('INVITE ')) {
      if (dialog) {
        // A re-INVITE (session refresh): the same answer.
        if (dialog.callId === callId) reply(text, '200 OK', from, [`Contact: <sip:callee@127.0.0.1:${sip.address().port}>`, 'Content-Type: application/sdp'], answer());
        return;
      }
      const contact = /<([^>]+)>/.exec(headerOf(text, 'contact', 'm'))?.[1] ?? '';
      dialog = { from: headerOf(text, 'from', 'f'), to: headerOf(text, 'to', 't'), callId, contact, peer: from, cseq: 0 };
      const body = text.slice(text.indexOf('\r\n\r\n') + 4);
      const port = Number(/^m=audio (\d+)/m.exec(body)?.[1]);
      const host = /^c=IN IP4 (\S+)/m.exec(body)?.[1] ?? '127.0.0.1';
      reply(text, '100 Trying', from);
      reply(text, '200 OK', from, [`Contact: <sip:callee@127.0.0.1:${sip.address().port}>`, 'Content-Type: application/sdp'], answer());
      startMedia(host, port);
      return;
    }
    if (start.startsWith('BYE ')) {
      byes++;
      reply(text, '200 OK', from);
      stop();
      return;
    }
    if (start.startsWith('REFER ')) {
      refers.push(/<([^>]+)>/.exec(headerOf(text, 'refer-to', 'r'))?.[1] ?? headerOf(text, 'refer-to', 'r'));
      if (options.referResponse) return reply(text, options.referResponse, from);
      reply(text, '202 Accepted', from, [`Contact: <sip:callee@127.0.0.1:${sip.address().port}>`]);
      const notify = (fragment: string, state: string) => request('NOTIFY', ['Event: refer', `Subscription-State: ${state}`, 'Content-Type: message/sipfrag;version=2.0', `Contact: <sip:callee@127.0.0.1:${sip.address().port}>`], `SIP/2.0 ${fragment}\r\n`);
      setTimeout(() => notify('100 Trying', 'active;expires=60'), 50);
      setTimeout(() => notify(options.referOutcome ?? '200 OK', 'terminated;reason=noresource'), 300);
    }
  });

  function answer(): string {
    return ['v=0', 'o=callee 1 1 IN IP4 127.0.0.1', 's=callee', 'c=IN IP4 127.0.0.1', 't=0 0', `m=audio ${rtp.address().port} RTP/AVP 0 101`, 'a=rtpmap:0 PCMU/8000', 'a=rtpmap:101 telephone-event/8000', 'a=sendrecv', ''].join('\r\n');
  }

  return {
    address: `127.0.0.1:${sip.address().port}`,
    sentPcm: () => decodeMulaw(Buffer.concat(sent)),
    heardPcm: () => decodeMulaw(Buffer.concat(heard)),
    get dropped() {
      return dropped;
    },
    refers,
    get byes() {
      return byes;
    },
    ended,
    close: async () => {
      stop();
      await Promise.all([sip, rtp].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    },
  };
}

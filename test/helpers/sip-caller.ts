/**
 * A lean SIP caller on a UDP socket of its own: it sends an INVITE (with a G.711 offer) to Dialer's
 * SIP address, reads what comes back, and sends the CANCEL, ACK and BYE a test asks for, or
 * withholds them. It answers 200 to requests Dialer sends it (BYE). It shares no code with
 * Dialer's SIP stack: messages are written and read as text, as RFC 3261 spells them.
 */
import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';

export interface SipText {
  /** The start line (`SIP/2.0 200 OK`, `BYE sip:… SIP/2.0`). */
  start: string;
  status: number;
  method: string;
  text: string;
  header(name: string): string | undefined;
}

function read(text: string): SipText {
  const [head = ''] = text.split('\r\n\r\n');
  const [start = '', ...lines] = head.split('\r\n');
  const status = /^SIP\/2\.0 (\d{3})/.exec(start)?.[1];
  return {
    start,
    status: status ? Number(status) : 0,
    method: status ? '' : start.split(' ')[0]!,
    text,
    header(name) {
      const line = lines.find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
      return line?.slice(line.indexOf(':') + 1).trim();
    },
  };
}

export interface CallerCall {
  callId: string;
  /** Waits for a message from Dialer (responses and requests, in order of arrival) that matches. */
  next(match: (m: SipText) => boolean, timeoutMs?: number): Promise<SipText>;
  /** Everything Dialer sent on this call so far. */
  received: SipText[];
  cancel(): void;
  /** The ACK of a final response (`final`'s To tag kept). */
  ack(final: SipText): void;
  /** Ends the answered call (`answer`: the 200 to the INVITE). */
  bye(answer: SipText): void;
}

export interface SipCaller {
  /** host:port the caller sends from. */
  address: string;
  /** Calls `to` (the Request-URI's user) at Dialer's SIP address `target` (host:port). */
  invite(target: string, to: string, from?: string): CallerCall;
  close(): Promise<void>;
}

export async function startSipCaller(host = '127.0.0.1'): Promise<SipCaller> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, host, resolve));
  const port = socket.address().port;
  const calls = new Map<string, { received: SipText[]; wake: Array<() => void> }>();
  let targetHost = '';
  let targetPort = 0;
  const send = (text: string) => socket.send(text, targetPort, targetHost);
  socket.on('message', (data) => {
    const message = read(data.toString('utf8'));
    const call = calls.get(message.header('call-id') ?? '');
    if (!call) return;
    if (message.method) {
      // A request of Dialer's (BYE): 200, its headers copied.
      const copied = ['via', 'from', 'to', 'call-id', 'cseq'].map((h) => `${h === 'call-id' ? 'Call-ID' : h === 'cseq' ? 'CSeq' : h[0]!.toUpperCase() + h.slice(1)}: ${message.header(h)}`);
      send(['SIP/2.0 200 OK', ...copied, 'Content-Length: 0', '', ''].join('\r\n'));
    }
    call.received.push(message);
    for (const wake of call.wake.splice(0)) wake();
  });
  return {
    address: `${host}:${port}`,
    invite(target, to, from = '+14155550142') {
      [targetHost, targetPort] = [target.split(':')[0]!, Number(target.split(':')[1])];
      const callId = `caller-${randomBytes(6).toString('hex')}`;
      const branch = `z9hG4bK${randomBytes(6).toString('hex')}`;
      const tag = randomBytes(4).toString('hex');
      const uri = `sip:${to}@${target}`;
      const state = { received: [] as SipText[], wake: [] as Array<() => void> };
      calls.set(callId, state);
      const common = (method: string, seq: number, viaBranch: string, toHeader = `<${uri}>`) => [
        `Via: SIP/2.0/UDP ${host}:${port};branch=${viaBranch}`,
        'Max-Forwards: 70',
        `From: <sip:${from}@${host}>;tag=${tag}`,
        `To: ${toHeader}`,
        `Call-ID: ${callId}`,
        `CSeq: ${seq} ${method}`,
      ];
      const sdp = ['v=0', `o=caller 1 1 IN IP4 ${host}`, 's=-', `c=IN IP4 ${host}`, 't=0 0', `m=audio ${port + 2} RTP/AVP 8 0 96`, 'a=rtpmap:8 PCMA/8000', 'a=rtpmap:0 PCMU/8000', 'a=rtpmap:96 telephone-event/8000', ''].join('\r\n');
      send([`INVITE ${uri} SIP/2.0`, ...common('INVITE', 1, branch), `Contact: <sip:${from}@${host}:${port}>`, 'Content-Type: application/sdp', `Content-Length: ${sdp.length}`, '', sdp].join('\r\n'));
      return {
        callId,
        received: state.received,
        async next(match, timeoutMs = 10_000) {
          const deadline = Date.now() + timeoutMs;
          for (;;) {
            const hit = state.received.find(match);
            if (hit) return hit;
            const left = deadline - Date.now();
            if (left <= 0) throw new Error(`no such message from Dialer; it sent:\n${state.received.map((m) => m.start).join('\n')}`);
            await new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, left);
              state.wake.push(() => {
                clearTimeout(timer);
                resolve();
              });
            });
          }
        },
        cancel() {
          send([`CANCEL ${uri} SIP/2.0`, ...common('CANCEL', 1, branch), 'Content-Length: 0', '', ''].join('\r\n'));
        },
        ack(final) {
          // A 2xx's ACK is a transaction of its own; a failure's shares the INVITE's branch.
          const viaBranch = final.status < 300 ? `z9hG4bK${randomBytes(6).toString('hex')}` : branch;
          send([`ACK ${uri} SIP/2.0`, ...common('ACK', 1, viaBranch, final.header('to')), 'Content-Length: 0', '', ''].join('\r\n'));
        },
        bye(answer) {
          send([`BYE ${uri} SIP/2.0`, ...common('BYE', 2, `z9hG4bK${randomBytes(6).toString('hex')}`, answer.header('to')), 'Content-Length: 0', '', ''].join('\r\n'));
        },
      };
    },
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

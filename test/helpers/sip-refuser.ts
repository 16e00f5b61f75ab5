/**
 * A carrier that refuses every call: a UDP SIP server on 127.0.0.1 that answers each INVITE with
 * one final status (503 Service Unavailable by default), as a trunk whose carrier is down does,
 * and absorbs the ACK. It shares no code with Dialer's SIP stack: the response is built from the
 * request's own headers as RFC 3261 section 8.2.6 says (Via, From, Call-ID and CSeq copied, a tag
 * added to To).
 */
import { createSocket } from 'node:dgram';

export interface SipRefuser {
  /** host:port of its SIP socket. */
  address: string;
  /** The INVITEs it refused (retransmissions counted once, by Call-ID). */
  invites: Set<string>;
  close(): Promise<void>;
}

export async function startSipRefuser(status = 503, reason = 'Service Unavailable'): Promise<SipRefuser> {
  const socket = createSocket('udp4');
  const invites = new Set<string>();
  socket.on('message', (data, from) => {
    const [head = ''] = data.toString('utf8').split('\r\n\r\n');
    const [start = '', ...lines] = head.split('\r\n');
    if (!start.startsWith('INVITE ')) return;
    const kept = lines.filter((l) => /^(via|v|from|f|call-id|i|cseq)\s*:/i.test(l));
    const to = lines.find((l) => /^(to|t)\s*:/i.test(l));
    const callId = lines.find((l) => /^(call-id|i)\s*:/i.test(l))?.replace(/^[^:]+:\s*/, '') ?? '';
    invites.add(callId);
    const response = [`SIP/2.0 ${status} ${reason}`, ...kept, `${to};tag=refuser`, 'Content-Length: 0', '', ''].join('\r\n');
    socket.send(response, from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    invites,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

/**
 * Dialer's SIP endpoint: sends requests over its transports (transport.ts: UDP, TCP, TLS), over UDP
 * with the retransmissions of RFC 3261 (timer A/E: 500 ms doubling, to 4 s between non-INVITE
 * tries; over TCP and TLS none), each given up after timer B/F (32 s); a request that cannot leave
 * at all (a connection refused, a TLS certificate not trusted) is answered by a 503 of our own
 * (section 8.1.3.1) that says why. It routes responses
 * to the transaction that asked (by Via branch) and requests to their dialog (by Call-ID).
 * Requests outside a dialog get 200 (OPTIONS, a keep-alive) or 481; an INVITE outside a dialog
 * (a call coming in) goes to the handler given to accept(), when there is one.
 */
import { randomBytes } from 'node:crypto';
import { networkInterfaces } from 'node:os';
import type { Logger } from '../../lib/logger.js';
import { cseq, header, param, parseMessage, responseTo, serialize, type SipMessage, type SipRequest, type SipResponse } from './message.js';
import { isReliable, SipTransport, uriTransport, viaProtocol, type Destination, type TransportName } from './transport.js';

export type { Destination, TransportName };

export const T1_MS = 500;
export const T2_MS = 4000;
export const TIMEOUT_MS = 64 * T1_MS;

export type DialogHandler = (request: SipRequest, from: Destination) => void;

export interface ClientTransaction {
  /** Stops retransmitting (a final response came, or the caller gave up). */
  stop(): void;
}

/** The first IPv4 address of an external interface (what a trunk on the network reaches us at), else loopback. */
function externalIpv4(): string {
  for (const addresses of Object.values(networkInterfaces())) for (const a of addresses ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return '127.0.0.1';
}

export function newTag(): string {
  return randomBytes(6).toString('hex');
}

export function newBranch(): string {
  return `z9hG4bK${randomBytes(8).toString('hex')}`;
}

export class SipEndpoint {
  private readonly clients = new Map<string, (response: SipResponse) => void>();
  /** Each open client transaction's stop (its retransmission timer), so close() leaves none behind. */
  private readonly transactions = new Set<() => void>();
  private readonly dialogs = new Map<string, DialogHandler>();
  private incoming: DialogHandler | undefined;
  private closed = false;

  private constructor(
    private readonly transport: SipTransport,
    /** The address the far side reaches us at (Via, Contact). */
    readonly address: Destination,
    private readonly log: Logger,
  ) {
    transport.onMessage = (data, from) => this.receive(data, from);
  }

  /**
   * Binds `host:port` for UDP and TCP (port 0: any free one); `advertise` is the address put in
   * headers (default: the bound one); `tlsCa`: PEM of CAs trusted for TLS trunks besides the system's;
   * `tlsIdentity`: Dialer's certificate and key, for TLS connections the far side opens to the port.
   */
  static async open(options: { host: string; port: number; advertise?: string | undefined; tlsCa?: string | undefined; tlsIdentity?: { cert: string; key: string } | undefined; log: Logger }): Promise<SipEndpoint> {
    const transport = await SipTransport.open(options);
    const host = options.advertise ?? (options.host === '0.0.0.0' ? externalIpv4() : options.host);
    return new SipEndpoint(transport, { host, port: transport.port }, options.log);
  }

  /** Our Via (without its branch) for requests over UDP. */
  get via(): string {
    return this.viaFor({ ...this.address });
  }

  /** Our Via (without its branch) for requests to `to`, naming its transport. */
  viaFor(to: Destination): string {
    return `${viaProtocol(to.transport)} ${this.address.host}:${this.address.port}`;
  }

  /** Our Contact URI for `user` in a dialog with `to`: over TCP and TLS the far side's requests come back by TCP or TLS. */
  contactFor(user: string, to: Destination): string {
    return `<sip:${user}@${this.address.host}:${this.address.port}${uriTransport(to.transport)}>`;
  }

  send(message: SipMessage, to: Destination): void {
    if (this.closed) return;
    this.transport.send(serialize(message), to).catch((err: unknown) => this.log.warn({ err, to: { host: to.host, port: to.port, transport: to.transport } }, 'could not send a SIP message'));
  }

  /**
   * Sends a request and retransmits it until a response (INVITE: any; others: a final one) or the
   * transaction's timeout, which answers `onResponse` with a 408 of our own.
   */
  request(request: SipRequest, to: Destination, onResponse: (response: SipResponse) => void): ClientTransaction {
    // A CANCEL shares its INVITE's branch: the method tells their responses apart.
    const branch = `${param(header(request, 'via'), 'branch')!} ${request.method}`;
    const invite = request.method === 'INVITE';
    // Over TCP and TLS the stream retransmits: only timer B/F runs.
    const reliable = isReliable(to);
    let interval = T1_MS;
    let timer: NodeJS.Timeout | undefined;
    let heard = false;
    const startedAt = Date.now();
    const stop = () => {
      clearTimeout(timer);
      this.clients.delete(branch);
      this.transactions.delete(stop);
    };
    this.transactions.add(stop);
    const retransmit = () => {
      if (Date.now() - startedAt >= TIMEOUT_MS) {
        stop();
        onResponse({ kind: 'response', status: 408, reason: 'Request Timeout (no response)', headers: new Map(), body: '' });
        return;
      }
      if (!(invite && heard) && !reliable) this.send(request, to);
      interval = invite ? interval * 2 : Math.min(interval * 2, T2_MS);
      timer = setTimeout(retransmit, reliable ? Math.max(0, TIMEOUT_MS - (Date.now() - startedAt)) : heard && invite ? TIMEOUT_MS : interval);
    };
    this.clients.set(branch, (response) => {
      heard = true;
      // An INVITE's 2xx may come again (until our ACK arrives): its transaction stays to hear it, until stop().
      if (response.status >= 200 && !(invite && response.status < 300)) stop();
      else clearTimeout(timer);
      onResponse(response);
    });
    if (!this.closed) {
      this.transport.send(serialize(request), to).catch((err: unknown) => {
        if (!this.clients.has(branch)) return;
        stop();
        onResponse({ kind: 'response', status: 503, reason: `Service Unavailable (${(err as Error).message})`, headers: new Map(), body: '' });
      });
    }
    timer = setTimeout(retransmit, reliable ? TIMEOUT_MS : interval);
    return { stop };
  }

  onDialog(callId: string, handler: DialogHandler): void {
    this.dialogs.set(callId, handler);
  }

  offDialog(callId: string): void {
    this.dialogs.delete(callId);
  }

  /** Takes INVITEs outside any dialog (calls coming in); the handler registers the call's dialog at once. */
  accept(handler: DialogHandler): void {
    this.incoming = handler;
  }

  private receive(data: Buffer, from: Destination): void {
    let message: SipMessage;
    try {
      message = parseMessage(data);
    } catch (err) {
      // Keep-alives (CRLF) and garbage are not messages.
      if (data.toString().trim() !== '') this.log.debug({ err, from: { host: from.host, port: from.port, transport: from.transport } }, 'unreadable SIP message');
      return;
    }
    if (message.kind === 'response') {
      const branch = param(header(message, 'via'), 'branch');
      const client = branch ? this.clients.get(`${branch} ${cseq(message).method}`) : undefined;
      client?.(message);
      return;
    }
    const handler = this.dialogs.get(header(message, 'call-id') ?? '');
    if (handler) return handler(message, from);
    if (message.method === 'ACK') return;
    if (message.method === 'INVITE' && this.incoming && !param(header(message, 'to'), 'tag')) return this.incoming(message, from);
    const status = message.method === 'OPTIONS' ? [200, 'OK'] as const : [481, 'Call/Transaction Does Not Exist'] as const;
    this.send(responseTo(message, status[0], status[1], { toTag: newTag() }), from);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const stop of [...this.transactions]) stop();
    for (const client of this.clients.keys()) this.clients.delete(client);
    await this.transport.close();
  }
}

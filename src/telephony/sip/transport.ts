/**
 * SIP's transports (RFC 3261 section 18) under Dialer's endpoint: one UDP socket, a TCP listener on
 * the same port (for requests a carrier opens a new connection for; with a certificate of Dialer's
 * own it takes TLS there too, told apart by the first byte of the connection), and TCP or TLS
 * connections that Dialer opens to a trunk, kept and reused per destination. On a connection, messages are
 * framed by their Content-Length (section 18.3); CRLFs between them are keep-alives (RFC 5626: a
 * double CRLF is answered with one). A message that came in on a connection is answered on it.
 *
 * TLS verifies the trunk's certificate against the system's CAs, plus a CA of the operator's own
 * (a private carrier's) when one is given, with the trunk's host as the name to check.
 *
 * Terminology
 * - destination: where a message goes: host, port and transport, and the connection it came in on
 *   when it answers one.
 * - reliable: TCP and TLS; requests over them are not retransmitted (the stream does it).
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { connect as tcpConnect, createServer, isIP, type Server, type Socket } from 'node:net';
import { connect as tlsConnect, createSecureContext, rootCertificates, TLSSocket, type SecureContext } from 'node:tls';
import { Duplex } from 'node:stream';
import type { Logger } from '../../lib/logger.js';

export type TransportName = 'udp' | 'tcp' | 'tls';

export interface Destination {
  host: string;
  port: number;
  /** Default `udp`. */
  transport?: TransportName;
  /** The connection a request came in on: its answers go back there. */
  connection?: StreamConnection;
}

/** The port a trunk's address means when it names none. */
export function defaultPort(transport: TransportName | undefined): number {
  return transport === 'tls' ? 5061 : 5060;
}

/** A trunk's address (host or host:port) as a destination over `transport`. */
export function parseAddress(address: string, transport: TransportName = 'udp'): Destination {
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(address);
  if (!match) throw new Error(`not a host or host:port: ${address}`);
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port: match[2] ? Number(match[2]) : defaultPort(transport), transport };
}

export function isReliable(to: Destination): boolean {
  return (to.transport ?? 'udp') !== 'udp';
}

/** The Via's sent-protocol for a transport (`SIP/2.0/TCP`). */
export function viaProtocol(transport: TransportName | undefined): string {
  return `SIP/2.0/${(transport ?? 'udp').toUpperCase()}`;
}

/** The URI parameter that names a transport in a Contact (`;transport=tcp`). */
export function uriTransport(transport: TransportName | undefined): string {
  return `;transport=${transport ?? 'udp'}`;
}

/** A message larger than this on a connection (head or body) ends the connection: no SIP message is near it. */
const MAX_MESSAGE_BYTES = 256 * 1024;
/** The first byte of a TLS handshake record: a connection that starts with it is TLS, else plain SIP. */
const TLS_HANDSHAKE = 0x16;
/** How long a connection may take to open (TCP connect and TLS handshake). */
const CONNECT_TIMEOUT_MS = 10_000;

export class SipTransportError extends Error {
  override name = 'SipTransportError';
}

/** One TCP or TLS connection: writes messages, reads them back framed by Content-Length. */
export class StreamConnection {
  private buffer: Buffer = Buffer.alloc(0);
  /** Resolves once connected (TLS: the handshake verified); rejects with why not. */
  readonly ready: Promise<void>;
  closed = false;

  constructor(
    private readonly socket: Socket,
    readonly peer: Destination & { transport: 'tcp' | 'tls' },
    private readonly onMessage: (data: Buffer, from: Destination) => void,
    private readonly onClose: (connection: StreamConnection) => void,
    opening: 'connect' | 'secureConnect' | undefined,
  ) {
    this.ready = new Promise<void>((resolve, reject) => {
      if (!opening) return resolve();
      const timer = setTimeout(() => socket.destroy(new Error(`no connection in ${CONNECT_TIMEOUT_MS / 1000} s`)), CONNECT_TIMEOUT_MS);
      socket.once(opening, () => {
        clearTimeout(timer);
        resolve();
      });
      socket.once('error', (err) => {
        clearTimeout(timer);
        const what = peer.transport === 'tls' ? 'TLS' : 'TCP';
        reject(new SipTransportError(`${what} to ${peer.host}:${peer.port} failed: ${err.message}`, { cause: err }));
      });
    });
    this.ready.catch(() => undefined);
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    socket.on('error', () => undefined); // reported by `ready`, or ends the connection (close follows)
    socket.on('close', () => {
      this.closed = true;
      this.onClose(this);
    });
  }

  async write(data: Buffer): Promise<void> {
    await this.ready;
    if (this.closed) throw new SipTransportError(`the ${this.peer.transport.toUpperCase()} connection to ${this.peer.host}:${this.peer.port} is closed`);
    await new Promise<void>((resolve, reject) => this.socket.write(data, (err) => (err ? reject(err) : resolve())));
  }

  private read(chunk: Buffer): void {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    for (;;) {
      let skip = 0;
      while (skip + 1 < this.buffer.length && this.buffer[skip] === 13 && this.buffer[skip + 1] === 10) skip += 2;
      if (skip > 0) {
        if (skip >= 4) this.socket.write('\r\n'); // a keep-alive ping: its pong
        this.buffer = this.buffer.subarray(skip);
      }
      const headEnd = this.buffer.indexOf('\r\n\r\n');
      if (headEnd === -1) {
        if (this.buffer.length > MAX_MESSAGE_BYTES) this.socket.destroy();
        return;
      }
      const head = this.buffer.subarray(0, headEnd).toString('latin1');
      // Content-Length is mandatory on a stream: without it the message has no body.
      const length = Number(/^(?:content-length|l)[ \t]*:[ \t]*(\d+)/im.exec(head)?.[1] ?? 0);
      if (length > MAX_MESSAGE_BYTES) {
        this.socket.destroy();
        return;
      }
      const total = headEnd + 4 + length;
      if (this.buffer.length < total) return;
      const message = Buffer.from(this.buffer.subarray(0, total));
      this.buffer = this.buffer.subarray(total);
      this.onMessage(message, { host: this.peer.host, port: this.peer.port, transport: this.peer.transport, connection: this });
    }
  }

  close(): void {
    this.closed = true;
    this.socket.destroy();
  }
}

export class SipTransport {
  /** Open connections by `transport host port` (Dialer's own and those the far side opened). */
  private readonly connections = new Map<string, StreamConnection>();
  /** Where received messages go (the endpoint). */
  onMessage: (data: Buffer, from: Destination) => void = () => undefined;
  private closed = false;

  private constructor(
    private readonly udp: UdpSocket,
    private readonly server: Server,
    private readonly tlsCa: string | undefined,
    /** Dialer's own certificate, for TLS connections the far side opens; without it they are refused. */
    private readonly tlsServer: SecureContext | undefined,
    private readonly log: Logger,
  ) {
    udp.on('message', (data, rinfo) => this.onMessage(data, { host: rinfo.address, port: rinfo.port, transport: 'udp' }));
    udp.on('error', (err) => log.warn({ err }, 'SIP UDP socket error'));
    server.on('connection', (socket) => {
      socket.on('error', () => undefined); // a connection that breaks before its first byte is simply gone
      // One that says nothing at all is not kept open.
      socket.setTimeout(CONNECT_TIMEOUT_MS, () => socket.destroy());
      socket.once('data', (first: Buffer) => {
        socket.setTimeout(0);
        socket.pause();
        const tls = first[0] === TLS_HANDSHAKE;
        if (tls && !this.tlsServer) {
          log.warn({ from: socket.remoteAddress }, 'a TLS connection to the SIP port was refused: Dialer has no certificate (DIALER_SIP_TLS_CERT)');
          socket.destroy();
          return;
        }
        const peer = { host: socket.remoteAddress ?? '', port: socket.remotePort ?? 0, transport: tls ? ('tls' as const) : ('tcp' as const) };
        const stream = tls ? new TLSSocket(replaying(socket, first) as Socket, { isServer: true, secureContext: this.tlsServer! }) : socket;
        this.adopt(new StreamConnection(stream, peer, (data, from) => this.onMessage(data, from), (c) => this.forget(c), undefined));
        if (!tls) {
          socket.unshift(first);
          socket.resume();
        }
      });
    });
    server.on('error', (err) => log.warn({ err }, 'SIP TCP listener error'));
  }

  /**
   * Binds UDP and TCP on `host:port` (port 0: a free one, the same for both). `tlsCa`: PEM of more
   * CAs trusted for TLS trunks, besides the system's; `tlsIdentity`: Dialer's own certificate and
   * key (PEM), for TLS connections the far side opens.
   */
  static async open(options: { host: string; port: number; tlsCa?: string | undefined; tlsIdentity?: { cert: string; key: string } | undefined; log: Logger }): Promise<SipTransport> {
    const tlsServer = options.tlsIdentity ? createSecureContext(options.tlsIdentity) : undefined;
    for (let attempt = 1; ; attempt++) {
      const udp = createSocket('udp4');
      await listening(udp, (done) => udp.bind(options.port, options.host, done));
      const port = udp.address().port;
      const server = createServer();
      try {
        await listening(server, (done) => server.listen(port, options.host, done));
        return new SipTransport(udp, server, options.tlsCa, tlsServer, options.log);
      } catch (err) {
        udp.close();
        // A free UDP port may be taken for TCP: any free port will do when none was asked for.
        if (options.port !== 0 || attempt >= 5 || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
      }
    }
  }

  /** The port UDP and TCP listen on. */
  get port(): number {
    return this.udp.address().port;
  }

  /** Sends one message; rejects when it cannot leave (the connection could not be opened, the TLS certificate was refused). */
  async send(data: Buffer, to: Destination): Promise<void> {
    if (this.closed) return;
    if (!isReliable(to)) {
      await new Promise<void>((resolve, reject) => this.udp.send(data, to.port, to.host, (err) => (err ? reject(err) : resolve())));
      return;
    }
    const connection = to.connection && !to.connection.closed ? to.connection : this.connectionTo(to);
    await connection.write(data);
  }

  /** The open connection to `to`, or a new one. */
  private connectionTo(to: Destination): StreamConnection {
    const transport: 'tcp' | 'tls' = to.transport === 'tls' ? 'tls' : 'tcp';
    const existing = this.connections.get(key(transport, to.host, to.port));
    if (existing && !existing.closed) return existing;
    const peer = { host: to.host, port: to.port, transport };
    const socket =
      transport === 'tls'
        ? tlsConnect({
            host: to.host,
            port: to.port,
            // SNI carries names only; an address is checked against the certificate's IP entries.
            ...(isIP(to.host) ? {} : { servername: to.host }),
            rejectUnauthorized: true,
            ...(this.tlsCa ? { ca: [...rootCertificates, this.tlsCa] } : {}),
          })
        : tcpConnect({ host: to.host, port: to.port });
    const connection = new StreamConnection(socket, peer, (data, from) => this.onMessage(data, from), (c) => this.forget(c), transport === 'tls' ? 'secureConnect' : 'connect');
    this.adopt(connection);
    return connection;
  }

  private adopt(connection: StreamConnection): void {
    if (this.closed) return connection.close();
    this.connections.set(key(connection.peer.transport, connection.peer.host, connection.peer.port), connection);
  }

  private forget(connection: StreamConnection): void {
    const k = key(connection.peer.transport, connection.peer.host, connection.peer.port);
    if (this.connections.get(k) === connection) this.connections.delete(k);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const connection of [...this.connections.values()]) connection.close();
    this.connections.clear();
    await Promise.all([
      new Promise<void>((resolve) => this.udp.close(() => resolve())),
      new Promise<void>((resolve) => this.server.close(() => resolve())),
    ]);
  }
}

/**
 * The socket as a stream that gives `first` (already read, to tell TLS from plain SIP) again before
 * the rest: TLS over a socket itself would read past what was taken out of it.
 */
function replaying(socket: Socket, first: Buffer): Duplex {
  const stream = new Duplex({
    read: () => void socket.resume(),
    write: (chunk: Buffer, _encoding, done) => void socket.write(chunk, done),
    final: (done) => void socket.end(done),
    destroy: (err, done) => {
      socket.destroy();
      done(err);
    },
  });
  stream.push(first);
  socket.on('data', (chunk: Buffer) => {
    if (!stream.push(chunk)) socket.pause();
  });
  socket.on('end', () => stream.push(null));
  socket.on('close', () => stream.destroy());
  return stream;
}

function key(transport: TransportName, host: string, port: number): string {
  return `${transport} ${host} ${port}`;
}

/** Runs `start` and waits for its callback, or rejects with the socket's error. */
function listening(emitter: UdpSocket | Server, start: (done: () => void) => void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    emitter.once('error', reject);
    start(() => {
      emitter.off('error', reject);
      resolve();
    });
  });
}

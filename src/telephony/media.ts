/**
 * The one WebSocket endpoint every provider's media stream connects to:
 * `{prefix}/{provider}/media/{token}`. The token is the call session's secret, so a stream can
 * attach only to the call it was made for, once; anything else is refused before the upgrade.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { Logger } from '../lib/logger.js';
import type { Telephony } from './service.js';

const PATH = /^\/(provider_a|provider_b|provider_c)\/media\/([A-Za-z0-9_-]{16,128})$/;

function refuse(socket: Duplex, status: number, reason: string): void {
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

/** Serves media streams on `server` under `prefix`; returns a function that closes every stream. */
export function attachMediaServer(server: Server, prefix: string, telephony: Telephony, log: Logger): () => Promise<void> {
  const wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024, perMessageDeflate: false });
  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (!url.pathname.startsWith(`${prefix}/`)) return refuse(socket, 404, 'Not Found');
    const match = PATH.exec(url.pathname.slice(prefix.length));
    if (!match) return refuse(socket, 404, 'Not Found');
    const session = telephony.byTokenOrId(match[2], undefined);
    if (!session || session.kit.path !== match[1]) {
      log.warn({ path: match[1], ip: request.socket.remoteAddress }, 'media stream refused: unknown call token');
      return refuse(socket, 403, 'Forbidden');
    }
    wss.handleUpgrade(request, socket, head, (ws) => {
      if (!session.attach(ws, socket)) ws.close(4409, 'this call already has a media stream or is over');
    });
  };
  server.on('upgrade', onUpgrade);
  return async () => {
    server.off('upgrade', onUpgrade);
    for (const ws of wss.clients) ws.terminate();
    await new Promise<void>((resolve) => wss.close(() => resolve()));
  };
}

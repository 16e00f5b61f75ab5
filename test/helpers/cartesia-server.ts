/**
 * A local server speaking Cartesia's TTS WebSocket as its API reference gives it: `x-api-key` and
 * `cartesia-version` checked on the upgrade (401 otherwise); each generation request (`context_id`,
 * `model_id`, `transcript`, `voice`, `output_format` raw pcm_s16le) is answered with `chunk`
 * messages of base64 PCM (real speech of the transcript, from the local voice, in odd-sized
 * pieces) and `done`; several contexts may be under way on one socket. `{context_id, cancel: true}`
 * stops a context. A voice id `bad-voice` gets an `error` (status 400, done); `drop-socket` closes
 * the socket mid-stream.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { pcmToBytes } from '../../src/lib/audio.js';
import { synthesize } from '../../src/lib/speech.js';

export interface CartesiaServer {
  url: string;
  /** Sockets opened (upgrades accepted). */
  sockets: number;
  requests: Array<Record<string, any>>;
  cancels: string[];
  close(): Promise<void>;
}

export async function startCartesiaServer(apiKey: string): Promise<CartesiaServer> {
  const server = http.createServer((_q, r) => r.writeHead(404).end());
  const wss = new WebSocketServer({ noServer: true });
  const state: CartesiaServer = { url: '', sockets: 0, requests: [], cancels: [], close: async () => undefined };
  server.on('upgrade', (req, socket, head) => {
    if (new URL(req.url ?? '/', 'http://localhost').pathname !== '/tts/websocket') return void socket.end('HTTP/1.1 404 Not Found\r\n\r\n');
    if (req.headers['x-api-key'] !== apiKey || !req.headers['cartesia-version']) return void socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n');
    wss.handleUpgrade(req, socket, head, (ws) => {
      state.sockets++;
      ws.on('message', (data) => void handle(ws, JSON.parse(data.toString())));
    });
  });
  const cancelled = new Set<string>();
  async function handle(ws: WebSocket, m: Record<string, any>): Promise<void> {
    if (m.cancel) {
      state.cancels.push(m.context_id);
      cancelled.add(m.context_id);
      return;
    }
    state.requests.push(m);
    const send = (body: Record<string, unknown>) => ws.send(JSON.stringify({ context_id: m.context_id, ...body }));
    if (m.voice?.id === 'bad-voice') return send({ type: 'error', done: true, status_code: 400, error: 'Invalid voice: the voice was not found.' });
    const bytes = pcmToBytes(await synthesize(String(m.transcript), { sampleRateHz: m.output_format.sample_rate }));
    for (let at = 0, i = 0; at < bytes.length; i++) {
      if (cancelled.has(m.context_id) || ws.readyState !== ws.OPEN) return;
      if (m.voice?.id === 'drop-socket' && i === 2) return ws.terminate();
      const size = 3201 + (i % 3) * 1000; // odd sizes: samples split across messages
      send({ type: 'chunk', data: Buffer.from(bytes.subarray(at, at + size)).toString('base64'), done: false, status_code: 206, step_time: 12 });
      at += size;
      await new Promise((r) => setImmediate(r));
    }
    send({ type: 'done', done: true, status_code: 206 });
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = async () => {
    for (const c of wss.clients) c.terminate();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return state;
}

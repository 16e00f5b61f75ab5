/**
 * A local server speaking ElevenLabs' streaming-input WebSocket protocol: `xi-api-key` checked on the
 * upgrade, text messages in (the opening space, text with try_trigger_generation, "" to finish),
 * `audio` messages of base64 16 kHz PCM (real espeak-ng speech of the text) in odd-sized pieces, then
 * `isFinal: true`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { pcmToBytes } from '../../src/lib/audio.js';
import { synthesize } from '../../src/lib/speech.js';

export interface ElevenLabsServer {
  url: string;
  requests: Array<{ voice: string; query: Record<string, string>; messages: unknown[] }>;
  close(): Promise<void>;
}

export async function startElevenLabsServer(apiKey: string): Promise<ElevenLabsServer> {
  const server = http.createServer((_q, r) => r.writeHead(404).end());
  const wss = new WebSocketServer({ noServer: true });
  const state: ElevenLabsServer = { url: '', requests: [], close: async () => undefined };
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const m = /^\/v1\/text-to-speech\/([^/]+)\/stream-input$/.exec(url.pathname);
    if (!m) return void socket.end('HTTP/1.1 404 Not Found\r\n\r\n');
    if (req.headers['xi-api-key'] !== apiKey) return void socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n');
    wss.handleUpgrade(req, socket, head, (ws) => {
      const record = { voice: decodeURIComponent(m[1]!), query: Object.fromEntries(url.searchParams), messages: [] as unknown[] };
      state.requests.push(record);
      let text = '';
      ws.on('message', async (data) => {
        const msg = JSON.parse(data.toString()) as { text: string };
        record.messages.push(msg);
        if (msg.text !== '') return void (text += msg.text);
        const bytes = pcmToBytes(await synthesize(text.trim(), { sampleRateHz: 16000 }));
        for (let at = 0; at < bytes.length; at += 3001) ws.send(JSON.stringify({ audio: bytes.subarray(at, at + 3001).toString('base64'), isFinal: null, normalizedAlignment: null }));
        ws.send(JSON.stringify({ isFinal: true }));
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () =>
    new Promise<void>((r) => {
      for (const c of wss.clients) c.terminate();
      server.close(() => r());
    });
  return state;
}

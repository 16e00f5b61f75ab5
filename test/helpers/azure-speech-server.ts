/**
 * A local server speaking Azure Speech's two protocols as its references give them.
 *
 * Text-to-speech: `POST /cognitiveservices/v1` with `Ocp-Apim-Subscription-Key` (401 otherwise),
 * `Content-Type: application/ssml+xml`, `X-Microsoft-OutputFormat` (raw-16khz-16bit-mono-pcm or
 * raw-8khz-8bit-mono-mulaw; 400 otherwise) and a `User-Agent`; the SSML's `<voice name>` must be a
 * known voice (400 otherwise). The answer is the sentence's real speech (the local voice), headerless,
 * streamed in odd-sized pieces. Scripted: `throttle` answers the next N requests 429 with
 * Retry-After; `stall` leaves the next N unanswered; the voice `drop-connection` breaks the
 * connection mid-audio.
 *
 * Speech-to-text: the WebSocket at `/speech/recognition/conversation/cognitiveservices/v1`, the key
 * checked on the upgrade (401) and `X-ConnectionId` required (400). Messages are parsed by the
 * protocol's framing (text: header lines, blank line, body; binary: 2-byte big-endian header
 * length, header lines, body) and checked: `speech.config` first, every message with `Path`,
 * `X-RequestId` (32 hex digits, no dashes) and `X-Timestamp`, a turn's first audio with
 * `Content-Type` and a RIFF header (else closed with 1002 or 1007, as the service does). A new
 * request id gets `turn.start` and `speech.startDetected`; about every 200 ms of speech (not silence) a
 * `speech.hypothesis` with one more word of the scripted transcript; the empty audio message
 * `speech.endDetected`, `speech.phrase` (Success, the scripted DisplayText, Offset and Duration in
 * 100 ns units) and `turn.end`. `dropStreams` terminates the next N sockets on their first audio;
 * `unansweredEnds` leaves the next N ends of a turn's audio unanswered.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { bytesToPcm, encodeMulaw, pcmToBytes, rms } from '../../src/lib/audio.js';
import { synthesize } from '../../src/lib/speech.js';

export const AZURE_TTS_PATH = '/cognitiveservices/v1';
export const AZURE_STT_PATH = '/speech/recognition/conversation/cognitiveservices/v1';

export interface AzureSpeechServer {
  /** http://127.0.0.1:port: the TTS URL is `${url}${AZURE_TTS_PATH}`. */
  url: string;
  /** ws://127.0.0.1:port: the STT URL is `${wsUrl}${AZURE_STT_PATH}`. */
  wsUrl: string;
  voices: Set<string>;
  /** Each synthesis request: its headers and SSML. */
  ttsRequests: Array<{ headers: http.IncomingHttpHeaders; ssml: string; voice: string; text: string }>;
  throttle: number;
  stall: number;
  transcripts: string[];
  dropStreams: number;
  /** The next N ends of a turn's audio go unanswered. */
  unansweredEnds: number;
  /** Each socket: its query, upgrade headers, the messages it sent (audio as byte counts) and its turns. */
  streams: Array<{ query: Record<string, string>; headers: http.IncomingHttpHeaders; messages: Array<{ path: string; headers: Record<string, string>; body: unknown }>; turns: string[]; audioBytes: number; wavRates: number[] }>;
  close(): Promise<void>;
}

function parseHeaders(block: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of block.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return headers;
}

const unescapeXml = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');

export async function startAzureSpeechServer(apiKey: string): Promise<AzureSpeechServer> {
  const state: AzureSpeechServer = {
    url: '',
    wsUrl: '',
    voices: new Set(['en-US-JennyNeural', 'en-US-GuyNeural', 'es-ES-ElviraNeural', 'drop-connection']),
    ttsRequests: [],
    throttle: 0,
    stall: 0,
    transcripts: [],
    dropStreams: 0,
    unansweredEnds: 0,
    streams: [],
    close: async () => undefined,
  };
  const stalled = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== AZURE_TTS_PATH) return void res.writeHead(req.method === 'GET' ? 405 : 404).end();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => void tts(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  async function tts(req: http.IncomingMessage, res: http.ServerResponse, ssml: string): Promise<void> {
    const voice = /<voice[^>]*\sname=['"]([^'"]+)['"]/.exec(ssml)?.[1] ?? '';
    const text = unescapeXml(/<voice[^>]*>([\s\S]*?)<\/voice>/.exec(ssml)?.[1] ?? '');
    state.ttsRequests.push({ headers: req.headers, ssml, voice, text });
    if (req.headers['ocp-apim-subscription-key'] !== apiKey) return void res.writeHead(401).end();
    const format = req.headers['x-microsoft-outputformat'];
    if (req.headers['content-type'] !== 'application/ssml+xml' || !req.headers['user-agent'] || !/^<speak\b[^>]*xml:lang=/.test(ssml)) return void res.writeHead(400).end();
    if (format !== 'raw-16khz-16bit-mono-pcm' && format !== 'raw-8khz-8bit-mono-mulaw') return void res.writeHead(400).end();
    if (state.throttle > 0) {
      state.throttle--;
      return void res.writeHead(429, { 'retry-after': '1' }).end();
    }
    if (state.stall > 0) {
      state.stall--;
      stalled.add(res);
      return;
    }
    if (!state.voices.has(voice)) return void res.writeHead(400).end();
    const rate = format === 'raw-16khz-16bit-mono-pcm' ? 16000 : 8000;
    const pcm = await synthesize(text, { sampleRateHz: rate });
    const bytes = rate === 16000 ? pcmToBytes(pcm) : encodeMulaw(pcm);
    res.writeHead(200, { 'content-type': 'audio/x-wav', 'transfer-encoding': 'chunked' });
    for (let at = 0, i = 0; at < bytes.length; i++) {
      if (voice === 'drop-connection' && i === 2) return void res.socket?.destroy();
      const size = 3201 + (i % 3) * 1000;
      res.write(bytes.subarray(at, at + size));
      at += size;
      await new Promise((r) => setImmediate(r));
    }
    res.end();
  }

  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== AZURE_STT_PATH) return void socket.end('HTTP/1.1 404 Not Found\r\n\r\n');
    if (req.headers['ocp-apim-subscription-key'] !== apiKey) return void socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n');
    if (!/^[0-9a-f]{32}$/i.test(String(req.headers['x-connectionid'] ?? ''))) return void socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n');
    wss.handleUpgrade(req, socket, head, (ws) => stt(ws, req, url));
  });

  function stt(ws: WebSocket, req: http.IncomingMessage, url: URL): void {
    const stream = { query: Object.fromEntries(url.searchParams), headers: req.headers, messages: [] as AzureSpeechServer['streams'][number]['messages'], turns: [] as string[], audioBytes: 0, wavRates: [] as number[] };
    state.streams.push(stream);
    const drop = state.dropStreams > 0 && (state.dropStreams--, true);
    let configured = false;
    let turn: { id: string; bytes: number; sinceWord: number; words: number; rate: number } | undefined;
    const send = (path: string, id: string, body?: unknown) =>
      ws.send(`Path: ${path}\r\nX-RequestId: ${id}\r\n${body === undefined ? '' : 'Content-Type: application/json; charset=utf-8\r\n'}\r\n${body === undefined ? '' : JSON.stringify(body)}`);
    const words = () => (state.transcripts[0] ?? '').toLowerCase().replace(/[^a-z0-9' ]/g, '').split(' ').filter(Boolean);
    ws.on('message', (data: Buffer, isBinary) => {
      let headers: Record<string, string>;
      let body: Buffer | string;
      if (isBinary) {
        if (data.length < 2) return ws.close(1007, 'Incorrect message format. Binary message has invalid header size prefix.');
        const size = data.readUInt16BE(0);
        if (data.length < 2 + size) return ws.close(1007, 'Incorrect message format. Binary message has invalid header size.');
        headers = parseHeaders(data.subarray(2, 2 + size).toString('ascii'));
        body = data.subarray(2 + size);
      } else {
        const text = data.toString('utf8');
        const split = text.indexOf('\r\n\r\n');
        if (split < 0) return ws.close(1007, 'Incorrect message format. Text message contains no header separator.');
        headers = parseHeaders(text.slice(0, split));
        body = text.slice(split + 4);
      }
      for (const name of ['path', 'x-requestid', 'x-timestamp']) if (!headers[name]) return ws.close(1002, `Missing/Empty header. ${name}`);
      if (!/^[0-9a-f]{32}$/i.test(headers['x-requestid']!)) return ws.close(1002, 'Invalid request. X-RequestId header value was not specified in no-dash UUID format.');
      const path = headers.path!;
      stream.messages.push({ path, headers, body: typeof body === 'string' ? (body ? JSON.parse(body) : undefined) : body.length });
      if (path === 'speech.config') return void (configured = true);
      if (path === 'telemetry') return;
      if (path !== 'audio' || !isBinary || typeof body === 'string') return ws.close(1002, `Invalid request. Unknown path ${path}`);
      if (!configured) return ws.close(1002, 'Invalid request. speech.config must come first');
      const id = headers['x-requestid']!;
      if (turn?.id !== id) {
        if (stream.turns.includes(id)) return ws.close(1002, 'Invalid request. Reuse of request identifiers is not allowed.');
        if (headers['content-type'] !== 'audio/x-wav' || body.length < 44 || body.toString('ascii', 0, 4) !== 'RIFF' || body.toString('ascii', 8, 12) !== 'WAVE') {
          return ws.close(1007, 'Invalid audio format: the first audio message must start with a RIFF header');
        }
        if (drop) return ws.terminate();
        const rate = body.readUInt32LE(24);
        stream.wavRates.push(rate);
        stream.turns.push(id);
        turn = { id, bytes: 0, sinceWord: 0, words: 0, rate };
        send('turn.start', id, { context: { serviceTag: `tag${stream.turns.length}` } });
        send('speech.startDetected', id, { Offset: 0 });
        body = body.subarray(44);
      }
      if (body.length > 8192) return ws.close(1007, 'Audio chunk is larger than 8192 bytes');
      if (body.length > 0) {
        turn.bytes += body.length;
        // Words come with speech, not with the silence of the line between turns.
        if (rms(bytesToPcm(body)) > 300) turn.sinceWord += body.length;
        stream.audioBytes += body.length;
        if (turn.sinceWord >= turn.rate * 2 * 0.2 && turn.words < words().length) {
          turn.sinceWord = 0;
          turn.words++;
          send('speech.hypothesis', id, { Text: words().slice(0, turn.words).join(' '), Offset: 0, Duration: Math.round((turn.bytes / (turn.rate * 2)) * 1e7) });
        }
        return;
      }
      // The end of the turn's audio: its phrase, then the end of the turn.
      if (state.unansweredEnds > 0) return void state.unansweredEnds--;
      const duration = Math.round((turn.bytes / (turn.rate * 2)) * 1e7);
      send('speech.endDetected', id, { Offset: duration });
      const text = state.transcripts.shift();
      send('speech.phrase', id, text ? { RecognitionStatus: 'Success', DisplayText: text, Offset: 0, Duration: duration } : { RecognitionStatus: 'InitialSilenceTimeout', Offset: 0, Duration: duration });
      send('turn.end', id);
      turn = undefined;
    });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  state.url = `http://127.0.0.1:${port}`;
  state.wsUrl = `ws://127.0.0.1:${port}`;
  state.close = async () => {
    for (const c of wss.clients) c.terminate();
    for (const r of stalled) r.socket?.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return state;
}

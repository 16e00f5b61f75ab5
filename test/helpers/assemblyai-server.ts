/**
 * A local server speaking AssemblyAI's Universal-Streaming v3 WebSocket as its API reference gives
 * it: the key in `authorization` (a wrong one is closed with 1008 after the upgrade); `Begin` at
 * once; binary PCM in; while speech comes (audio louder than silence: a call streams its quiet too),
 * `Turn` messages with the turn's running `transcript` (`end_of_turn: false`); on `ForceEndpoint` the turn's end, first unformatted, then formatted
 * (`turn_is_formatted: true`) with the scripted transcript; on `Terminate`, `Termination` and a
 * 1000 close. Transcripts are scripted in order; with `language_detection=true` each turn's end
 * carries `language_code` (from `languages`, in order; `en` when none is scripted) and `language_confidence`.
 * Failures on demand: `dropAfterTurn` (a socket that breaks mid-call), `refuse` (an outage answering
 * the upgrade with an HTTP error status).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';

export interface AssemblyAiServer {
  url: string;
  transcripts: string[];
  /** The language of each detected turn, in order. */
  languages: string[];
  /** Each stream's query parameters and the audio bytes it sent. */
  streams: Array<{ query: Record<string, string>; audioBytes: number; messages: unknown[] }>;
  /** Close the stream with this code right after the end of a turn (a socket that breaks mid-call)... */
  dropAfterTurn?: number;
  /** ... and from then on answer every upgrade with this HTTP status (the outage goes on). */
  refuseAfterDrop?: number;
  /** Answer every upgrade with this HTTP status (503, 429) instead of the stream. */
  refuse?: number;
  close(): Promise<void>;
}

/** Whether a piece of 16-bit PCM holds speech rather than the quiet between words. */
function loud(bytes: Buffer): boolean {
  let sum = 0;
  const samples = Math.floor(bytes.length / 2);
  for (let i = 0; i < samples; i++) sum += bytes.readInt16LE(i * 2) ** 2;
  return samples > 0 && Math.sqrt(sum / samples) > 200;
}

export async function startAssemblyAiServer(apiKey: string): Promise<AssemblyAiServer> {
  const server = http.createServer((_q, r) => r.writeHead(404).end());
  const wss = new WebSocketServer({ noServer: true });
  const state: AssemblyAiServer = { url: '', transcripts: [], languages: [], streams: [], close: async () => undefined };
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== '/v3/ws') return void socket.end('HTTP/1.1 404 Not Found\r\n\r\n');
    if (state.refuse) return void socket.end(`HTTP/1.1 ${state.refuse} ${http.STATUS_CODES[state.refuse] ?? 'Error'}\r\nContent-Length: 0\r\n\r\n`);
    wss.handleUpgrade(req, socket, head, (ws) => {
      if (req.headers.authorization !== apiKey) return ws.close(1008, 'Unauthorized connection: Invalid API key');
      const stream = { query: Object.fromEntries(url.searchParams), audioBytes: 0, messages: [] as unknown[] };
      state.streams.push(stream);
      const send = (m: Record<string, unknown>) => ws.send(JSON.stringify(m));
      send({ type: 'Begin', id: `session-${state.streams.length}`, expires_at: Math.floor(Date.now() / 1000) + 600 });
      let turn = 0;
      let sinceWords = 0;
      const words = () => (state.transcripts[0] ?? '').toLowerCase().replace(/[^a-z0-9' ]/g, '').split(' ').filter(Boolean);
      let heard = 0;
      ws.on('message', (data, isBinary) => {
        if (isBinary) {
          const bytes = data as Buffer;
          stream.audioBytes += bytes.length;
          // About every 200 ms of speech, one more word of the turn.
          if (loud(bytes)) sinceWords += bytes.length;
          const every = Number(stream.query.sample_rate) * 2 * 0.2;
          if (sinceWords >= every && heard < words().length) {
            sinceWords = 0;
            heard++;
            send({ type: 'Turn', turn_order: turn, turn_is_formatted: false, end_of_turn: false, transcript: words().slice(0, heard).join(' '), end_of_turn_confidence: 0.1, words: [] });
          }
          return;
        }
        const m = JSON.parse(data.toString());
        stream.messages.push(m);
        if (m.type === 'ForceEndpoint') {
          const text = state.transcripts.shift() ?? '';
          const plain = text.toLowerCase().replace(/[^a-z0-9' ]/g, '');
          const wordList = plain.split(' ').filter(Boolean).map((w) => ({ text: w, confidence: 0.9, word_is_final: true }));
          const detected = stream.query.language_detection === 'true' ? { language_code: state.languages.shift() ?? 'en', language_confidence: 0.93 } : {};
          send({ type: 'Turn', turn_order: turn, turn_is_formatted: false, end_of_turn: true, transcript: plain, end_of_turn_confidence: 1, words: wordList, ...detected });
          send({ type: 'Turn', turn_order: turn, turn_is_formatted: true, end_of_turn: true, transcript: text, end_of_turn_confidence: 1, words: wordList, ...detected });
          turn++;
          heard = 0;
          if (state.dropAfterTurn) {
            ws.close(state.dropAfterTurn, 'internal error');
            if (state.refuseAfterDrop) state.refuse = state.refuseAfterDrop;
          }
        } else if (m.type === 'Terminate') {
          send({ type: 'Termination', audio_duration_seconds: stream.audioBytes / (Number(stream.query.sample_rate) * 2), session_duration_seconds: 1 });
          ws.close(1000);
        }
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = async () => {
    for (const c of wss.clients) c.terminate();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return state;
}

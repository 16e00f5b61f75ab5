/**
 * A local server speaking Deepgram's live transcription protocol: WebSocket `/v1/listen` with
 * `Authorization: Token <key>` (401 on the upgrade otherwise), binary linear16 audio in, `Results`
 * messages out (an interim once a segment has audio, the final on `Finalize` with
 * `from_finalize: true` and `speech_final`), `UtteranceEnd`, and a clean close on `CloseStream`.
 * Transcripts come from `transcripts`, one per finalized segment. Failures on demand: `failWith`,
 * `dropAfterFinal` (a socket that breaks mid-call) and `refuse` (an outage answering the upgrade
 * with an HTTP error status).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';

/**
 * What hears one stream, when the server is given one (benchmarks): it gets the stream's audio as
 * it arrives and sends `Results` messages of its own (build them with `results`); `Finalize`
 * asks it to finalise what it has heard.
 */
export interface StreamTranscriber {
  audio(pcm: Int16Array): void;
  finalize(): void;
  close(): void;
}

export interface DeepgramServerOptions {
  /** `query`: the stream's query parameters (`language=multi`: a multilingual stream, whose results name their languages). */
  transcriber?: (send: (message: string) => void, query: Record<string, string>) => StreamTranscriber;
  /** Stands in for the TCP and TLS handshakes of a distant service: the upgrade is answered this much later. */
  connectionSetupMs?: number;
}

export interface DeepgramServer {
  url: string;
  transcripts: string[];
  /** Query parameters of each stream opened. */
  streams: Array<Record<string, string>>;
  /** Bytes of audio received, per stream. */
  audioBytes: number[];
  /** Close the next stream with this code after its first audio (to test failures). */
  failWith?: number;
  /** Close the stream with this code right after it sends a segment's final (a socket that breaks mid-call). */
  dropAfterFinal?: number;
  /** Answer every upgrade with this HTTP status (an outage: 503, 429) instead of the stream. */
  refuse?: number;
  close(): Promise<void>;
}

/** `languages`: a multilingual (`language=multi`) stream's, the languages of the words. */
export function results(text: string, isFinal: boolean, extra: Record<string, unknown> = {}, languages?: string[]): string {
  return JSON.stringify({
    type: 'Results',
    channel_index: [0, 1],
    duration: 1.2,
    start: 0,
    is_final: isFinal,
    speech_final: isFinal,
    channel: { alternatives: [{ transcript: text, confidence: 0.98, words: [], ...(languages ? { languages } : {}) }] },
    metadata: { request_id: 'local', model_info: { name: 'nova-2' } },
    ...extra,
  });
}

export async function startDeepgramServer(apiKey: string, options: DeepgramServerOptions = {}): Promise<DeepgramServer> {
  const server = http.createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ noServer: true });
  const state: DeepgramServer = { url: '', transcripts: [], streams: [], audioBytes: [], close: async () => undefined };
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== '/v1/listen') return void socket.end('HTTP/1.1 404 Not Found\r\n\r\n');
    if (req.headers.authorization !== `Token ${apiKey}`) return void socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n');
    if (state.refuse) return void socket.end(`HTTP/1.1 ${state.refuse} ${http.STATUS_CODES[state.refuse] ?? 'Error'}\r\nContent-Length: 0\r\n\r\n`);
    const upgrade = () => wss.handleUpgrade(req, socket, head, (ws) => {
      const index = state.streams.push(Object.fromEntries(url.searchParams)) - 1;
      if (options.transcriber) {
        const transcriber = options.transcriber((message) => ws.readyState === ws.OPEN && ws.send(message), Object.fromEntries(url.searchParams));
        state.audioBytes[index] = 0;
        ws.on('message', (data, isBinary) => {
          if (isBinary) {
            const bytes = data as Buffer;
            state.audioBytes[index]! += bytes.length;
            const pcm = new Int16Array(bytes.length >> 1);
            for (let i = 0; i < pcm.length; i++) pcm[i] = bytes.readInt16LE(i * 2);
            transcriber.audio(pcm);
            return;
          }
          const m = JSON.parse(data.toString()) as { type: string };
          if (m.type === 'Finalize') transcriber.finalize();
          else if (m.type === 'CloseStream') ws.close(1000);
        });
        ws.on('close', () => transcriber.close());
        return;
      }
      state.audioBytes[index] = 0;
      let segmentBytes = 0;
      const fail = state.failWith;
      state.failWith = undefined;
      ws.on('message', (data, isBinary) => {
        if (isBinary) {
          const n = (data as Buffer).length;
          state.audioBytes[index]! += n;
          segmentBytes += n;
          if (fail) return void ws.close(fail, 'internal error');
          if (segmentBytes >= 16000 && segmentBytes - n < 16000) ws.send(results('…', false));
          return;
        }
        const m = JSON.parse(data.toString()) as { type: string };
        if (m.type === 'Finalize') {
          if (segmentBytes > 0) ws.send(results(state.transcripts.shift() ?? '', true, { from_finalize: true }));
          ws.send(JSON.stringify({ type: 'UtteranceEnd', channel: [0, 1], last_word_end: 1.1 }));
          segmentBytes = 0;
          if (state.dropAfterFinal) ws.close(state.dropAfterFinal, 'internal error');
        } else if (m.type === 'CloseStream') ws.close(1000);
      });
    });
    if (options.connectionSetupMs) setTimeout(upgrade, options.connectionSetupMs);
    else upgrade();
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

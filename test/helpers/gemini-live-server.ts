/**
 * A local server speaking Google's Gemini Live API (BidiGenerateContent over a WebSocket), for the
 * Gemini adapter's tests and `bench:turns`. Message names and shapes follow Google's published Live
 * API reference (the fixtures below are what it sends):
 * - the socket at `/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent`
 *   with the API key in the `key` query parameter; the first message must be `setup`, answered by
 *   `{setupComplete: {}}`; a wrong key closes the socket with 1007 and Google's reason, an unknown
 *   model with 1008, a message before `setup` with 1007;
 * - client messages taken: `setup`, `realtimeInput.audio` (`audio/pcm;rate=16000`, base64),
 *   `clientContent` (`turns`, `turnComplete`), `toolResponse.functionResponses`; every one but the
 *   audio is kept in `received`;
 * - automatic activity detection over the audio (energy in 20 ms frames): speech for 60 ms starts
 *   the caller's turn, which interrupts a reply still in its turn (`serverContent.interrupted`);
 *   500 ms of quiet ends it: the caller's words come as `serverContent.inputTranscription`
 *   (`transcriptionMs` after the end of their speech), then the model replies;
 * - a reply (to the caller's turn, to `clientContent` with `turnComplete`, or to a function's result)
 *   plays the next scripted one: its text in the local voice as `modelTurn` parts of
 *   `inlineData` `audio/pcm;rate=24000` in 100 ms pieces (faster than real time) with
 *   `outputTranscription` words, then `generationComplete`; `turnComplete` once that audio would
 *   have played out, as the service waits for the playback; function calls as
 *   `toolCall.functionCalls` (the model then waits for their `toolResponse`; the caller speaking
 *   first cancels them, `toolCallCancellation`, as for a blocking call); `usageMetadata` with
 *   `turnComplete`, `toolCall` and `interrupted`; or the socket closed
 *   with 1011 (`error`) or dropped (`drop`).
 *
 *   const live = await startGeminiLiveServer({ firstAudioMs: 300 });
 *   live.replies.push({ text: 'Hello Ana!' }, { tools: [{ name: 'confirm_order', arguments: { confirmed: true } }] });
 *   live.transcripts.push('Yes, please.');
 *   // DIALER_REALTIME_PROVIDER=gemini, DIALER_REALTIME_URL = live.url, DIALER_REALTIME_API_KEY = live.apiKey
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { bytesToPcm, pcmToBytes, rms } from '../../src/lib/audio.js';
import { speech, type RealtimePace, type RealtimeReply } from './realtime-server.js';

export interface GeminiLiveServer {
  url: string;
  apiKey: string;
  pace: RealtimePace;
  replies: RealtimeReply[];
  transcripts: string[];
  /** When `replies` is empty (benchmarks): `n` counts the connection's replies so far. */
  respond?: (n: number) => RealtimeReply;
  /** Client messages as received (audio left out), with the connection's number. */
  received: Array<{ connection: number; message: any }>;
  /** Per reply: when it began, when its first audio went (Date.now()), its audio and how it ended. */
  responses: Array<{ connection: number; createdAt: number; firstAudioAt?: number; audioMs: number; status?: 'completed' | 'interrupted' | 'tool_call' }>;
  /** How each connection ended: the close code the server sent, when it closed one. */
  closes: Array<{ connection: number; code: number }>;
  connections: number;
  /** Tells connection `n` it will soon be closed (`goAway`). */
  goAway(connection: number): void;
  close(): Promise<void>;
}

export const GEMINI_LIVE_PATH = '/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent';
export const BAD_KEY_REASON = 'API key not valid. Please pass a valid API key.';
const MODELS = /^models\/(gemini-[\w.-]+|bench-[\w.-]+)$/;

const FRAME_MS = 20;
const START_MS = 60;
const STOP_MS = 500;
const SPEECH_RMS = 300;
const INPUT_HZ = 16_000;
const OUTPUT_HZ = 24_000;

const wait = (ms: number | undefined) => (ms ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve());
let ids = 0;

export async function startGeminiLiveServer(pace: RealtimePace = {}, apiKey = 'gemini-test-key'): Promise<GeminiLiveServer> {
  const server = http.createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ server, path: GEMINI_LIVE_PATH });
  const sockets = new Map<number, WebSocket>();
  const state: GeminiLiveServer = {
    url: '',
    apiKey,
    pace,
    replies: [],
    transcripts: [],
    received: [],
    responses: [],
    closes: [],
    connections: 0,
    goAway: (n) => sockets.get(n)?.send(JSON.stringify({ goAway: { timeLeft: '10s' } })),
    close: async () => {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  wss.on('connection', (ws, req) => {
    const connection = state.connections++;
    sockets.set(connection, ws);
    const key = new URL(req.url ?? '/', 'http://x').searchParams.get('key');
    serve(ws, state, connection, key === apiKey);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}${GEMINI_LIVE_PATH}`;
  return state;
}

function serve(ws: WebSocket, state: GeminiLiveServer, connection: number, keyValid: boolean): void {
  const send = (message: Record<string, unknown>) => ws.readyState === ws.OPEN && ws.send(JSON.stringify(message));
  const shut = (code: number, reason: string) => {
    state.closes.push({ connection, code });
    ws.close(code, reason);
  };
  let setup: any;
  let speaking = false;
  let speechMs = 0;
  let quietMs = 0;
  let pending = new Int16Array(0);
  /** The reply in its turn (until `turnComplete`), which the caller's speech interrupts. */
  let current: { interrupted: boolean; done: boolean; usage: () => Record<string, unknown> } | undefined;
  let replies = 0;
  /** Function calls waiting for their `toolResponse` (blocking: the caller's next turn cancels them). */
  const waiting = new Set<string>();

  const frameHeard = (loud: boolean) => {
    if (loud) {
      speechMs += FRAME_MS;
      quietMs = 0;
      if (!speaking && speechMs >= START_MS) {
        speaking = true;
        if (waiting.size) {
          send({ toolCallCancellation: { ids: [...waiting] } });
          waiting.clear();
        }
        if (current && !current.done) {
          current.interrupted = true;
          send({ serverContent: { interrupted: true }, usageMetadata: current.usage() });
        }
      }
      return;
    }
    quietMs += FRAME_MS;
    if (!speaking) speechMs = 0;
    if (speaking && quietMs >= STOP_MS) {
      speaking = false;
      speechMs = 0;
      const transcript = state.transcripts.shift() ?? '';
      void wait(state.pace.transcriptionMs).then(() => {
        // The words come in pieces, as the service streams them.
        for (const piece of transcript.split(/(?<=\s)/)) if (piece) send({ serverContent: { inputTranscription: { text: piece } } });
        void respond();
      });
    }
  };

  const respond = async () => {
    const reply = state.replies.shift() ?? state.respond?.(replies) ?? { text: '' };
    replies++;
    if (reply.drop) return ws.terminate();
    if (reply.error) return shut(1011, reply.error.message);
    let outputTokens = 1;
    // What the reply has cost so far: the context it read and the tokens of its words.
    const usage = () => ({ promptTokenCount: 120, responseTokenCount: outputTokens, totalTokenCount: 120 + outputTokens, promptTokensDetails: [{ modality: 'AUDIO', tokenCount: 120 }] });
    const turn = { interrupted: false, done: false, usage };
    current = turn;
    const log: GeminiLiveServer['responses'][number] = { connection, createdAt: Date.now(), audioMs: 0 };
    state.responses.push(log);
    if (reply.text) {
      const [pcm] = await Promise.all([speech(reply.text, OUTPUT_HZ), wait(state.pace.firstAudioMs)]);
      const words = reply.text.split(/(?<=\s)/);
      const piece = OUTPUT_HZ / 10;
      const pieces = Math.ceil(pcm.length / piece);
      for (let i = 0; i < pieces && !turn.interrupted && ws.readyState === ws.OPEN; i++) {
        if (i === 0) log.firstAudioAt = Date.now();
        send({ serverContent: { modelTurn: { parts: [{ inlineData: { mimeType: `audio/pcm;rate=${OUTPUT_HZ}`, data: pcmToBytes(pcm.subarray(i * piece, (i + 1) * piece)).toString('base64') } }] } } });
        log.audioMs += 100;
        const said = words.slice(Math.ceil((i / pieces) * words.length), Math.ceil(((i + 1) / pieces) * words.length)).join('');
        if (said) {
          outputTokens += 1;
          send({ serverContent: { outputTranscription: { text: said } } });
        }
        if (i % 10 === 9) await wait(5);
      }
      if (!turn.interrupted) send({ serverContent: { generationComplete: true } });
      // The turn lasts as long as its audio plays out at the caller (from its first piece).
      const left = (log.firstAudioAt ?? Date.now()) + log.audioMs - Date.now();
      for (let waited = 0; waited < left && !turn.interrupted; waited += 20) await wait(20);
    }
    if (turn.interrupted) {
      turn.done = true;
      log.status = 'interrupted';
      return;
    }
    if (reply.tools?.length) {
      turn.done = true;
      log.status = 'tool_call';
      const functionCalls = reply.tools.map((t) => ({ id: `function-call-${++ids}`, name: t.name, args: t.arguments }));
      for (const call of functionCalls) waiting.add(call.id);
      return send({ toolCall: { functionCalls }, usageMetadata: usage() });
    }
    turn.done = true;
    log.status = 'completed';
    send({ serverContent: { turnComplete: true }, usageMetadata: usage() });
  };

  ws.on('message', (data) => {
    let message: any;
    try {
      message = JSON.parse(data.toString());
    } catch {
      return shut(1007, 'Invalid JSON payload received.');
    }
    if (message.realtimeInput?.audio) {
      if (!setup) return shut(1007, 'Request contains an invalid argument.');
      const audio = message.realtimeInput.audio;
      if (audio.mimeType !== `audio/pcm;rate=${INPUT_HZ}`) return shut(1007, `Unsupported audio mime type ${audio.mimeType}`);
      const pcm = bytesToPcm(Buffer.from(audio.data ?? '', 'base64'));
      const joined = new Int16Array(pending.length + pcm.length);
      joined.set(pending);
      joined.set(pcm, pending.length);
      const frame = (INPUT_HZ * FRAME_MS) / 1000;
      let at = 0;
      for (; at + frame <= joined.length; at += frame) frameHeard(rms(joined.subarray(at, at + frame)) > SPEECH_RMS);
      pending = joined.slice(at);
      return;
    }
    state.received.push({ connection, message });
    if (message.setup) {
      if (setup) return shut(1007, 'Request contains an invalid argument.');
      if (!keyValid) return shut(1007, BAD_KEY_REASON);
      if (!MODELS.test(message.setup.model ?? '')) return shut(1008, `${message.setup.model} is not found for API version v1beta, or is not supported for bidiGenerateContent.`);
      setup = message.setup;
      return send({ setupComplete: {} });
    }
    if (!setup) return shut(1007, 'Request contains an invalid argument.');
    if (message.clientContent) {
      if (message.clientContent.turnComplete) void respond();
      return;
    }
    if (message.toolResponse) {
      for (const r of message.toolResponse.functionResponses ?? []) waiting.delete(r.id);
      return void respond();
    }
    return shut(1007, 'Request contains an invalid argument.');
  });
}

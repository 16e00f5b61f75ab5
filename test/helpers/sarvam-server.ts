/**
 * A local server speaking Sarvam AI's speech APIs as their API reference gives them.
 *
 * Voice, `POST /text-to-speech`: the key in `api-subscription-key` (else 403
 * `invalid_api_key_error`); a JSON body with `text`, `target_language_code`, `speaker`, `model`,
 * `speech_sample_rate`, checked (an unknown speaker of the model, a language Bulbul does not speak:
 * 400 `invalid_request_error`); the answer `{request_id, audios: [base64 WAV]}` of real speech of
 * the text (the local voice) at the rate asked. `ttsFailures` scripts the next answers' statuses
 * (429 `rate_limit_exceeded_error`, 5xx `internal_server_error`); a text `drop the connection` has
 * its connection cut.
 *
 * Speech-to-text, WebSocket `/speech-to-text/ws`: the key in `api-subscription-key` (else the
 * upgrade is refused, 403 with the error body); `streamRefusals` scripts refusals of the next
 * upgrades. Audio comes as `{audio: {data, encoding, sample_rate}}`; with `vad_signals`, speech
 * (audio louder than silence) starts an utterance (`events` START_SPEECH); `{type: 'flush'}` ends it
 * (END_SPEECH) and answers `{type: 'data', data: {transcript, language_code, …}}` with the next
 * scripted transcript. `dropAfterAudio` cuts the next stream after that many audio messages.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { encodeWav, rms } from '../../src/lib/audio.js';
import { synthesize } from '../../src/lib/speech.js';

const SPEAKERS: Record<string, string[]> = {
  'bulbul:v2': ['anushka', 'manisha', 'vidya', 'arya', 'abhilash', 'karun', 'hitesh'],
  'bulbul:v3': ['shubh', 'aditya', 'ritu', 'priya', 'neha', 'rahul', 'pooja', 'rohan', 'simran', 'kavya'],
};
const LANGUAGES = ['bn-IN', 'en-IN', 'gu-IN', 'hi-IN', 'kn-IN', 'ml-IN', 'mr-IN', 'od-IN', 'pa-IN', 'ta-IN', 'te-IN'];
const RATES = [8000, 16000, 22050, 24000];
const CODES: Record<number, string> = { 400: 'invalid_request_error', 403: 'invalid_api_key_error', 429: 'rate_limit_exceeded_error', 500: 'internal_server_error', 503: 'rate_limit_exceeded_error' };

export interface SarvamServer {
  /** http://127.0.0.1:port: SARVAM_URL. */
  url: string;
  ttsRequests: Array<{ key: string | undefined; body: Record<string, any> }>;
  /** Statuses the next voice requests are answered with, in order, before they are served. */
  ttsFailures: number[];
  /** What the next utterances are heard as, in order. */
  transcripts: string[];
  /** Upgrades asked for (refused or not), with their query. */
  upgrades: Array<Record<string, string>>;
  /** Streams accepted: their query, audio bytes and messages other than audio (and each audio message's keys). */
  streams: Array<{ query: Record<string, string>; audioBytes: number; audioShape: unknown; messages: unknown[] }>;
  /** Statuses the next upgrades are refused with, in order. */
  streamRefusals: number[];
  /** Cut the next stream after this many audio messages. */
  dropAfterAudio: number | undefined;
  close(): Promise<void>;
}

const errorBody = (status: number, message: string) => JSON.stringify({ error: { message, code: CODES[status] ?? 'internal_server_error', request_id: `req_${Date.now()}` } });

export async function startSarvamServer(apiKey: string): Promise<SarvamServer> {
  const state: SarvamServer = { url: '', ttsRequests: [], ttsFailures: [], transcripts: [], upgrades: [], streams: [], streamRefusals: [], dropAfterAudio: undefined, close: async () => undefined };
  const server = http.createServer((req, res) => {
    const answer = (status: number, body: string) => res.writeHead(status, { 'content-type': 'application/json' }).end(body);
    if (req.method !== 'POST' || req.url !== '/text-to-speech') return answer(404, errorBody(404, 'Not found'));
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      void (async () => {
        const key = req.headers['api-subscription-key'] as string | undefined;
        const body = JSON.parse(raw || '{}') as Record<string, any>;
        state.ttsRequests.push({ key, body });
        if (key !== apiKey) return answer(403, errorBody(403, 'Invalid API key. Please check your API subscription key.'));
        const failure = state.ttsFailures.shift();
        if (failure) return answer(failure, errorBody(failure, failure === 429 ? 'Rate limit exceeded. Please try again later.' : 'Internal server error'));
        const model = body.model ?? 'bulbul:v2';
        if (typeof body.text !== 'string' || !body.text.trim()) return answer(400, errorBody(400, 'text must not be empty'));
        if (!SPEAKERS[model]) return answer(400, errorBody(400, `Invalid model: ${model}`));
        if (!LANGUAGES.includes(body.target_language_code)) return answer(400, errorBody(400, `Invalid target_language_code: ${body.target_language_code}`));
        if (!SPEAKERS[model]!.includes(body.speaker)) return answer(400, errorBody(400, `Speaker '${body.speaker}' is not compatible with model ${model}`));
        const rate = Number(body.speech_sample_rate ?? 22050);
        if (!RATES.includes(rate)) return answer(400, errorBody(400, `Invalid speech_sample_rate: ${body.speech_sample_rate}`));
        if (body.text === 'drop the connection') return void req.socket.destroy();
        const wav = encodeWav(await synthesize(body.text, { sampleRateHz: rate }), rate);
        answer(200, JSON.stringify({ request_id: `req_${state.ttsRequests.length}`, audios: [wav.toString('base64')] }));
      })();
    });
  });

  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== '/speech-to-text/ws') return void socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n');
    const query = Object.fromEntries(url.searchParams);
    state.upgrades.push(query);
    const refuse = (status: number, message: string) => {
      const body = errorBody(status, message);
      socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    };
    if (req.headers['api-subscription-key'] !== apiKey) return refuse(403, 'Invalid API key. Please check your API subscription key.');
    const refusal = state.streamRefusals.shift();
    if (refusal) return refuse(refusal, refusal === 429 ? 'Rate limit exceeded. Please try again later.' : 'Service unavailable');
    wss.handleUpgrade(req, socket, head, (ws) => {
      const stream = { query, audioBytes: 0, audioShape: undefined as unknown, messages: [] as unknown[] };
      state.streams.push(stream);
      const dropAfter = state.dropAfterAudio;
      state.dropAfterAudio = undefined;
      const send = (m: Record<string, unknown>) => ws.send(JSON.stringify(m));
      const signal = (signal_type: string) => query.vad_signals === 'true' && send({ type: 'events', data: { event_type: 'speech', signal_type, timestamp: new Date().toISOString(), occured_at: Date.now() / 1000 } });
      let audioMessages = 0;
      let speaking = false;
      let utteranceBytes = 0;
      ws.on('message', (data) => {
        const m = JSON.parse(data.toString()) as Record<string, any>;
        if (m.audio) {
          stream.audioShape ??= { keys: Object.keys(m).sort(), audio: Object.keys(m.audio).sort(), encoding: m.audio.encoding, sample_rate: m.audio.sample_rate };
          const bytes = Buffer.from(String(m.audio.data), 'base64');
          stream.audioBytes += bytes.length;
          utteranceBytes += bytes.length;
          const pcm = new Int16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length - (bytes.length % 2)));
          if (!speaking && rms(pcm) > 200) {
            speaking = true;
            signal('START_SPEECH');
          }
          if (dropAfter !== undefined && ++audioMessages >= dropAfter) ws.terminate();
          return;
        }
        stream.messages.push(m);
        if (m.type === 'flush') {
          if (speaking) signal('END_SPEECH');
          speaking = false;
          const transcript = state.transcripts.shift() ?? '';
          const seconds = utteranceBytes / 2 / Number(query.sample_rate ?? 16000);
          utteranceBytes = 0;
          send({
            type: 'data',
            data: {
              request_id: `req_${state.streams.length}`,
              transcript,
              timestamps: null,
              diarized_transcript: null,
              language_code: query['language-code'] === 'unknown' ? 'hi-IN' : query['language-code'],
              language_probability: 0.93,
              metrics: { audio_duration: seconds, processing_latency: 0.05 },
            },
          });
        }
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = async () => {
    for (const c of wss.clients) c.terminate();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return state;
}

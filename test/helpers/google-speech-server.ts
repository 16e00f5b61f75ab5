/**
 * A local server speaking Google Cloud's Text-to-Speech and Speech-to-Text v1 REST APIs as their
 * references give them, the API key in `x-goog-api-key`. A wrong key is answered as Google does:
 * 400 INVALID_ARGUMENT "API key not valid", with an ErrorInfo of reason API_KEY_INVALID.
 *
 * - `POST /v1/text:synthesize`: `input.text`, `voice.languageCode` and `voice.name` (a voice it does
 *   not know, or one whose language is not the languageCode: 400 INVALID_ARGUMENT), `audioConfig`
 *   (`audioEncoding` LINEAR16 or MULAW, `sampleRateHertz`); the answer `{audioContent}`: the text's
 *   real speech (the local voice) as a base64 WAV, its header included.
 * - `POST /v1/speech:recognize`: `config` (`encoding` LINEAR16, `sampleRateHertz`, `languageCode`)
 *   and `audio.content` (base64); the answer `{results: [{alternatives: [{transcript, confidence}],
 *   resultEndTime, languageCode}], totalBilledTime, requestId}` with the next scripted transcript
 *   split in two results, or `{}` when none is scripted.
 *
 * Scripted for both: `throttle` answers the next N requests 429 RESOURCE_EXHAUSTED; `drop` breaks
 * the next N connections without an answer.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { encodeMulaw, encodeWav } from '../../src/lib/audio.js';
import { synthesize } from '../../src/lib/speech.js';

export interface GoogleSpeechServer {
  /** http://127.0.0.1:port/v1 */
  url: string;
  voices: Set<string>;
  ttsRequests: Array<Record<string, any>>;
  /** Each recognize request, its audio as a byte count. */
  sttRequests: Array<{ config: Record<string, any>; audioBytes: number }>;
  transcripts: string[];
  throttle: number;
  drop: number;
  close(): Promise<void>;
}

function error(res: http.ServerResponse, code: number, status: string, message: string, details: unknown[] = []): void {
  res.writeHead(code, { 'content-type': 'application/json; charset=UTF-8' }).end(JSON.stringify({ error: { code, message, status, ...(details.length ? { details } : {}) } }));
}

export async function startGoogleSpeechServer(apiKey: string): Promise<GoogleSpeechServer> {
  const state: GoogleSpeechServer = {
    url: '',
    voices: new Set(['en-US-Neural2-F', 'en-US-Neural2-J', 'es-ES-Neural2-A']),
    ttsRequests: [],
    sttRequests: [],
    transcripts: [],
    throttle: 0,
    drop: 0,
    close: async () => undefined,
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => void handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  async function handle(req: http.IncomingMessage, res: http.ServerResponse, raw: string): Promise<void> {
    const route = `${req.method} ${new URL(req.url ?? '/', 'http://localhost').pathname}`;
    if (route !== 'POST /v1/text:synthesize' && route !== 'POST /v1/speech:recognize') return error(res, 404, 'NOT_FOUND', 'Not found');
    if (req.headers['x-goog-api-key'] !== apiKey) {
      return error(res, 400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' }]);
    }
    if (state.drop > 0) {
      state.drop--;
      return void req.socket.destroy();
    }
    if (state.throttle > 0) {
      state.throttle--;
      return error(res, 429, 'RESOURCE_EXHAUSTED', 'Quota exceeded for quota metric \'Requests\' and limit \'Requests per minute\'.');
    }
    let body: Record<string, any>;
    try {
      body = JSON.parse(raw);
    } catch {
      return error(res, 400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.');
    }
    if (route === 'POST /v1/text:synthesize') {
      state.ttsRequests.push(body);
      const { input, voice, audioConfig } = body;
      if (typeof input?.text !== 'string' || !voice?.languageCode) return error(res, 400, 'INVALID_ARGUMENT', 'input.text and voice.language_code are required.');
      if (voice.name && (!state.voices.has(voice.name) || !String(voice.name).startsWith(voice.languageCode))) {
        return error(res, 400, 'INVALID_ARGUMENT', `Voice '${voice.name}' does not exist. Is it misspelled?`);
      }
      if (audioConfig?.audioEncoding !== 'LINEAR16' && audioConfig?.audioEncoding !== 'MULAW') return error(res, 400, 'INVALID_ARGUMENT', 'Unsupported audio_encoding.');
      const rate = Number(audioConfig.sampleRateHertz ?? 24000);
      const pcm = await synthesize(input.text, { sampleRateHz: rate });
      const audio = audioConfig.audioEncoding === 'LINEAR16' ? encodeWav(pcm, rate) : encodeMulaw(pcm);
      res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' }).end(JSON.stringify({ audioContent: audio.toString('base64') }));
      return;
    }
    const { config, audio } = body;
    const bytes = Buffer.from(String(audio?.content ?? ''), 'base64');
    state.sttRequests.push({ config, audioBytes: bytes.length });
    if (config?.encoding !== 'LINEAR16' || !config?.languageCode || !(config?.sampleRateHertz >= 8000)) {
      return error(res, 400, 'INVALID_ARGUMENT', 'Invalid recognition \'config\': bad encoding, sample rate or language.');
    }
    const text = state.transcripts.shift();
    const seconds = bytes.length / (config.sampleRateHertz * 2);
    if (!text) return void res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' }).end(JSON.stringify({ totalBilledTime: `${Math.ceil(seconds)}s`, requestId: '1' }));
    const words = text.split(' ');
    const half = Math.ceil(words.length / 2);
    const parts = [words.slice(0, half).join(' '), words.slice(half).join(' ')].filter(Boolean);
    res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' }).end(
      JSON.stringify({
        results: parts.map((transcript, i) => ({
          alternatives: [{ transcript: i > 0 ? ` ${transcript}` : transcript, confidence: i === 0 ? 0.92 : 0.88 }],
          resultEndTime: `${(((i + 1) * seconds) / parts.length).toFixed(3)}s`,
          languageCode: String(config.languageCode).toLowerCase(),
        })),
        totalBilledTime: `${Math.ceil(seconds)}s`,
        requestId: String(state.sttRequests.length),
      }),
    );
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  state.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return state;
}

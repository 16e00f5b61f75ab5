/**
 * A local server speaking the OpenAI HTTP API byte for byte, for the voice engine's tests:
 * - POST /v1/chat/completions with `stream: true`: server-sent events of `chat.completion.chunk`
 *   objects (text deltas, tool-call deltas split across chunks, a usage chunk, `data: [DONE]`);
 * - POST /v1/audio/transcriptions: multipart with a WAV `file`; answers `{"text": ...}` (with
 *   `response_format: verbose_json`, Whisper's verbose answer: the language it heard by name too);
 * - POST /v1/audio/speech with `response_format: "pcm"`: 24 kHz 16-bit mono speech of the input
 *   (espeak-ng, synthesised once per text), streamed in chunks;
 * - POST /v1/embeddings: `{ object: 'list', data: [{ index, embedding }], usage }` of localEmbedding
 *   (a hashed bag of meanings), or OpenAI's error body.
 * Replies come from scripts (in order) or from functions of the request; every request is kept.
 *
 *   const ai = await startOpenAIServer();
 *   ai.chat.push({ text: 'Hello Ana!' }, { tools: [{ name: 'confirm_order', arguments: { confirmed: true } }] });
 *   ai.transcripts.push('Yes, please confirm it.');
 *   // LLM_BASE_URL = STT_BASE_URL = ai.url
 */
import http from 'node:http';
import { decodeWav, pcmToBytes } from '../../src/lib/audio.js';
import { synthesize } from '../../src/lib/speech.js';
import type { AddressInfo } from 'node:net';

export type ChatReply = {
  text?: string;
  tools?: Array<{ name: string; arguments: unknown }>;
  status?: number;
  error?: string;
  /** Wait this long before answering at all (a slow provider). */
  stallMs?: number;
  /** Send a chunk that is not JSON after the first one. */
  malformed?: boolean;
  /** Cut the connection after the first text chunk. */
  cut?: boolean;
  /** Send the first text chunk, then nothing more for this long (a provider that hangs mid-answer). */
  hangAfterFirstMs?: number;
};

/**
 * A provider's pace, for benchmarks (default: everything at once). Times are from the request's
 * arrival; `connectionSetupMs` stands in for the TCP and TLS handshakes of a distant service, paid
 * once per new connection (a kept-alive connection pays nothing).
 */
export interface ServicePace {
  /** Chat: the first streamed piece of text (or tool call) after this long. */
  firstTokenMs?: number;
  /** Chat: then one word (with its space) every this many ms. */
  wordIntervalMs?: number;
  /** Speech: the first audio after this long, the rest at `speechSpeedup` times real time. */
  speechFirstAudioMs?: number;
  speechSpeedup?: number;
  connectionSetupMs?: number;
}

/** One chat request as the server saw it (times are Date.now()). */
export interface ChatLog {
  body: any;
  headers: http.IncomingHttpHeaders;
  at: number;
  firstTokenAt?: number;
  /** Pieces of text and tool calls streamed before the end or the client's cancel. */
  chunks: number;
  /** The client closed the stream before the reply was complete. */
  cancelled: boolean;
  reply?: ChatReply;
}

export interface SpeechLog {
  input: string;
  voice?: string;
  at: number;
  firstAudioAt?: number;
}

export interface OpenAIServer {
  url: string;
  pace: ServicePace;
  /** Connections opened to the server so far. */
  connections: number;
  chat: ChatReply[];
  /** One per transcribed segment; `language`: what Whisper names as heard ("spanish"), in a verbose answer. */
  transcripts: Array<string | { text: string; language: string }>;
  /** When the scripts are empty: computes the reply from the request (benchmarks). */
  respond?: (body: { messages: Array<{ role: string; content: unknown }> }) => ChatReply;
  transcribe?: () => string;
  chatRequests: ChatLog[];
  speechRequests: SpeechLog[];
  transcriptionRequests: Array<{ bytes: number; model: string | undefined; language: string | undefined; responseFormat: string | undefined; sampleRateHz: number; seconds: number }>;
  /** POST /v1/embeddings requests (answered with localEmbedding's vectors). */
  embeddingRequests: Array<{ model: string; input: string[] }>;
  /** Set: /v1/embeddings answers this HTTP status with OpenAI's error body. */
  embeddingsFailWith?: number;
  close(): Promise<void>;
}

function sse(res: http.ServerResponse, chunk: unknown): void {
  res.write(`data: ${JSON.stringify(chunk)}\n\n`);
}

function chunk(id: string, model: string, delta: unknown, finish: string | null = null) {
  return { id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model, choices: [{ index: 0, delta, finish_reason: finish }] };
}

/** The named multipart field's raw bytes and the text fields. */
function multipart(body: Buffer, type: string): { file?: Buffer; fields: Record<string, string> } {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(type);
  const fields: Record<string, string> = {};
  if (!boundary) return { fields };
  const marker = Buffer.from(`--${boundary[1] ?? boundary[2]}`);
  let file: Buffer | undefined;
  let at = body.indexOf(marker);
  while (at >= 0) {
    const next = body.indexOf(marker, at + marker.length);
    if (next < 0) break;
    const part = body.subarray(at + marker.length + 2, next - 2);
    const split = part.indexOf('\r\n\r\n');
    const head = part.subarray(0, split).toString();
    const content = part.subarray(split + 4);
    const name = /name="([^"]+)"/.exec(head)?.[1];
    if (name === 'file') file = content;
    else if (name) fields[name] = content.toString();
    at = next;
  }
  return { file, fields };
}

/** Words the local embeddings model takes as one meaning (a paraphrase shares them, not its words). */
const MEANINGS: Record<string, string> = {
  guarantee: 'warranty', guaranteed: 'warranty', warranty: 'warranty', covered: 'warranty', cover: 'warranty',
  lamp: 'lamp', light: 'lamp', lantern: 'lamp',
  long: 'duration', year: 'duration', years: 'duration',
};
const STOP_WORDS = new Set(['a', 'an', 'and', 'are', 'at', 'be', 'by', 'for', 'from', 'how', 'in', 'is', 'it', 'my', 'of', 'on', 'the', 'to', 'will', 'what', 'which']);
export const EMBEDDING_DIMENSIONS = 64;

/**
 * The local embeddings model: a hashed bag of meanings, unit length. Words are lower-cased, a
 * plural's s dropped, stop words left out, and words of one meaning (MEANINGS) counted as one, so
 * "How long will my light be covered?" lands near "The lamp is guaranteed for seven years".
 */
export function localEmbedding(text: string): number[] {
  const v = new Array<number>(EMBEDDING_DIMENSIONS).fill(0);
  for (const raw of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    if (STOP_WORDS.has(raw)) continue;
    const word = MEANINGS[raw] ?? MEANINGS[raw.replace(/s$/, '')] ?? raw.replace(/s$/, '');
    let h = 2166136261;
    for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 16777619) >>> 0;
    v[h % EMBEDDING_DIMENSIONS]! += h & 0x80000000 ? -1 : 1;
  }
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

const wait = (ms: number | undefined) => (ms ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve());

export async function startOpenAIServer(pace: ServicePace = {}): Promise<OpenAIServer> {
  const state = {
    chat: [] as ChatReply[],
    transcripts: [] as OpenAIServer['transcripts'],
    chatRequests: [] as ChatLog[],
    speechRequests: [] as SpeechLog[],
    transcriptionRequests: [] as OpenAIServer['transcriptionRequests'],
    embeddingRequests: [] as OpenAIServer['embeddingRequests'],
  };
  let seq = 0;
  const voices = new Map<string, Promise<Int16Array>>();
  /** Sockets that have not yet answered a request: their first answer pays the connection setup. */
  const fresh = new WeakSet<object>();
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', async () => {
      if (fresh.has(req.socket)) {
        fresh.delete(req.socket);
        await wait(api.pace.connectionSetupMs);
      }
      const body = Buffer.concat(parts);
      if (req.method === 'GET' && req.url === '/v1/models') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id: 'local', object: 'model', owned_by: 'dialer-tests' }] }));
        return;
      }
      if (req.url === '/v1/chat/completions') {
        const json = JSON.parse(body.toString());
        const log: ChatLog = { body: json, headers: req.headers, at: Date.now(), chunks: 0, cancelled: false };
        state.chatRequests.push(log);
        const reply = state.chat.shift() ?? api.respond?.(json) ?? { text: 'Okay.' };
        log.reply = reply;
        let closed = false;
        res.on('close', () => {
          closed = true;
          if (!res.writableFinished) log.cancelled = true;
        });
        if (reply.stallMs) {
          const timer = setTimeout(() => res.writeHead(200).end(), reply.stallMs);
          res.on('close', () => clearTimeout(timer));
          return;
        }
        if (reply.status) {
          res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: reply.error ?? 'failed', type: 'server_error', code: null } }));
          return;
        }
        const id = `chatcmpl-${++seq}`;
        const model = json.model;
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        sse(res, chunk(id, model, { role: 'assistant', content: '' }));
        if (reply.malformed) return void res.end('data: {"choices": [oops\n\n');
        if (reply.cut) {
          sse(res, chunk(id, model, { content: 'Hel' }));
          // Let the first chunk reach the client, then drop the connection mid-stream.
          return void setTimeout(() => res.destroy(), 50);
        }
        if (reply.hangAfterFirstMs) {
          sse(res, chunk(id, model, { content: 'Hel' }));
          const timer = setTimeout(() => res.end('data: [DONE]\n\n'), reply.hangAfterFirstMs);
          return void res.on('close', () => clearTimeout(timer));
        }
        const paced = api.pace.firstTokenMs !== undefined || api.pace.wordIntervalMs !== undefined;
        const piece = async (delta: unknown, first: boolean) => {
          if (paced) await wait(first ? api.pace.firstTokenMs : api.pace.wordIntervalMs);
          if (closed) return;
          log.firstTokenAt ??= Date.now();
          log.chunks++;
          sse(res, chunk(id, model, delta));
        };
        let first = true;
        for (const word of reply.text ? reply.text.split(/(?<= )/) : []) {
          await piece({ content: word }, first);
          first = false;
        }
        const tools = reply.tools ?? [];
        for (const [index, t] of tools.entries()) {
          const args = JSON.stringify(t.arguments);
          const half = Math.floor(args.length / 2);
          await piece({ tool_calls: [{ index, id: `call_${seq}_${index}`, type: 'function', function: { name: t.name, arguments: '' } }] }, first);
          first = false;
          sse(res, chunk(id, model, { tool_calls: [{ index, function: { arguments: args.slice(0, half) } }] }));
          sse(res, chunk(id, model, { tool_calls: [{ index, function: { arguments: args.slice(half) } }] }));
        }
        if (closed) return;
        sse(res, chunk(id, model, {}, tools.length ? 'tool_calls' : 'stop'));
        const completion = Math.max(1, log.chunks);
        const prompt = Math.ceil(JSON.stringify(json.messages ?? []).length / 4);
        sse(res, { id, object: 'chat.completion.chunk', created: 0, model, choices: [], usage: { prompt_tokens: paced ? prompt : 100, completion_tokens: paced ? completion : 20, total_tokens: paced ? prompt + completion : 120 } });
        res.end('data: [DONE]\n\n');
        return;
      }
      if (req.method === 'POST' && req.url === '/v1/embeddings') {
        const json = JSON.parse(body.toString()) as { model?: unknown; input?: unknown };
        const input = typeof json.input === 'string' ? [json.input] : json.input;
        const fail = (status: number, message: string) => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code: null } }));
        if (api.embeddingsFailWith) return fail(api.embeddingsFailWith, 'The embeddings service is unavailable');
        if (typeof json.model !== 'string' || !Array.isArray(input) || input.length === 0 || !input.every((i) => typeof i === 'string')) return fail(400, "'input' must be a string or an array of strings, and 'model' a string");
        state.embeddingRequests.push({ model: json.model, input: input as string[] });
        const data = (input as string[]).map((text, index) => ({ object: 'embedding', index, embedding: localEmbedding(text) }));
        const tokens = (input as string[]).reduce((n, text) => n + text.split(/\s+/).length, 0);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data, model: json.model, usage: { prompt_tokens: tokens, total_tokens: tokens } }));
        return;
      }
      if (req.url === '/v1/audio/speech') {
        const { input, response_format, voice } = JSON.parse(body.toString());
        if (response_format !== 'pcm') return void res.writeHead(400).end();
        const log: SpeechLog = { input: String(input), voice, at: Date.now() };
        state.speechRequests.push(log);
        let pcm = voices.get(input);
        if (!pcm) voices.set(input, (pcm = synthesize(String(input), { sampleRateHz: 24000 })));
        const [audio] = await Promise.all([pcm, wait(api.pace.speechFirstAudioMs)]);
        const bytes = pcmToBytes(audio);
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        // Chunks of odd sizes (about 100 ms of audio each), as a network delivers them.
        const size = 4801;
        for (let at = 0; at < bytes.length && !res.destroyed; at += size) {
          if (at > 0 && api.pace.speechSpeedup) await wait(100 / api.pace.speechSpeedup);
          log.firstAudioAt ??= Date.now();
          res.write(bytes.subarray(at, at + size));
        }
        res.end();
        return;
      }
      if (req.url === '/v1/audio/transcriptions') {
        const { file, fields } = multipart(body, String(req.headers['content-type'] ?? ''));
        if (!file || file.subarray(0, 4).toString() !== 'RIFF') {
          res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'file must be audio' } }));
          return;
        }
        const wav = decodeWav(file);
        const seconds = wav.pcm.length / wav.sampleRateHz;
        state.transcriptionRequests.push({ bytes: file.length, model: fields.model, language: fields.language, responseFormat: fields.response_format, sampleRateHz: wav.sampleRateHz, seconds });
        const next = state.transcripts.shift() ?? api.transcribe?.() ?? '';
        const heard = typeof next === 'string' ? { text: next, language: 'english' } : next;
        const answer = fields.response_format === 'verbose_json' ? { task: 'transcribe', language: heard.language, duration: seconds, text: heard.text, segments: [] } : { text: heard.text };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
        return;
      }
      res.writeHead(404).end();
    });
  });
  server.on('connection', (socket) => {
    fresh.add(socket);
    api.connections++;
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const api: OpenAIServer = {
    ...state,
    pace,
    connections: 0,
    get chat() {
      return state.chat;
    },
    get transcripts() {
      return state.transcripts;
    },
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  return api;
}

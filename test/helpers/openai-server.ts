/**
 * A local server speaking the OpenAI HTTP API byte for byte, for the voice engine's tests:
 * - POST /v1/chat/completions with `stream: true`: server-sent events of `chat.completion.chunk`
 *   objects (text deltas, tool-call deltas split across chunks, a usage chunk, `data: [DONE]`);
 * - POST /v1/audio/transcriptions: multipart with a WAV `file`; answers `{"text": ...}`;
 * - POST /v1/audio/speech with `response_format: "pcm"`: 24 kHz 16-bit mono speech of the input
 *   (espeak-ng, synthesised once per text), streamed in chunks.
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
};

export interface OpenAIServer {
  url: string;
  chat: ChatReply[];
  transcripts: string[];
  /** When the scripts are empty: computes the reply from the request (benchmarks). */
  respond?: (body: { messages: Array<{ role: string; content: unknown }> }) => ChatReply;
  transcribe?: () => string;
  chatRequests: Array<{ body: any; headers: http.IncomingHttpHeaders }>;
  transcriptionRequests: Array<{ bytes: number; model: string | undefined; sampleRateHz: number; seconds: number }>;
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

export async function startOpenAIServer(): Promise<OpenAIServer> {
  const state: Omit<OpenAIServer, 'url' | 'close'> = { chat: [], transcripts: [], chatRequests: [], transcriptionRequests: [] };
  let seq = 0;
  const voices = new Map<string, Promise<Int16Array>>();
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = Buffer.concat(parts);
      if (req.url === '/v1/chat/completions') {
        const json = JSON.parse(body.toString());
        state.chatRequests.push({ body: json, headers: req.headers });
        const reply = state.chat.shift() ?? api.respond?.(json) ?? { text: 'Okay.' };
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
        if (reply.text) for (const word of reply.text.split(/(?<= )/)) sse(res, chunk(id, model, { content: word }));
        (reply.tools ?? []).forEach((t, index) => {
          const args = JSON.stringify(t.arguments);
          const half = Math.floor(args.length / 2);
          sse(res, chunk(id, model, { tool_calls: [{ index, id: `call_${seq}_${index}`, type: 'function', function: { name: t.name, arguments: '' } }] }));
          sse(res, chunk(id, model, { tool_calls: [{ index, function: { arguments: args.slice(0, half) } }] }));
          sse(res, chunk(id, model, { tool_calls: [{ index, function: { arguments: args.slice(half) } }] }));
        });
        sse(res, chunk(id, model, {}, reply.tools?.length ? 'tool_calls' : 'stop'));
        sse(res, { id, object: 'chat.completion.chunk', created: 0, model, choices: [], usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 } });
        res.end('data: [DONE]\n\n');
        return;
      }
      if (req.url === '/v1/audio/speech') {
        const { input, response_format } = JSON.parse(body.toString());
        if (response_format !== 'pcm') return void res.writeHead(400).end();
        let pcm = voices.get(input);
        if (!pcm) voices.set(input, (pcm = synthesize(String(input), { sampleRateHz: 24000 })));
        void pcm.then((audio) => {
          const bytes = pcmToBytes(audio);
          res.writeHead(200, { 'content-type': 'application/octet-stream' });
          // Chunks of odd sizes, as a network delivers them.
          for (let at = 0; at < bytes.length; at += 4801) res.write(bytes.subarray(at, at + 4801));
          res.end();
        });
        return;
      }
      if (req.url === '/v1/audio/transcriptions') {
        const { file, fields } = multipart(body, String(req.headers['content-type'] ?? ''));
        if (!file || file.subarray(0, 4).toString() !== 'RIFF') {
          res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'file must be audio' } }));
          return;
        }
        const wav = decodeWav(file);
        state.transcriptionRequests.push({ bytes: file.length, model: fields.model, sampleRateHz: wav.sampleRateHz, seconds: wav.pcm.length / wav.sampleRateHz });
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ text: state.transcripts.shift() ?? api.transcribe?.() ?? '' }));
        return;
      }
      res.writeHead(404).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const api: OpenAIServer = {
    ...state,
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

/**
 * A local server speaking the OpenAI Realtime API's WebSocket protocol, for the realtime agent's
 * tests and `bench:turns`. Event names and shapes follow OpenAI's published Realtime reference (the
 * beta event names; the fixtures below are what it sends):
 * - client events taken: `session.update`, `input_audio_buffer.append` (`g711_ulaw` or `pcm16`
 *   at 24 kHz, as the session says), `response.create`, `conversation.item.create`,
 *   `conversation.item.truncate`; every one but the audio is kept in `received`;
 * - server voice activity detection over the appended audio (energy in 20 ms frames): speech for
 *   60 ms starts a turn (`input_audio_buffer.speech_started`, and a response in progress is cut:
 *   `response.done` with status `cancelled`), 500 ms of quiet ends it (`speech_stopped`,
 *   `committed`, `conversation.item.created`), then a response starts by itself and the caller's
 *   words come as `conversation.item.input_audio_transcription.completed`;
 * - a response plays the next scripted reply: function calls (`response.function_call_arguments.done`),
 *   speech of its text in the local voice (`response.audio.delta` in 100 ms pieces, faster than
 *   real time, with `response.audio_transcript.delta` words), `response.done` with `usage`; or an
 *   `error` event; or the socket dropped.
 * - a `session.update` that sets `voice` once the model has spoken audio in the session is refused
 *   whole, as the API refuses it: an `error` event with code `cannot_update_voice`.
 * Latencies are fixed: `firstAudioMs` from the response's start to its first audio (each text is
 * synthesised once), `transcriptionMs` from the end of the caller's speech to their words.
 *
 *   const rt = await startRealtimeServer({ firstAudioMs: 300 });
 *   rt.replies.push({ text: 'Hello Ana!' }, { tools: [{ name: 'confirm_order', arguments: { confirmed: true } }] });
 *   rt.transcripts.push('Yes, please.');
 *   // DIALER_REALTIME_URL = rt.url
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { bytesToPcm, decodeMulaw, encodeMulaw, pcmToBytes, rms } from '../../src/lib/audio.js';
import { synthesize } from '../../src/lib/speech.js';

export interface RealtimeReply {
  text?: string;
  tools?: Array<{ name: string; arguments: unknown }>;
  /** Answer with an `error` event instead of a response. */
  error?: { code: string; message: string };
  /** Close the socket without a word when this reply would start. */
  drop?: boolean;
}

export interface RealtimePace {
  /** From `response.created` to the first audio delta. */
  firstAudioMs?: number;
  /** From the end of the caller's speech to their transcription. */
  transcriptionMs?: number;
}

export interface RealtimeServer {
  url: string;
  pace: RealtimePace;
  replies: RealtimeReply[];
  transcripts: string[];
  /** When `replies` is empty (benchmarks): `n` counts the connection's responses so far. */
  respond?: (n: number) => RealtimeReply;
  /** Client events as received (audio appends left out), with the connection's number and the time they came (epoch ms). */
  received: Array<{ connection: number; event: any; at: number }>;
  /** Audio appended, in ms, per connection. */
  audioMs: number[];
  /** Set: the appended audio's bytes as they came (base64-decoded), per connection; off for benchmarks. */
  keepAppended: boolean;
  appended: Buffer[][];
  /** Per response: when it was created and when its first audio went (Date.now()). */
  responses: Array<{ id: string; createdAt: number; firstAudioAt?: number; audioMs: number; status?: string }>;
  connections: number;
  close(): Promise<void>;
}

const FRAME_MS = 20;
const START_MS = 60;
const STOP_MS = 500;
const SPEECH_RMS = 300;
const PCM16_HZ = 24_000;

/**
 * Each text is synthesised once (its latency is the server's fixed one, not the synthesiser's),
 * from its first sound: the local voice's leading quiet (about 200 ms) would add to every reply.
 */
const spoken = new Map<string, Promise<Int16Array>>();
export function speech(text: string, sampleRateHz: number): Promise<Int16Array> {
  const key = `${sampleRateHz} ${text}`;
  let pcm = spoken.get(key);
  if (!pcm) spoken.set(key, (pcm = synthesize(text, { sampleRateHz }).then((all) => all.subarray(leadingQuiet(all, sampleRateHz)))));
  return pcm;
}

function leadingQuiet(pcm: Int16Array, sampleRateHz: number): number {
  const win = sampleRateHz / 100;
  let from = 0;
  while (from + win < pcm.length && rms(pcm.subarray(from, from + win)) < 150) from += win;
  return from;
}

let ids = 0;
const id = (prefix: string) => `${prefix}_${(++ids).toString(36).padStart(6, '0')}`;
const wait = (ms: number | undefined) => (ms ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve());

export async function startRealtimeServer(pace: RealtimePace = {}): Promise<RealtimeServer> {
  const server = http.createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ server });
  const state: RealtimeServer = {
    url: '',
    pace,
    replies: [],
    transcripts: [],
    received: [],
    audioMs: [],
    keepAppended: false,
    appended: [],
    responses: [],
    connections: 0,
    close: async () => {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  wss.on('connection', (ws, req) => {
    if (!new URL(req.url ?? '/', 'http://x').searchParams.get('model')) return ws.close(1008, 'model is required');
    serve(ws, state, state.connections++);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/v1/realtime`;
  return state;
}

function serve(ws: WebSocket, state: RealtimeServer, connection: number): void {
  const send = (event: Record<string, unknown>) => ws.readyState === ws.OPEN && ws.send(JSON.stringify({ event_id: id('event'), ...event }));
  let session: any = { id: id('sess'), object: 'realtime.session', input_audio_format: 'pcm16', output_audio_format: 'pcm16', turn_detection: { type: 'server_vad' }, tools: [], instructions: '' };
  state.audioMs[connection] = 0;
  send({ type: 'session.created', session });
  // Voice activity over the appended audio.
  let speaking = false;
  let speechMs = 0;
  let quietMs = 0;
  let pending = new Int16Array(0);
  let current: { id: string; cancelled: boolean; done: boolean } | undefined;
  let responsesMade = 0;
  /** The model has spoken audio in this session: its voice can no longer change. */
  let spoke = false;

  const rate = () => (session.input_audio_format === 'g711_ulaw' ? 8000 : PCM16_HZ);
  const decode = (b64: string) => {
    const bytes = Buffer.from(b64, 'base64');
    return session.input_audio_format === 'g711_ulaw' ? decodeMulaw(bytes) : bytesToPcm(bytes);
  };
  const encode = (pcm: Int16Array) => (session.output_audio_format === 'g711_ulaw' ? encodeMulaw(pcm) : pcmToBytes(pcm)).toString('base64');

  const frameHeard = (loud: boolean) => {
    if (loud) {
      speechMs += FRAME_MS;
      quietMs = 0;
      if (!speaking && speechMs >= START_MS) {
        speaking = true;
        send({ type: 'input_audio_buffer.speech_started', audio_start_ms: Math.round(state.audioMs[connection]! - speechMs), item_id: id('item') });
        // Server VAD interrupts the response in progress.
        if (current && !current.done) current.cancelled = true;
      }
    } else {
      quietMs += FRAME_MS;
      if (!speaking) speechMs = 0;
      if (speaking && quietMs >= STOP_MS) {
        speaking = false;
        speechMs = 0;
        const item = id('item');
        send({ type: 'input_audio_buffer.speech_stopped', audio_end_ms: Math.round(state.audioMs[connection]! - quietMs), item_id: item });
        send({ type: 'input_audio_buffer.committed', previous_item_id: null, item_id: item });
        send({ type: 'conversation.item.created', previous_item_id: null, item: { id: item, object: 'realtime.item', type: 'message', status: 'completed', role: 'user', content: [{ type: 'input_audio', transcript: null }] } });
        const transcript = state.transcripts.shift() ?? '';
        setTimeout(() => send({ type: 'conversation.item.input_audio_transcription.completed', item_id: item, content_index: 0, transcript }), state.pace.transcriptionMs ?? 0);
        if (session.turn_detection?.type === 'server_vad') void respond();
      }
    }
  };

  const respond = async () => {
    const reply = state.replies.shift() ?? state.respond?.(responsesMade) ?? { text: '' };
    responsesMade++;
    if (reply.drop) return ws.terminate();
    if (reply.error) return send({ type: 'error', error: { type: 'invalid_request_error', code: reply.error.code, message: reply.error.message, param: null, event_id: null } });
    const response = { id: id('resp'), cancelled: false, done: false };
    current = response;
    const log: RealtimeServer['responses'][number] = { id: response.id, createdAt: Date.now(), audioMs: 0 };
    state.responses.push(log);
    send({ type: 'response.created', response: { id: response.id, object: 'realtime.response', status: 'in_progress', output: [] } });
    const output: unknown[] = [];
    let outputIndex = 0;
    for (const tool of reply.tools ?? []) {
      const item = { id: id('item'), object: 'realtime.item', type: 'function_call', status: 'completed', name: tool.name, call_id: id('call'), arguments: JSON.stringify(tool.arguments) };
      send({ type: 'response.output_item.added', response_id: response.id, output_index: outputIndex, item: { ...item, status: 'in_progress', arguments: '' } });
      send({ type: 'response.function_call_arguments.delta', response_id: response.id, item_id: item.id, output_index: outputIndex, call_id: item.call_id, delta: item.arguments });
      send({ type: 'response.function_call_arguments.done', response_id: response.id, item_id: item.id, output_index: outputIndex, call_id: item.call_id, name: item.name, arguments: item.arguments });
      send({ type: 'response.output_item.done', response_id: response.id, output_index: outputIndex++, item });
      output.push(item);
    }
    let transcript = '';
    if (reply.text) {
      const itemId = id('item');
      const base = { response_id: response.id, item_id: itemId, output_index: outputIndex, content_index: 0 };
      send({ type: 'response.output_item.added', response_id: response.id, output_index: outputIndex, item: { id: itemId, object: 'realtime.item', type: 'message', status: 'in_progress', role: 'assistant', content: [] } });
      send({ type: 'response.content_part.added', ...base, part: { type: 'audio', transcript: '' } });
      const outHz = session.output_audio_format === 'g711_ulaw' ? 8000 : PCM16_HZ;
      const [pcm] = await Promise.all([speech(reply.text, outHz), wait(state.pace.firstAudioMs)]);
      const words = reply.text.split(/(?<=\s)/);
      const piece = outHz / 10;
      const pieces = Math.ceil(pcm.length / piece);
      for (let i = 0; i < pieces && !response.cancelled && ws.readyState === ws.OPEN; i++) {
        if (i === 0) log.firstAudioAt = Date.now();
        spoke = true;
        send({ type: 'response.audio.delta', ...base, delta: encode(pcm.subarray(i * piece, (i + 1) * piece)) });
        log.audioMs += 100;
        // The words go along with their share of the audio.
        const upTo = Math.ceil(((i + 1) / pieces) * words.length);
        const said = words.slice(Math.ceil((i / pieces) * words.length), upTo).join('');
        if (said) {
          transcript += said;
          send({ type: 'response.audio_transcript.delta', ...base, delta: said });
        }
        // Faster than real time, as the service sends it.
        if (i % 10 === 9) await wait(5);
      }
      send({ type: 'response.audio.done', ...base });
      send({ type: 'response.audio_transcript.done', ...base, transcript });
      send({ type: 'response.content_part.done', ...base, part: { type: 'audio', transcript } });
      const item = { id: itemId, object: 'realtime.item', type: 'message', status: response.cancelled ? 'incomplete' : 'completed', role: 'assistant', content: [{ type: 'audio', transcript }] };
      send({ type: 'response.output_item.done', response_id: response.id, output_index: outputIndex, item });
      output.push(item);
    }
    response.done = true;
    const status = response.cancelled ? 'cancelled' : 'completed';
    log.status = status;
    const outputTokens = Math.ceil(transcript.length / 4) + 1;
    send({
      type: 'response.done',
      response: {
        id: response.id,
        object: 'realtime.response',
        status,
        status_details: response.cancelled ? { type: 'cancelled', reason: 'turn_detected' } : null,
        output,
        usage: { total_tokens: 120 + outputTokens, input_tokens: 120, output_tokens: outputTokens, input_token_details: { text_tokens: 100, audio_tokens: 20 }, output_token_details: { text_tokens: outputTokens, audio_tokens: 0 } },
      },
    });
  };

  ws.on('message', (data) => {
    let event: any;
    try {
      event = JSON.parse(data.toString());
    } catch {
      return send({ type: 'error', error: { type: 'invalid_request_error', code: 'invalid_json', message: 'not JSON' } });
    }
    if (event.type === 'input_audio_buffer.append') {
      if (state.keepAppended) (state.appended[connection] ??= []).push(Buffer.from(event.audio ?? '', 'base64'));
      const pcm = decode(event.audio ?? '');
      const joined = new Int16Array(pending.length + pcm.length);
      joined.set(pending);
      joined.set(pcm, pending.length);
      const frame = (rate() * FRAME_MS) / 1000;
      let at = 0;
      for (; at + frame <= joined.length; at += frame) {
        state.audioMs[connection]! += FRAME_MS;
        frameHeard(rms(joined.subarray(at, at + frame)) > SPEECH_RMS);
      }
      pending = joined.slice(at);
      return;
    }
    state.received.push({ connection, event, at: Date.now() });
    switch (event.type) {
      case 'session.update':
        if (spoke && event.session?.voice !== undefined) {
          return send({ type: 'error', error: { type: 'invalid_request_error', code: 'cannot_update_voice', message: "Cannot update a conversation's voice if assistant audio is present.", param: 'session.voice', event_id: event.event_id ?? null } });
        }
        session = { ...session, ...event.session };
        return send({ type: 'session.updated', session });
      case 'response.create':
        return void respond();
      case 'conversation.item.create':
        return send({ type: 'conversation.item.created', previous_item_id: null, item: { id: event.item?.id ?? id('item'), ...event.item } });
      case 'conversation.item.truncate':
        return send({ type: 'conversation.item.truncated', item_id: event.item_id, content_index: event.content_index, audio_end_ms: event.audio_end_ms });
      default:
        return send({ type: 'error', error: { type: 'invalid_request_error', code: 'unknown_event', message: `Unknown event type ${event.type}` } });
    }
  });
}


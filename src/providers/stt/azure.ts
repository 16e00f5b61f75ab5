/**
 * Azure Speech's speech-to-text over its streaming WebSocket (the Speech service's WebSocket
 * protocol, conversation mode), as its protocol reference and SDK give it:
 *
 * - The upgrade carries the resource key (`Ocp-Apim-Subscription-Key`) and `X-ConnectionId` (a
 *   UUID without dashes); the query the `language` and `format=simple`.
 * - Text messages are HTTP-like: `Name: value` header lines (`Path`, `X-RequestId`, `X-Timestamp`,
 *   `Content-Type`), a blank line, a JSON body. Binary messages are a 2-byte big-endian header
 *   length, the same header lines, then the body (at most 8,192 bytes of audio).
 * - Dialer sends `speech.config` once, then `audio`: a turn is one X-RequestId; its first audio
 *   message starts with a RIFF (WAV) header giving the rate, later ones carry PCM. An audio message
 *   with an empty body ends the turn's audio: Dialer sends it when the VAD ends a segment, so the
 *   turn's words come at once rather than after the service's own silence.
 * - The service answers `turn.start`, `speech.startDetected`, `speech.hypothesis` (`Text`: interim
 *   results here), `speech.phrase` (`RecognitionStatus`, `DisplayText`, `Offset`, `Duration`: a
 *   final when Success), `speech.endDetected` and `turn.end`, which Dialer acknowledges with a
 *   `telemetry` message (the times it received the turn's messages), as the protocol asks.
 *
 * Audio that comes while a turn is ending is held and starts the next turn after `turn.end`: a new
 * request id makes the service drop what it still owes the previous one. A turn whose `turn.end`
 * does not come within the timeout leaves the connection in doubt (so says the protocol): the
 * stream fails, retryably.
 */
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import type { AzureSttSettings } from '../../config/voice.js';
import { encodeWav, pcmToBytes } from '../../lib/audio.js';
import { ServiceError, type STT, type SttEvent, type SttStream } from '../../voice/services.js';
import { EventQueue } from '../queue.js';

/** The largest audio body of one message. */
const MAX_AUDIO_BYTES = 8192;
/** Audio held while a turn ends, at most (then the oldest is dropped: it is silence after a segment). */
const MAX_HELD_BYTES = 16000 * 2 * 5;
/** Closing codes of a request the service will never take (a protocol or payload it refuses): not worth a retry. */
const FINAL_CLOSE = new Set([1002, 1007, 1008]);

const noDashUuid = () => randomUUID().replace(/-/g, '');

export interface SpeechMessage {
  headers: Record<string, string>;
  body: string;
}

/** A text message of the protocol: header lines, a blank line, the body. */
export function textMessage(headers: Record<string, string>, body: string): string {
  return `${Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n${body}`;
}

/** A binary message: the header block's length (2 bytes, big-endian), the header lines, the body. */
export function binaryMessage(headers: Record<string, string>, body: Uint8Array): Buffer {
  const head = Buffer.from(Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join(''), 'ascii');
  const out = Buffer.alloc(2 + head.length + body.length);
  out.writeUInt16BE(head.length, 0);
  head.copy(out, 2);
  out.set(body, 2 + head.length);
  return out;
}

/** Reads a text message; header names in lower case. */
export function parseTextMessage(text: string): SpeechMessage {
  const split = text.indexOf('\r\n\r\n');
  const head = split < 0 ? text : text.slice(0, split);
  const headers: Record<string, string> = {};
  for (const line of head.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { headers, body: split < 0 ? '' : text.slice(split + 4) };
}

export class AzureSTT implements STT {
  readonly label = 'azure-speech';
  /** PCM at 16 kHz, and telephony's 8 kHz as it comes (the RIFF header says which). */
  readonly sampleRatesHz: readonly number[] = [16000, 8000];
  readonly interimResults = true;

  constructor(private readonly options: AzureSttSettings) {}

  open(options: { signal: AbortSignal; language?: string; sampleRateHz: number }): SttStream {
    const o = this.options;
    const rate = options.sampleRateHz;
    const queue = new EventQueue<SttEvent>();
    const connectionId = noDashUuid();
    const query = new URLSearchParams({ language: options.language ?? o.language, format: 'simple' });
    const connectStarted = new Date().toISOString();
    const ws = new WebSocket(`${o.url}?${query}`, {
      headers: { 'Ocp-Apim-Subscription-Key': o.apiKey, 'X-ConnectionId': connectionId },
      handshakeTimeout: o.timeoutMs,
    });
    const backlog: Array<Buffer | string> = [];
    const send = (data: Buffer | string) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(data);
      else if (ws.readyState === WebSocket.CONNECTING) backlog.push(data);
    };
    let connected: string | undefined;
    ws.on('open', () => {
      connected = new Date().toISOString();
      ws.send(
        textMessage(
          { Path: 'speech.config', 'X-RequestId': noDashUuid(), 'X-Timestamp': new Date().toISOString(), 'Content-Type': 'application/json; charset=utf-8' },
          JSON.stringify({
            context: {
              system: { name: 'Dialer', version: '1.0.0' },
              os: { platform: 'Node.js', name: process.platform, version: process.version },
              device: { manufacturer: 'Dialer', model: 'telephony', version: '1.0.0' },
            },
            recognition: 'conversation',
          }),
        ),
      );
      for (const item of backlog.splice(0)) ws.send(item);
    });
    ws.on('unexpected-response', (_req, res) => {
      const status = res.statusCode ?? 0;
      queue.end(new ServiceError(this.label, `refused the stream: HTTP ${status}`, status === 429 || status >= 500, { status }));
      ws.terminate();
    });

    // The turn under way: its request id, whether its audio has ended, what it received when.
    let turn: { id: string; ending: boolean; words: boolean; received: Array<[string, string]>; deadline?: NodeJS.Timeout } | undefined;
    let turns = 0;
    const held: Buffer[] = [];
    let heldBytes = 0;
    const audio = (body: Uint8Array) =>
      send(binaryMessage({ Path: 'audio', 'X-RequestId': turn!.id, 'X-Timestamp': new Date().toISOString(), 'Content-Type': 'audio/x-wav' }, body));
    const sendAudio = (bytes: Buffer) => {
      if (!turn) {
        turn = { id: noDashUuid(), ending: false, words: false, received: [] };
        bytes = Buffer.concat([encodeWav(new Int16Array(0), rate), bytes]);
      }
      for (let at = 0; at < bytes.length; at += MAX_AUDIO_BYTES) audio(bytes.subarray(at, at + MAX_AUDIO_BYTES));
    };
    const acknowledge = (ended: NonNullable<typeof turn>) => {
      const byPath = new Map<string, string[]>();
      for (const [path, at] of ended.received) byPath.set(path, [...(byPath.get(path) ?? []), at]);
      const received = [...byPath].map(([path, times]) => ({ [path]: times.length === 1 ? times[0] : times }));
      const metrics = turns++ === 0 ? [{ Name: 'Connection', Id: connectionId, Start: connectStarted, End: connected ?? connectStarted }] : [];
      send(textMessage({ Path: 'telemetry', 'X-RequestId': ended.id, 'X-Timestamp': new Date().toISOString(), 'Content-Type': 'application/json' }, JSON.stringify({ ReceivedMessages: received, Metrics: metrics })));
    };

    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      const m = parseTextMessage(data.toString());
      const path = m.headers.path ?? '';
      if (!turn || m.headers['x-requestid'] !== turn.id) return; // a turn already given up
      turn.received.push([path, new Date().toISOString()]);
      let body: { Text?: string; RecognitionStatus?: string; DisplayText?: string } = {};
      if (m.body) {
        try {
          body = JSON.parse(m.body);
        } catch {
          return queue.end(new ServiceError(this.label, `sent a ${path} message whose body is not JSON`, false));
        }
      }
      if (path === 'speech.hypothesis' || path === 'speech.fragment') {
        const text = (body.Text ?? '').trim();
        if (text) queue.put({ type: 'interim', text });
      } else if (path === 'speech.phrase') {
        const text = (body.DisplayText ?? '').trim();
        if (body.RecognitionStatus === 'Success' && text) {
          turn.words = true;
          queue.put({ type: 'final', text });
        } else if (body.RecognitionStatus === 'Error') {
          queue.end(new ServiceError(this.label, 'could not recognize the audio (RecognitionStatus Error)', true));
        }
      } else if (path === 'turn.end') {
        const ended = turn;
        turn = undefined;
        clearTimeout(ended.deadline);
        acknowledge(ended);
        // A turn the service ended on its own, over silence, is no utterance.
        if (ended.ending || ended.words) queue.put({ type: 'utterance_end' });
        const next = Buffer.concat(held.splice(0));
        heldBytes = 0;
        if (next.length) sendAudio(next);
        if (closing) finish();
      }
    });
    ws.on('error', (err) => queue.end(options.signal.aborted ? undefined : new ServiceError(this.label, err.message, true, { cause: err })));
    ws.on('close', (code, reason) => {
      clearTimeout(turn?.deadline);
      if (closing || code === 1000) queue.end();
      else queue.end(new ServiceError(this.label, `closed the stream: ${code} ${reason.toString()}`.trim(), !FINAL_CLOSE.has(code)));
    });

    let closing = false;
    let finish: () => void = () => undefined;
    /** Ends the turn's audio; its words and turn.end are due within the timeout. */
    const endTurn = (ending: NonNullable<typeof turn>) => {
      ending.ending = true;
      audio(new Uint8Array(0));
      ending.deadline = setTimeout(() => {
        queue.end(new ServiceError(this.label, `no turn.end within ${o.timeoutMs} ms of the end of the audio`, true));
        ws.terminate();
      }, o.timeoutMs);
    };
    const close = async () => {
      if (closing) return;
      closing = true;
      if (ws.readyState === WebSocket.OPEN && turn) {
        // The turn's last words: end its audio and wait (briefly) for turn.end.
        if (!turn.ending) endTurn(turn);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 2000);
          finish = () => (clearTimeout(timer), resolve());
        });
      }
      if (ws.readyState === WebSocket.OPEN) ws.close(1000);
      else ws.terminate();
      queue.end();
    };
    options.signal.addEventListener('abort', () => void close(), { once: true });
    return {
      write(pcm) {
        if (closing) return;
        const bytes = pcmToBytes(pcm);
        if (turn?.ending) {
          held.push(Buffer.from(bytes));
          heldBytes += bytes.length;
          while (heldBytes > MAX_HELD_BYTES) heldBytes -= held.shift()!.length;
          return;
        }
        sendAudio(bytes);
      },
      endSegment() {
        if (turn && !turn.ending) endTurn(turn);
      },
      events: queue,
      close,
    };
  }
}

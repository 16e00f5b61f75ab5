/**
 * Plivo Audio Streams (bidirectional `<Stream>`, audio/x-mulaw;rate=8000): JSON text frames.
 * Inbound `start`, `media` (base64 mu-law), `dtmf`, `playedStream` (a checkpoint was reached),
 * `clearedAudio`, `stop`; outbound `playAudio`, `checkpoint`, `clearAudio`.
 */
import { decodeMulaw, encodeMulaw } from '../../lib/audio.js';
import { ProtocolError, type MediaEvent, type MediaSerializer } from '../provider.js';

/** 20 ms of 8 kHz audio per playAudio frame. */
export const SAMPLES_PER_FRAME = 160;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

type Json = Record<string, unknown>;

function object(value: unknown): Json | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;
}

function required(value: unknown, what: string): string {
  const v = text(value);
  if (v === undefined || v === '') throw new ProtocolError(`Plivo stream frame without ${what}`);
  return v;
}

/** Plivo's `extra_headers` ("a=1;b=2", or an object) and `start.customParameters` as one record. */
function customParameters(message: Json, start: Json): Record<string, string> {
  const out: Record<string, string> = {};
  const extra = message.extra_headers ?? message.extraHeaders;
  if (typeof extra === 'string') {
    for (const pair of extra.split(/[;,]/)) {
      const eq = pair.indexOf('=');
      if (eq > 0) out[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
    }
  } else {
    for (const [k, v] of Object.entries(object(extra) ?? {})) if (text(v) !== undefined) out[k] = text(v)!;
  }
  for (const [k, v] of Object.entries(object(start.customParameters) ?? {})) if (text(v) !== undefined) out[k] = text(v)!;
  return out;
}

export class PlivoSerializer implements MediaSerializer {
  private streamId = '';

  decode(frame: string): MediaEvent {
    let parsed: unknown;
    try {
      parsed = JSON.parse(frame);
    } catch {
      throw new ProtocolError('Plivo stream frame is not JSON');
    }
    const message = object(parsed);
    const event = message ? message.event : undefined;
    if (!message || typeof event !== 'string') throw new ProtocolError('Plivo stream frame has no "event"');
    switch (event) {
      case 'start': {
        const start = object(message.start);
        if (!start) throw new ProtocolError('Plivo "start" frame without start');
        const streamId = required(start.streamId ?? message.streamId, 'start.streamId');
        const callSid = required(start.callId, 'start.callId');
        const format = object(start.mediaFormat);
        if (format?.encoding !== undefined && format.encoding !== 'audio/x-mulaw') {
          throw new ProtocolError(`Plivo stream encoding ${String(format.encoding)} is not audio/x-mulaw`);
        }
        if (format?.sampleRate !== undefined && Number(format.sampleRate) !== 8000) {
          throw new ProtocolError(`Plivo stream sample rate ${String(format.sampleRate)} is not 8000`);
        }
        this.streamId = streamId;
        return { type: 'start', streamId, callSid, customParameters: customParameters(message, start) };
      }
      case 'media': {
        const media = object(message.media);
        const payload = media?.payload;
        if (typeof payload !== 'string' || !BASE64.test(payload)) throw new ProtocolError('Plivo "media" frame without a base64 media.payload');
        if (media?.track === 'outbound') return { type: 'other' };
        return { type: 'audio', pcm: decodeMulaw(Buffer.from(payload, 'base64')) };
      }
      case 'dtmf':
        return { type: 'dtmf', digit: required(object(message.dtmf)?.digit, 'dtmf.digit') };
      case 'playedStream':
        return { type: 'mark', name: required(message.name, 'name') };
      case 'clearedAudio':
        return { type: 'other' };
      case 'stop':
        return { type: 'stop' };
      default:
        throw new ProtocolError(`Unknown Plivo stream event "${event}"`);
    }
  }

  audio(pcm: Int16Array): string[] {
    const frames: string[] = [];
    for (let at = 0; at < pcm.length; at += SAMPLES_PER_FRAME) {
      const payload = encodeMulaw(pcm.subarray(at, at + SAMPLES_PER_FRAME)).toString('base64');
      frames.push(JSON.stringify({ event: 'playAudio', media: { contentType: 'audio/x-mulaw', sampleRate: 8000, payload } }));
    }
    return frames;
  }

  mark(name: string): string {
    return JSON.stringify({ event: 'checkpoint', streamId: this.streamId, name });
  }

  clear(): string {
    return JSON.stringify({ event: 'clearAudio', streamId: this.streamId });
  }
}

/**
 * Twilio Media Streams (bidirectional, `<Connect><Stream>`): JSON text frames. Inbound `connected`,
 * `start`, `media` (base64 mu-law 8 kHz), `mark`, `dtmf`, `stop`; outbound `media`, `mark`, `clear`,
 * each naming the stream by its `streamSid`.
 */
import { decodeMulaw, encodeMulaw } from '../../lib/audio.js';
import { ProtocolError, type MediaEvent, type MediaSerializer } from '../provider.js';

/** 20 ms of 8 kHz audio: the frame size Twilio itself sends. */
export const SAMPLES_PER_FRAME = 160;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

type Json = Record<string, unknown>;

function object(value: unknown): Json | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;
}

function field(parent: Json, name: string, key: string, event: string): string {
  const inner = object(parent[name]);
  const value = inner ? text(inner[key]) : undefined;
  if (value === undefined || value === '') throw new ProtocolError(`Twilio "${event}" frame without ${name}.${key}`);
  return value;
}

export class TwilioSerializer implements MediaSerializer {
  private streamSid = '';

  decode(frame: string): MediaEvent {
    let parsed: unknown;
    try {
      parsed = JSON.parse(frame);
    } catch {
      throw new ProtocolError('Twilio media frame is not JSON');
    }
    const message = object(parsed);
    const event = message ? message.event : undefined;
    if (!message || typeof event !== 'string') throw new ProtocolError('Twilio media frame has no "event"');
    switch (event) {
      case 'connected':
        return { type: 'other' };
      case 'start': {
        const start = object(message.start);
        const streamSid = (start && text(start.streamSid)) || text(message.streamSid);
        if (!start || !streamSid) throw new ProtocolError('Twilio "start" frame without start.streamSid');
        const callSid = field(message, 'start', 'callSid', event);
        const format = object(start.mediaFormat);
        if (format && format.encoding !== undefined && format.encoding !== 'audio/x-mulaw') {
          throw new ProtocolError(`Twilio stream encoding ${String(format.encoding)} is not audio/x-mulaw`);
        }
        if (format && format.sampleRate !== undefined && Number(format.sampleRate) !== 8000) {
          throw new ProtocolError(`Twilio stream sample rate ${String(format.sampleRate)} is not 8000`);
        }
        const customParameters: Record<string, string> = {};
        for (const [k, v] of Object.entries(object(start.customParameters) ?? {})) {
          const value = text(v);
          if (value !== undefined) customParameters[k] = value;
        }
        this.streamSid = streamSid;
        return { type: 'start', streamId: streamSid, callSid, customParameters };
      }
      case 'media': {
        const payload = object(message.media)?.payload;
        if (typeof payload !== 'string' || !BASE64.test(payload)) throw new ProtocolError('Twilio "media" frame without a base64 media.payload');
        const media = object(message.media)!;
        if (media.track === 'outbound') return { type: 'other' };
        const timestampMs = Number(media.timestamp);
        return { type: 'audio', pcm: decodeMulaw(Buffer.from(payload, 'base64')), ...(media.timestamp !== undefined && Number.isFinite(timestampMs) ? { timestampMs } : {}) };
      }
      case 'mark':
        return { type: 'mark', name: field(message, 'mark', 'name', event) };
      case 'dtmf':
        return { type: 'dtmf', digit: field(message, 'dtmf', 'digit', event) };
      case 'stop':
        return { type: 'stop' };
      default:
        throw new ProtocolError(`Unknown Twilio media event "${event}"`);
    }
  }

  audio(pcm: Int16Array): string[] {
    const frames: string[] = [];
    for (let at = 0; at < pcm.length; at += SAMPLES_PER_FRAME) {
      const payload = encodeMulaw(pcm.subarray(at, at + SAMPLES_PER_FRAME)).toString('base64');
      frames.push(JSON.stringify({ event: 'media', streamSid: this.streamSid, media: { payload } }));
    }
    return frames;
  }

  mark(name: string): string {
    return JSON.stringify({ event: 'mark', streamSid: this.streamSid, mark: { name } });
  }

  clear(): string {
    return JSON.stringify({ event: 'clear', streamSid: this.streamSid });
  }
}

/**
 * What the providers' media-stream serializers share. Every provider sends JSON text frames that
 * name their kind in `event`: a frame that is not JSON, not an object, or has no `event` is a
 * ProtocolError, and so is a missing field or a payload that is not base64. Twilio and Plivo also
 * share their audio, 8 kHz mu-law in 20 ms frames (MulawFrameSerializer). What differs stays in
 * each driver's serializer.ts: the events and their fields, the outbound frames' shapes, and
 * Exotel's PCM in 320-byte-aligned chunks.
 */
import { decodeMulaw, encodeMulaw } from '../lib/audio.js';
import { ProtocolError, TELEPHONY_SAMPLE_RATE_HZ, type MediaEvent, type MediaSerializer } from './provider.js';

export type Json = Record<string, unknown>;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The value when it is a JSON object, else undefined. */
export function asObject(value: unknown): Json | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;
}

/** A string, or a finite number as a string; else undefined. */
export function asText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  return typeof value === 'number' && Number.isFinite(value) ? String(value) : undefined;
}

/** The string (or number) values of an object, such as a start frame's custom parameters, added to `into`. */
export function textValues(value: unknown, into: Record<string, string> = {}): Record<string, string> {
  for (const [k, v] of Object.entries(asObject(value) ?? {})) {
    const text = asText(v);
    if (text !== undefined) into[k] = text;
  }
  return into;
}

/** A serializer of JSON frames: decodes the envelope, leaves each event to the provider. */
export abstract class JsonFrameSerializer implements MediaSerializer {
  /** The stream's id, learned from its `start` frame and put in every outbound frame. */
  protected streamId = '';

  /** `label`: the protocol's name in errors ("Twilio media", "Plivo stream"). */
  constructor(protected readonly label: string) {}

  decode(frame: string): MediaEvent {
    let parsed: unknown;
    try {
      parsed = JSON.parse(frame);
    } catch {
      throw this.error('frame is not JSON');
    }
    const message = asObject(parsed);
    if (!message || typeof message.event !== 'string') throw this.error('frame has no "event"');
    return this.decodeEvent(message.event, message);
  }

  /** Decodes a frame whose `event` is known to be a string. Throws ProtocolError for an unknown event. */
  protected abstract decodeEvent(event: string, message: Json): MediaEvent;

  abstract audio(pcm: Int16Array): string[];
  abstract mark(name: string): string;
  abstract clear(): string;

  protected error(what: string): ProtocolError {
    return new ProtocolError(`${this.label} ${what}`);
  }

  /** A non-empty string (or number) field, named `what` in the error when it is missing. */
  protected required(value: unknown, what: string): string {
    const text = asText(value);
    if (text === undefined || text === '') throw this.error(`frame without ${what}`);
    return text;
  }

  /** An object field, named `what` in the error when it is not one. */
  protected object(value: unknown, what: string): Json {
    const object = asObject(value);
    if (!object) throw this.error(`frame without the object ${what}`);
    return object;
  }

  /** The bytes of a base64 payload, named `what` in the error when it is not base64. */
  protected payload(value: unknown, what: string): Buffer {
    if (typeof value !== 'string' || !BASE64.test(value)) throw this.error(`frame without a base64 ${what}`);
    return Buffer.from(value, 'base64');
  }
}

/** 20 ms of 8 kHz audio: the frame size Twilio itself sends, and what Dialer sends to Twilio and Plivo. */
export const MULAW_SAMPLES_PER_FRAME = 160;

/** Streams of 8 kHz mu-law in `media.payload` (Twilio, Plivo). */
export abstract class MulawFrameSerializer extends JsonFrameSerializer {
  /** The outbound frame that plays one 20 ms base64 mu-law payload. */
  protected abstract mediaFrame(payload: string): string;

  audio(pcm: Int16Array): string[] {
    const frames: string[] = [];
    for (let at = 0; at < pcm.length; at += MULAW_SAMPLES_PER_FRAME) {
      frames.push(this.mediaFrame(encodeMulaw(pcm.subarray(at, at + MULAW_SAMPLES_PER_FRAME)).toString('base64')));
    }
    return frames;
  }

  /** Refuses a stream whose declared `mediaFormat` is other than mu-law at 8 kHz. */
  protected checkFormat(format: Json | undefined): void {
    if (format?.encoding !== undefined && format.encoding !== 'audio/x-mulaw') {
      throw this.error(`encoding ${String(format.encoding)} is not audio/x-mulaw`);
    }
    if (format?.sampleRate !== undefined && Number(format.sampleRate) !== TELEPHONY_SAMPLE_RATE_HZ) {
      throw this.error(`sample rate ${String(format.sampleRate)} is not ${TELEPHONY_SAMPLE_RATE_HZ}`);
    }
  }

  /**
   * A `media` frame's caller audio (decoded, and its mu-law bytes as sent), or undefined for
   * Dialer's own track sent back (`track: outbound`).
   */
  protected callerAudio(message: Json): { pcm: Int16Array; mulaw: Buffer; media: Json } | undefined {
    const media = asObject(message.media);
    const bytes = this.payload(media?.payload, 'media.payload');
    if (!media || media.track === 'outbound') return undefined;
    return { pcm: decodeMulaw(bytes), mulaw: bytes, media };
  }
}

/**
 * Exotel's Voicebot (bidirectional stream) applet WebSocket protocol.
 * https://developer.exotel.com/docs/agentstream/websocket-protocol and the support article
 * "Working with the Stream and Voicebot Applet".
 *
 * Exotel -> Dialer: `connected`, `start` (stream_sid, start.{call_sid, account_sid, from, to,
 * custom_parameters, media_format {encoding, sample_rate, bit_rate}}), `media` (media.{chunk,
 * timestamp, payload}: base64 raw/slin, 16-bit signed little-endian mono PCM, ~100 ms per frame),
 * `dtmf` (dtmf.{digit, duration}), `mark` (mark.name, when audio sent before that mark has played),
 * `stop` (stop.{call_sid, account_sid, reason}). Exotel numbers every frame with `sequence_number`.
 * Dialer -> Exotel: `{"event":"media","stream_sid","media":{"payload"}}`,
 * `{"event":"mark","stream_sid","mark":{"name"}}`, `{"event":"clear","stream_sid"}`.
 *
 * Outbound chunk sizes (Exotel's bidirectional chunk-size window): every chunk a multiple of 320
 * bytes, at least 3.2 KB (100 ms at 8 kHz) recommended to ride out network jitter, at most 100 KB.
 * A chunk that is not a multiple of 320 bytes leaves a short last packet after which Exotel waits
 * 20 ms, which is heard as a gap; so the last chunk of a clip is padded with silence to the next
 * 320-byte boundary (at most 19 ms at 8 kHz).
 */
import { bytesToPcm, pcmToBytes, resample } from '../../lib/audio.js';
import { TELEPHONY_SAMPLE_RATE_HZ, type MediaEvent } from '../provider.js';
import { asText, JsonFrameSerializer, textValues, type Json } from '../serializer.js';

/** Bytes per outbound chunk: 100 ms of 16-bit PCM at 8 kHz, Exotel's recommended minimum (10 x 320). */
export const EXOTEL_CHUNK_BYTES = 3200;
/** Every outbound chunk is a multiple of this many bytes. */
export const EXOTEL_CHUNK_ALIGN_BYTES = 320;
/** Exotel's maximum chunk size. */
const MAX_CHUNK_BYTES = 100_000;
/** The rates the Voicebot applet streams at (`?sample-rate=` on the stream URL; 8000 by default). */
const RATES = new Set([8000, 16000, 24000]);

export class ExotelSerializer extends JsonFrameSerializer {
  /** The stream's sample rate, from start.media_format.sample_rate (8000 unless the URL asked otherwise). */
  private rateHz = TELEPHONY_SAMPLE_RATE_HZ;

  constructor() {
    super('Exotel stream');
  }

  protected decodeEvent(event: string, f: Json): MediaEvent {
    switch (event) {
      case 'connected':
        return { type: 'other' };
      case 'start': {
        const start = this.object(f.start, 'start');
        const streamSid = this.required(asText(f.stream_sid) ?? start.stream_sid, 'stream_sid');
        const callSid = this.required(start.call_sid, 'start.call_sid');
        const custom = start.custom_parameters ?? undefined;
        if (start.media_format !== undefined && start.media_format !== null) {
          const format = this.object(start.media_format, 'start.media_format');
          const rate = Number(asText(format.sample_rate) ?? TELEPHONY_SAMPLE_RATE_HZ);
          if (!RATES.has(rate)) throw this.error(`sample_rate ${String(format.sample_rate)} is not supported`);
          this.rateHz = rate;
        }
        this.streamId = streamSid;
        return { type: 'start', streamId: streamSid, callSid, customParameters: custom === undefined ? {} : textValues(this.object(custom, 'start.custom_parameters')) };
      }
      case 'media': {
        const bytes = this.payload(this.object(f.media, 'media').payload, 'media.payload');
        if (bytes.length % 2 !== 0) throw this.error('media.payload is not 16-bit PCM (odd byte count)');
        return { type: 'audio', pcm: resample(bytesToPcm(bytes), this.rateHz, TELEPHONY_SAMPLE_RATE_HZ) };
      }
      case 'dtmf': {
        const digit = this.required(this.object(f.dtmf, 'dtmf').digit, 'dtmf.digit');
        if (!/^[0-9*#A-D]$/i.test(digit)) throw this.error(`dtmf.digit ${digit} is not a key`);
        return { type: 'dtmf', digit: digit.toUpperCase() };
      }
      case 'mark':
        return { type: 'mark', name: this.required(this.object(f.mark, 'mark').name, 'mark.name') };
      case 'stop':
        return { type: 'stop' };
      case 'clear':
        // Exotel lists `clear` as a message Dialer sends; an echo of it carries nothing for Dialer.
        return { type: 'other' };
      default:
        throw this.error(`event "${event}" is unknown`);
    }
  }

  audio(pcm: Int16Array): string[] {
    if (pcm.length === 0) return [];
    let bytes = pcmToBytes(resample(pcm, TELEPHONY_SAMPLE_RATE_HZ, this.rateHz));
    const pad = (EXOTEL_CHUNK_ALIGN_BYTES - (bytes.length % EXOTEL_CHUNK_ALIGN_BYTES)) % EXOTEL_CHUNK_ALIGN_BYTES;
    if (pad > 0) bytes = Buffer.concat([bytes, Buffer.alloc(pad)]);
    // 100 ms per chunk at the stream's rate, still a multiple of 320 bytes.
    const size = Math.min(MAX_CHUNK_BYTES, (EXOTEL_CHUNK_BYTES * this.rateHz) / TELEPHONY_SAMPLE_RATE_HZ);
    const frames: string[] = [];
    let offset = 0;
    while (offset < bytes.length) {
      let end = Math.min(bytes.length, offset + size);
      // Never leave a tail under the recommended minimum: fold it into this chunk instead.
      if (bytes.length - end > 0 && bytes.length - end < size) end = bytes.length;
      frames.push(JSON.stringify({ event: 'media', stream_sid: this.streamId, media: { payload: bytes.subarray(offset, end).toString('base64') } }));
      offset = end;
    }
    return frames;
  }

  mark(name: string): string {
    return JSON.stringify({ event: 'mark', stream_sid: this.streamId, mark: { name } });
  }

  clear(): string {
    return JSON.stringify({ event: 'clear', stream_sid: this.streamId });
  }
}

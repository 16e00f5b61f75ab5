/**
 * Plivo Audio Streams (bidirectional `<Stream>`, audio/x-mulaw;rate=8000): JSON text frames.
 * Inbound `start`, `media` (base64 mu-law), `dtmf`, `playedStream` (a checkpoint was reached),
 * `clearedAudio`, `stop`; outbound `playAudio`, `checkpoint`, `clearAudio`. The envelope and the
 * mu-law audio are shared with Twilio's (../serializer.ts).
 */
import { TELEPHONY_SAMPLE_RATE_HZ, type MediaEvent } from '../provider.js';
import { asObject, MulawFrameSerializer, textValues, type Json } from '../serializer.js';

/** Plivo's `extra_headers` ("a=1;b=2", or an object) and `start.customParameters` as one record. */
function customParameters(message: Json, start: Json): Record<string, string> {
  const extra = message.extra_headers ?? message.extraHeaders;
  const out: Record<string, string> = {};
  if (typeof extra === 'string') {
    for (const pair of extra.split(/[;,]/)) {
      const eq = pair.indexOf('=');
      if (eq > 0) out[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
    }
  } else {
    textValues(extra, out);
  }
  return textValues(start.customParameters, out);
}

export class PlivoSerializer extends MulawFrameSerializer {
  constructor() {
    super('Plivo stream');
  }

  protected decodeEvent(event: string, message: Json): MediaEvent {
    switch (event) {
      case 'start': {
        const start = this.object(message.start, 'start');
        const streamId = this.required(start.streamId ?? message.streamId, 'start.streamId');
        const callSid = this.required(start.callId, 'start.callId');
        this.checkFormat(asObject(start.mediaFormat));
        this.streamId = streamId;
        return { type: 'start', streamId, callSid, customParameters: customParameters(message, start) };
      }
      case 'media': {
        const audio = this.callerAudio(message);
        return audio ? { type: 'audio', pcm: audio.pcm, mulaw: audio.mulaw } : { type: 'other' };
      }
      case 'dtmf':
        return { type: 'dtmf', digit: this.required(asObject(message.dtmf)?.digit, 'dtmf.digit') };
      case 'playedStream':
        return { type: 'mark', name: this.required(message.name, 'name') };
      case 'clearedAudio':
        return { type: 'other' };
      case 'stop':
        return { type: 'stop' };
      default:
        throw this.error(`event "${event}" is unknown`);
    }
  }

  protected mediaFrame(payload: string): string {
    return JSON.stringify({ event: 'playAudio', media: { contentType: 'audio/x-mulaw', sampleRate: TELEPHONY_SAMPLE_RATE_HZ, payload } });
  }

  mark(name: string): string {
    return JSON.stringify({ event: 'checkpoint', streamId: this.streamId, name });
  }

  clear(): string {
    return JSON.stringify({ event: 'clearAudio', streamId: this.streamId });
  }
}

/**
 * Twilio Media Streams (bidirectional, `<Connect><Stream>`): JSON text frames. Inbound `connected`,
 * `start`, `media` (base64 mu-law 8 kHz), `mark`, `dtmf`, `stop`; outbound `media`, `mark`, `clear`,
 * each naming the stream by its `streamSid`. The envelope and the mu-law audio are shared with
 * Plivo's (../serializer.ts).
 */
import type { MediaEvent } from '../provider.js';
import { asObject, asText, MulawFrameSerializer, textValues, type Json } from '../serializer.js';

export class TwilioSerializer extends MulawFrameSerializer {
  constructor() {
    super('Twilio media');
  }

  protected decodeEvent(event: string, message: Json): MediaEvent {
    switch (event) {
      case 'connected':
        return { type: 'other' };
      case 'start': {
        const start = this.object(message.start, 'start');
        const streamSid = this.required(asText(start.streamSid) || message.streamSid, 'start.streamSid');
        const callSid = this.required(start.callSid, 'start.callSid');
        this.checkFormat(asObject(start.mediaFormat));
        this.streamId = streamSid;
        return { type: 'start', streamId: streamSid, callSid, customParameters: textValues(start.customParameters) };
      }
      case 'media': {
        const audio = this.callerAudio(message);
        if (!audio) return { type: 'other' };
        const timestampMs = Number(audio.media.timestamp);
        return { type: 'audio', pcm: audio.pcm, mulaw: audio.mulaw, ...(audio.media.timestamp !== undefined && Number.isFinite(timestampMs) ? { timestampMs } : {}) };
      }
      case 'mark':
        return { type: 'mark', name: this.required(asObject(message.mark)?.name, 'mark.name') };
      case 'dtmf':
        return { type: 'dtmf', digit: this.required(asObject(message.dtmf)?.digit, 'dtmf.digit') };
      case 'stop':
        return { type: 'stop' };
      default:
        throw this.error(`event "${event}" is unknown`);
    }
  }

  protected mediaFrame(payload: string): string {
    return JSON.stringify({ event: 'media', streamSid: this.streamId, media: { payload } });
  }

  mark(name: string): string {
    return JSON.stringify({ event: 'mark', streamSid: this.streamId, mark: { name } });
  }

  clear(): string {
    return JSON.stringify({ event: 'clear', streamSid: this.streamId });
  }
}

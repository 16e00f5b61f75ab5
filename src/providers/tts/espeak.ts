/** Local speech with the espeak-ng program: no account, no network; robotic but instant. */
import { synthesize } from '../../lib/audio.js';
import { ServiceError, type TTS } from '../../voice/services.js';

export class EspeakTTS implements TTS {
  readonly label = 'espeak-ng';
  readonly sampleRateHz = 16000;

  constructor(private readonly voice = process.env.ESPEAK_VOICE?.trim() || 'en-us') {}

  async *synthesize(text: string, options: { signal: AbortSignal }): AsyncIterable<Int16Array> {
    try {
      yield await synthesize(text, { sampleRateHz: this.sampleRateHz, voice: this.voice, signal: options.signal });
    } catch (err) {
      if (options.signal.aborted) return;
      throw new ServiceError(this.label, (err as Error).message, false, { cause: err });
    }
  }
}

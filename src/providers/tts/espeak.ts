/** The local voice as a TTS service: no account, no network (flite from npm, or espeak-ng when configured). */
import { DEFAULT_LOCAL_VOICE, synthesize, warmUp, type LocalVoice } from '../../lib/speech.js';
import { ServiceError, type TTS } from '../../voice/services.js';

export class LocalTTS implements TTS {
  /** The rate it speaks at, known before one is made (making one warms its engine). */
  static readonly RATE_HZ = 16000;
  readonly label: string;
  readonly sampleRateHz = LocalTTS.RATE_HZ;

  constructor(private readonly voice: LocalVoice = DEFAULT_LOCAL_VOICE) {
    this.label = voice.engine;
    warmUp(voice);
  }

  async *synthesize(text: string, options: { signal: AbortSignal }): AsyncIterable<Int16Array> {
    try {
      yield await synthesize(text, { sampleRateHz: this.sampleRateHz, voice: this.voice, signal: options.signal });
    } catch (err) {
      if (options.signal.aborted) return;
      throw new ServiceError(this.label, (err as Error).message, false, { cause: err });
    }
  }
}

/** The emulated callee's audio: its spoken lines, the PCM each side sent, and the clock every live leg plays on. */
import { DEFAULT_LOCAL_VOICE, synthesize, type LocalVoice } from '../lib/speech.js';

/** Callees say the same lines again and again: synthesise each once per voice. */
const spoken = new Map<string, Promise<Int16Array>>();

export function speech(text: string, voice: LocalVoice = DEFAULT_LOCAL_VOICE): Promise<Int16Array> {
  const key = `${voice.engine}:${voice.voice}:${text}`;
  let pcm = spoken.get(key);
  if (!pcm) {
    pcm = synthesize(text, { sampleRateHz: 8000, voice });
    pcm.catch(() => spoken.delete(key));
    if (spoken.size > 200) spoken.delete(spoken.keys().next().value!);
    spoken.set(key, pcm);
  }
  return pcm;
}

/** Growing PCM kept as chunks; `value` concatenates (cached). */
export class PcmBuffer {
  private chunks: Int16Array[] = [];
  private cache: Int16Array | undefined = new Int16Array(0);
  push(pcm: Int16Array): void {
    if (pcm.length === 0) return;
    this.chunks.push(pcm);
    this.cache = undefined;
  }
  get value(): Int16Array {
    if (!this.cache) {
      const total = this.chunks.reduce((n, c) => n + c.length, 0);
      this.cache = new Int16Array(total);
      let at = 0;
      for (const c of this.chunks) (this.cache.set(c, at), (at += c.length));
      this.chunks = [this.cache];
    }
    return this.cache;
  }
}

export interface CallAudio {
  received: PcmBuffer;
  sent: PcmBuffer;
}

export interface CallAudio {
  received: PcmBuffer;
  sent: PcmBuffer;
}

/**
 * One clock for every live leg: a 10 ms timer per call would be a hundred timers for a hundred
 * calls, each waking the event loop on its own. Each leg still counts its frames from its own start.
 */
export const clock = {
  legs: new Set<{ tick(): void }>(),
  timer: undefined as NodeJS.Timeout | undefined,
  add(leg: { tick(): void }): void {
    this.legs.add(leg);
    this.timer ??= setInterval(() => {
      for (const l of this.legs) l.tick();
    }, 10);
  },
  remove(leg: { tick(): void }): void {
    this.legs.delete(leg);
    if (this.legs.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  },
};

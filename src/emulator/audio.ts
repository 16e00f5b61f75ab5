/** The emulated callee's audio: its spoken lines, the PCM each side sent, and the clock every live leg plays on. */
import { encodeMulaw, pcmToBytes, resample } from '../lib/audio.js';
import { DEFAULT_LOCAL_VOICE, synthesize, type LocalVoice } from '../lib/speech.js';

const FRAME = 160; // samples of 8 kHz in 20 ms
/** What a quiet callee sends: one frame object shared by every call (frames are never written to). */
export const SILENCE = new Int16Array(FRAME);

/**
 * Callees say the same lines again and again: each is synthesised once per voice and cut into
 * 20 ms frames once, so every call saying it sends the same frame objects.
 */
const spoken = new Map<string, Promise<Int16Array[]>>();

export function speechFrames(text: string, voice: LocalVoice = DEFAULT_LOCAL_VOICE): Promise<Int16Array[]> {
  const key = `${voice.engine}:${voice.voice}:${text}`;
  let frames = spoken.get(key);
  if (!frames) {
    frames = synthesize(text, { sampleRateHz: 8000, voice }).then((pcm) => {
      const out: Int16Array[] = [];
      for (let at = 0; at < pcm.length; at += FRAME) {
        const frame = pcm.subarray(at, at + FRAME);
        out.push(frame.length === FRAME ? frame : padded(frame));
      }
      return out;
    });
    frames.catch(() => spoken.delete(key));
    if (spoken.size > 200) spoken.delete(spoken.keys().next().value!);
    spoken.set(key, frames);
  }
  return frames;
}

function padded(frame: Int16Array): Int16Array {
  const out = new Int16Array(FRAME);
  out.set(frame);
  return out;
}

/**
 * Callee frames encoded for the wire, by format (mu-law or 16-bit PCM, and rate): a frame is
 * encoded once however many calls send it, so the far side of a load test spends its time sending
 * frames, not encoding the same audio again for every call.
 */
const encoded = new Map<string, WeakMap<Int16Array, string>>();

export function encodeFrame(frame: Int16Array, mulaw: boolean, rate: number): string {
  const format = `${mulaw ? 'mulaw' : 'l16'}/${rate}`;
  let cache = encoded.get(format);
  if (!cache) encoded.set(format, (cache = new WeakMap()));
  let payload = cache.get(frame);
  if (payload === undefined) {
    const pcm = resample(frame, 8000, rate);
    payload = (mulaw ? encodeMulaw(pcm) : pcmToBytes(pcm)).toString('base64');
    cache.set(frame, payload);
  }
  return payload;
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

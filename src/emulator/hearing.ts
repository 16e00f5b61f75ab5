/**
 * What an emulated callee hears of Dialer's voice: when it last heard a voice, the spans of voice on
 * the call's timeline, and the waits a callee's script makes on them (for Dialer to speak, to fall
 * quiet).
 */
import { rms } from '../lib/audio.js';
import { sleep } from './util.js';

/** A frame louder than this (RMS) is voice. */
const VOICE_RMS = 300;
const FRAME_MS = 20;

export interface HearingOptions {
  /** Where the spans of voice go (the call's record), ms from the stream's start. */
  voiced: Array<{ fromMs: number; toMs: number }>;
  /** Whether the stream is still live. */
  live(): boolean;
  /** Whether audio of Dialer's is queued and not yet played. */
  queued(): boolean;
  /** Ms since the stream's start. */
  nowMs(): number;
}

function concat(parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((at, p) => (out.set(p, at), at + p.length), 0);
  return out;
}

export class Hearing {
  private lastVoiceAt = -Infinity;

  constructor(private readonly o: HearingOptions) {}

  /** The pieces of Dialer's audio played in the 20 ms frame that starts at `fromMs`. */
  heard(played: Int16Array[], fromMs: number): void {
    if (played.length === 0 || rms(played.length === 1 ? played[0]! : concat(played)) <= VOICE_RMS) return;
    this.lastVoiceAt = Date.now();
    // Joined to a span that ended at most a frame before.
    const spans = this.o.voiced;
    const last = spans[spans.length - 1];
    if (last && fromMs - last.toMs <= FRAME_MS) last.toMs = fromMs + FRAME_MS;
    else spans.push({ fromMs, toMs: fromMs + FRAME_MS });
  }

  /** Waits (up to `maxMs`) for Dialer to speak and then be quiet for 400 ms. */
  async waitForAudio(maxMs: number): Promise<void> {
    const start = Date.now();
    while (this.o.live() && Date.now() - start < maxMs) {
      const heard = this.lastVoiceAt > start - 400;
      if (heard && !this.o.queued() && Date.now() - this.lastVoiceAt >= 400) return;
      await sleep(20);
    }
  }

  /** Waits (up to `timeoutMs`) until Dialer has been quiet for `quietMs`. */
  async waitForQuiet(quietMs: number, timeoutMs: number): Promise<void> {
    const start = Date.now();
    while (this.o.live() && Date.now() - start < timeoutMs) {
      if (!this.o.queued() && Date.now() - Math.max(this.lastVoiceAt, start) >= quietMs) return;
      await sleep(20);
    }
  }

  /** Waits until Dialer's voice has been heard for `speakingMs`, the gaps of speech (under 600 ms) included. */
  async waitForSpeech(speakingMs: number, timeoutMs: number): Promise<void> {
    const start = Date.now();
    const from = this.o.voiced.length;
    while (this.o.live() && Date.now() - start < timeoutMs) {
      const spans = this.o.voiced.slice(Math.max(0, from - 1));
      let runFrom: number | undefined;
      let runTo = -Infinity;
      for (const s of spans) {
        if (runFrom === undefined || s.fromMs - runTo > 600) runFrom = s.fromMs;
        runTo = s.toMs;
      }
      if (runFrom !== undefined && this.o.nowMs() - runTo < 60 && runTo - runFrom >= speakingMs) return;
      await sleep(10);
    }
  }
}

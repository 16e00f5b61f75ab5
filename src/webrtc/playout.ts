/**
 * Paces the agent's audio into WebRTC: libwebrtc's audio source takes 10 ms frames and sends what
 * it is given at once, so Dialer feeds it one frame per 10 ms of wall time (silence when nothing is
 * queued, which keeps the receiver's jitter buffer steady). A queued sound resolves `played` once
 * its last frame has gone out, `cleared` on a barge-in, `ended` when the session closes.
 */
import type { PlayResult } from '../voice/index.js';
import { takeFrame } from '../lib/pcm-buffers.js';

export const WEBRTC_RATE_HZ = 48_000;
const FRAME_SAMPLES = WEBRTC_RATE_HZ / 100;
/** After a stall (a busy event loop) send at most this many frames at once, then drop the debt. */
const MAX_CATCH_UP_FRAMES = 10;

interface Item {
  pcm: Int16Array;
  offset: number;
  done(result: PlayResult): void;
}

export class Playout {
  private readonly queue: Item[] = [];
  private readonly timer: NodeJS.Timeout;
  private readonly startedAt = performance.now();
  private framesSent = 0;
  private closed = false;

  constructor(private readonly send: (frame: Int16Array) => void) {
    this.timer = setInterval(() => this.tick(), 10);
  }

  /** Queues 48 kHz PCM. */
  play(pcm: Int16Array): Promise<PlayResult> {
    if (this.closed) return Promise.resolve('ended');
    return new Promise((done) => this.queue.push({ pcm, offset: 0, done }));
  }

  clear(): void {
    for (const item of this.queue.splice(0)) item.done('cleared');
  }

  get idle(): boolean {
    return this.queue.length === 0;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    for (const item of this.queue.splice(0)) item.done('ended');
  }

  private tick(): void {
    const due = Math.floor((performance.now() - this.startedAt) / 10) - this.framesSent;
    if (due > MAX_CATCH_UP_FRAMES) this.framesSent += due - MAX_CATCH_UP_FRAMES;
    for (let i = 0; i < Math.min(due, MAX_CATCH_UP_FRAMES); i++) {
      this.send(this.nextFrame());
      this.framesSent++;
    }
  }

  private nextFrame(): Int16Array {
    return takeFrame(this.queue, FRAME_SAMPLES, (item) => item.done('played'));
  }
}

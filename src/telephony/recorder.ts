/**
 * Records one call from its media stream: the person's audio as it arrives (providers stream
 * continuously, silence included) and Dialer's audio placed where it was played, cut where a
 * barge-in cleared it. `wav()` mixes both into one mono WAV.
 */
import { encodeWav, mixInto } from '../lib/audio.js';
import { PcmBlocks } from '../lib/pcm-buffers.js';

interface Segment {
  at: number;
  pcm: Int16Array;
}

/** The person's audio is copied into blocks of this many seconds, not kept as one array per frame. */
const BLOCK_SECONDS = 1;

export class CallRecorder {
  /** The person's audio (a frame's own array kept for the whole call would be fifty objects a second to trace). */
  private readonly inbound: PcmBlocks;
  private readonly outbound: Segment[] = [];
  /** Where Dialer's queued audio ends, in samples since the stream started. */
  private playCursor = 0;
  private readonly startedAt: number;
  /** The call is over: nothing Dialer queues from now on is heard. */
  private over = false;

  constructor(readonly sampleRateHz: number, private readonly now: () => number = () => performance.now()) {
    this.startedAt = now();
    this.inbound = new PcmBlocks(sampleRateHz * BLOCK_SECONDS);
  }

  private nowSamples(): number {
    return Math.floor(((this.now() - this.startedAt) * this.sampleRateHz) / 1000);
  }

  /** The person's audio. */
  heard(pcm: Int16Array): void {
    this.inbound.append(pcm);
  }

  /** Dialer's audio, queued for playout now. */
  played(pcm: Int16Array): void {
    if (this.over) return;
    const at = Math.max(this.playCursor, this.nowSamples());
    this.outbound.push({ at, pcm });
    this.playCursor = at + pcm.length;
  }

  /** A barge-in: whatever had not been played yet was never heard. */
  cleared(): void {
    const cut = this.nowSamples();
    for (let i = this.outbound.length - 1; i >= 0; i--) {
      const s = this.outbound[i]!;
      if (s.at >= cut) this.outbound.splice(i, 1);
      else if (s.at + s.pcm.length > cut) s.pcm = s.pcm.subarray(0, cut - s.at);
    }
    this.playCursor = Math.min(this.playCursor, cut);
  }

  /**
   * The call ended (hung up, the stream closed): what Dialer had queued beyond this instant was
   * never heard, and is not recorded (a disclosure or a reply cut short by a hang-up ends where
   * the call did). The person's audio has stopped arriving already.
   */
  ended(): void {
    if (this.over) return;
    this.cleared();
    this.over = true;
  }

  /** Where the recording is now, in milliseconds from its start: what a transcript line's `at_ms` is measured in. */
  elapsedMs(): number {
    return Math.max(0, Math.round(this.now() - this.startedAt));
  }

  /** Seconds of audio recorded so far. */
  get seconds(): number {
    return this.length() / this.sampleRateHz;
  }

  private length(): number {
    const lastOut = this.outbound.reduce((m, s) => Math.max(m, s.at + s.pcm.length), 0);
    return Math.max(this.inbound.length, lastOut);
  }

  wav(): Buffer {
    const mix = new Int16Array(this.length());
    mix.set(this.inbound.take());
    for (const s of this.outbound) mixInto(mix, s.pcm, s.at);
    return encodeWav(mix, this.sampleRateHz);
  }
}

/**
 * Audio kept as it streams by (the recording, the segment a transcription is sent, the last seconds
 * before a voicemail beep, the tail an end-of-turn model is given), copied out of the frames that
 * carried it into a few large arrays: a frame's own array (20 ms) kept for seconds is one more
 * long-lived object, fifty a second per call, for the garbage collector to trace.
 */

/** The last `capacity` samples of a stream. */
export class PcmRing {
  private readonly data: Int16Array;
  /** Where the next sample goes. */
  private at = 0;
  private kept = 0;

  constructor(capacity: number) {
    this.data = new Int16Array(Math.max(1, Math.round(capacity)));
  }

  get capacity(): number {
    return this.data.length;
  }

  /** Samples kept (at most the capacity). */
  get length(): number {
    return this.kept;
  }

  append(pcm: Int16Array): void {
    const cap = this.data.length;
    const src = pcm.length > cap ? pcm.subarray(pcm.length - cap) : pcm;
    const first = Math.min(src.length, cap - this.at);
    this.data.set(src.subarray(0, first), this.at);
    if (first < src.length) this.data.set(src.subarray(first), 0);
    this.at = (this.at + src.length) % cap;
    this.kept = Math.min(cap, this.kept + pcm.length);
  }

  /**
   * `n` samples (at most the capacity) that ended `skip` samples before the newest, oldest first;
   * silence where they reach back before the stream's first sample kept.
   */
  last(n: number = this.kept, skip = 0): Int16Array {
    const cap = this.data.length;
    const count = Math.max(0, Math.min(Math.round(n), cap));
    const back = Math.max(0, Math.min(Math.round(skip), cap - count));
    const out = new Int16Array(count);
    // Of the `count` samples wanted, only those the ring holds are copied (the rest stay silence).
    const held = Math.max(0, Math.min(count, this.kept - back));
    const end = (this.at - back + cap) % cap;
    const start = (end - held + cap) % cap;
    const first = Math.min(held, cap - start);
    out.set(this.data.subarray(start, start + first), count - held);
    if (first < held) out.set(this.data.subarray(0, held - first), count - held + first);
    return out;
  }

  clear(): void {
    this.at = 0;
    this.kept = 0;
  }
}

/**
 * A stream's samples in blocks of `blockSamples`, with at most the last `maxSamples` kept (whole
 * blocks dropped from the front while the rest still holds that many).
 */
export class PcmBlocks {
  private blocks: Int16Array[] = [];
  /** Samples used in the last block. */
  private filled = 0;
  private kept = 0;

  constructor(
    private readonly blockSamples: number,
    private readonly maxSamples = Infinity,
  ) {}

  get length(): number {
    return this.kept;
  }

  append(pcm: Int16Array): void {
    for (let from = 0; from < pcm.length; ) {
      let block = this.blocks[this.blocks.length - 1];
      if (!block || this.filled === block.length) {
        block = new Int16Array(Math.max(1, Math.round(this.blockSamples)));
        this.blocks.push(block);
        this.filled = 0;
      }
      const n = Math.min(pcm.length - from, block.length - this.filled);
      block.set(pcm.subarray(from, from + n), this.filled);
      this.filled += n;
      from += n;
    }
    this.kept += pcm.length;
    while (this.blocks.length > 1 && this.kept - this.blocks[0]!.length >= this.maxSamples) this.kept -= this.blocks.shift()!.length;
  }

  /** Every sample kept, oldest first, in one array. */
  take(): Int16Array {
    const out = new Int16Array(this.kept);
    let at = 0;
    for (const [i, block] of this.blocks.entries()) {
      const used = i === this.blocks.length - 1 ? block.subarray(0, this.filled) : block;
      out.set(used, at);
      at += used.length;
    }
    return out;
  }

  clear(): void {
    this.blocks = [];
    this.filled = 0;
    this.kept = 0;
  }
}

/** Audio queued to be played, and how much of it has been. */
export interface QueuedPcm {
  pcm: Int16Array;
  offset: number;
}

/**
 * The next frame of `samples` from the front of a playout queue (silence where the queue runs
 * out); each queued audio whose last sample it takes leaves the queue and is handed to `played`.
 */
export function takeFrame<T extends QueuedPcm>(queue: T[], samples: number, played: (item: T) => void): Int16Array {
  const frame = new Int16Array(samples);
  let filled = 0;
  while (filled < samples && queue.length > 0) {
    const item = queue[0]!;
    const n = Math.min(samples - filled, item.pcm.length - item.offset);
    frame.set(item.pcm.subarray(item.offset, item.offset + n), filled);
    filled += n;
    item.offset += n;
    if (item.offset >= item.pcm.length) {
      queue.shift();
      played(item);
    }
  }
  return frame;
}

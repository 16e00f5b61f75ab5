/**
 * The beep at the end of a voicemail greeting, heard in the caller's audio: a steady narrow-band
 * tone (one frequency between 400 and 2,000 Hz holding most of the sound's energy, block after
 * block) lasting about 0.3 to 1.5 s. Speech has its energy spread over many harmonics that glide;
 * noise has it everywhere; neither holds one frequency for that long.
 *
 * Pure DSP: feed the caller's audio in order; the detector reports the beep once, when it ends
 * (the moment a message may start).
 */
import { concentration, goertzel, windowed } from '../../lib/tones.js';

export interface BeepOptions {
  sampleRateHz: number;
  /** Lowest and highest beep frequency looked for. */
  minHz?: number;
  maxHz?: number;
  /** Shortest tone that counts (ms). */
  minMs?: number;
  /** A tone this long counts as ended (a greeting that never stops beeping still gets its message). */
  maxMs?: number;
  /** Share of a block's energy the tone must hold (0-1). */
  minConcentration?: number;
  /** How far the tone may wander between blocks (Hz). */
  toleranceHz?: number;
}

export interface Beep {
  /** When the tone started and ended, in ms of audio since the detector's first sample. */
  startMs: number;
  endMs: number;
  frequencyHz: number;
}

/** A tone being followed: its first and last blocks, whether the block after the last missed it, its frequencies. */
interface Run {
  first: number;
  last: number;
  missed: boolean;
  hz: number[];
}

const BLOCK_MS = 20;
/** Frequency step of the search; the Hann main lobe of a 20 ms block is far wider. */
const STEP_HZ = 20;
/** Blocks quieter than this (RMS) are silence, whatever their spectrum. */
const MIN_RMS = 150;

export class BeepDetector {
  private readonly o: Required<BeepOptions>;
  private readonly block: number;
  private readonly pending: number[] = [];
  private readonly candidates: number[] = [];
  private blocks = 0;
  /** The tone being followed: its first block, its blocks, its frequencies. */
  private run: Run | undefined;
  private found: Beep | undefined;

  constructor(options: BeepOptions) {
    this.o = { minHz: 400, maxHz: 2000, minMs: 280, maxMs: 2500, minConcentration: 0.6, toleranceHz: 40, ...options };
    this.block = Math.round((this.o.sampleRateHz * BLOCK_MS) / 1000);
    for (let hz = this.o.minHz; hz <= this.o.maxHz; hz += STEP_HZ) this.candidates.push(hz);
  }

  /** The beep, once heard. */
  get beep(): Beep | undefined {
    return this.found;
  }

  /** Audio received so far, in ms. */
  get heardMs(): number {
    return this.blocks * BLOCK_MS;
  }

  /** Feeds caller audio; returns the beep the moment it is complete (once), else undefined. */
  push(pcm: Int16Array): Beep | undefined {
    if (this.found) return undefined;
    for (const sample of pcm) this.pending.push(sample);
    while (this.pending.length >= this.block && !this.found) {
      const block = this.pending.splice(0, this.block);
      this.analyse(block);
    }
    return this.found;
  }

  private analyse(block: number[]): void {
    const index = this.blocks++;
    const hz = this.toneOf(block);
    const run = this.run;
    if (run && hz !== undefined && Math.abs(hz - median(run.hz)) <= this.o.toleranceHz) {
      run.last = index;
      run.missed = false;
      run.hz.push(hz);
      if (this.lengthMs(run) >= this.o.maxMs) this.complete(run);
      return;
    }
    // One block lost to a click or a dropout does not break a tone.
    if (run && !run.missed && hz === undefined) {
      run.missed = true;
      return;
    }
    if (run && this.lengthMs(run) >= this.o.minMs) {
      this.complete(run);
      return;
    }
    this.run = hz === undefined ? undefined : { first: index, last: index, missed: false, hz: [hz] };
  }

  private lengthMs(run: Run): number {
    return (run.last - run.first + 1) * BLOCK_MS;
  }

  private complete(run: Run): void {
    this.found = { startMs: run.first * BLOCK_MS, endMs: (run.last + 1) * BLOCK_MS, frequencyHz: Math.round(median(run.hz)) };
  }

  /** The block's tone frequency when one frequency holds most of its energy, else undefined. */
  private toneOf(block: number[]): number | undefined {
    const { samples, energy } = windowed(block);
    // Hann keeps 3/8 of a signal's energy.
    if (Math.sqrt(energy / (0.375 * block.length)) < MIN_RMS) return undefined;
    let bestHz = 0;
    let bestPower = -1;
    for (const hz of this.candidates) {
      const p = goertzel(samples, hz, this.o.sampleRateHz);
      if (p > bestPower) (bestPower = p), (bestHz = hz);
    }
    // Refine between the neighbours, then judge the share at the refined frequency.
    for (const hz of [bestHz - STEP_HZ / 2, bestHz + STEP_HZ / 2]) {
      const p = goertzel(samples, hz, this.o.sampleRateHz);
      if (p > bestPower) (bestPower = p), (bestHz = hz);
    }
    return concentration(bestPower, energy, block.length) >= this.o.minConcentration ? bestHz : undefined;
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

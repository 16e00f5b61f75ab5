/**
 * Tones on a phone line, pure DSP over PCM (signed 16-bit mono): the power of one frequency in a
 * block of samples (the Goertzel algorithm), keypad tones (DTMF, ITU-T Q.23) made and recognised.
 *
 * Terminology
 * - block: a run of samples analysed together (20 ms = 160 samples at 8 kHz).
 * - concentration: the share of a Hann-windowed block's energy that one frequency holds, 0 to 1;
 *   about 1 for a pure tone, well under a half for speech or noise.
 */

/** Hann windows by block length (blocks are mostly one size). */
const windows = new Map<number, Float64Array>();

export function hann(length: number): Float64Array {
  let w = windows.get(length);
  if (!w) {
    w = new Float64Array(length);
    for (let i = 0; i < length; i++) w[i] = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (length - 1));
    windows.set(length, w);
  }
  return w;
}

/** The Hann-windowed block as floats, and its energy (sum of squares). */
export function windowed(pcm: ArrayLike<number>): { samples: Float64Array; energy: number } {
  const w = hann(pcm.length);
  const samples = new Float64Array(pcm.length);
  let energy = 0;
  for (let i = 0; i < pcm.length; i++) {
    const v = pcm[i]! * w[i]!;
    samples[i] = v;
    energy += v * v;
  }
  return { samples, energy };
}

/** Power (|X(f)|²) of frequency `hz` in `samples` (Goertzel). */
export function goertzel(samples: ArrayLike<number>, hz: number, sampleRateHz: number): number {
  const coeff = 2 * Math.cos((2 * Math.PI * hz) / sampleRateHz);
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < samples.length; i++) {
    const s0 = samples[i]! + coeff * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  return s1 * s1 + s2 * s2 - coeff * s1 * s2;
}

/**
 * The share of a windowed block's energy held by the tone at `hz`: a Hann-windowed sinusoid of
 * amplitude A over N samples has power (A·N/4)² at its frequency and energy 3·A²·N/16, so
 * 3·power / (N·energy) is 1 for a pure tone and near 0 for broadband sound.
 */
export function concentration(power: number, energy: number, length: number): number {
  return energy > 0 ? (3 * power) / (length * energy) : 0;
}

// ---------------------------------------------------------------------------------------------
// DTMF

const LOW = [697, 770, 852, 941] as const;
const HIGH = [1209, 1336, 1477, 1633] as const;
const KEYPAD = ['123A', '456B', '789C', '*0#D'] as const;

/** The keys a caller can press (and Dialer can send): digits, `*`, `#`. */
export const DTMF_KEYS = /^[0-9*#]$/;

/** Keys to send: digits, `*`, `#`, and `w` (a half-second pause), as Twilio's `sendDigits` spells them. */
export const DTMF_SEQUENCE = /^[0-9*#w]+$/;

function frequencies(key: string): [number, number] | undefined {
  for (let row = 0; row < 4; row++) {
    const col = KEYPAD[row]!.indexOf(key.toUpperCase());
    if (col >= 0) return [LOW[row]!, HIGH[col]!];
  }
  return undefined;
}

export interface DtmfToneOptions {
  sampleRateHz: number;
  /** Each key's tone (default 100 ms). */
  toneMs?: number;
  /** Silence after each key (default 100 ms). */
  gapMs?: number;
  /** Peak amplitude of each of the two tones (default 6,000: about -15 dBFS together). */
  amplitude?: number;
}

/**
 * In-band keypad tones for `sequence` (digits, `*`, `#`; `w` is 500 ms of silence), each key its
 * two sinusoids for `toneMs` and then `gapMs` of silence. Throws on any other character.
 */
export function dtmfTones(sequence: string, options: DtmfToneOptions): Int16Array {
  const rate = options.sampleRateHz;
  const tone = Math.round(((options.toneMs ?? 100) * rate) / 1000);
  const gap = Math.round(((options.gapMs ?? 100) * rate) / 1000);
  const pause = Math.round(0.5 * rate);
  const amplitude = options.amplitude ?? 6000;
  let length = 0;
  for (const key of sequence) length += key === 'w' ? pause : tone + gap;
  const out = new Int16Array(length);
  let at = 0;
  for (const key of sequence) {
    if (key === 'w') {
      at += pause;
      continue;
    }
    const pair = frequencies(key);
    if (!pair) throw new RangeError(`"${key}" is not a keypad key (0-9, *, #, or w for a pause)`);
    for (let i = 0; i < tone; i++) {
      const t = i / rate;
      out[at + i] = Math.round(amplitude * (Math.sin(2 * Math.PI * pair[0] * t) + Math.sin(2 * Math.PI * pair[1] * t)));
    }
    at += tone + gap;
  }
  return out;
}

/**
 * Hears keypad tones in audio, block by block (feed 20 ms blocks in order): a key is reported once
 * its two tones have held for two blocks, and again only after a block without them.
 */
export class DtmfDetector {
  private candidate: string | undefined;
  private held = 0;
  private reported = false;

  constructor(
    private readonly sampleRateHz: number,
    /** Called with each key heard. */
    private readonly onKey: (key: string) => void,
  ) {}

  push(block: ArrayLike<number>): void {
    const key = this.keyIn(block);
    if (key !== this.candidate) {
      this.candidate = key;
      this.held = 0;
      this.reported = false;
    }
    if (key === undefined) return;
    this.held++;
    if (this.held >= 2 && !this.reported) {
      this.reported = true;
      this.onKey(key);
    }
  }

  private keyIn(block: ArrayLike<number>): string | undefined {
    const { samples, energy } = windowed(block);
    // Below about -50 dBFS: silence, not a key.
    if (energy / block.length < 100 * 100 * 0.375) return undefined;
    const best = (group: readonly number[]) => {
      let index = 0;
      let power = -1;
      group.forEach((hz, i) => {
        const p = goertzel(samples, hz, this.sampleRateHz);
        if (p > power) (power = p), (index = i);
      });
      return { index, share: concentration(power, energy, block.length) };
    };
    const low = best(LOW);
    const high = best(HIGH);
    // Two tones share the energy: each holds a good part of it, together nearly all.
    if (low.share < 0.2 || high.share < 0.2 || low.share + high.share < 0.6) return undefined;
    return KEYPAD[low.index]![high.index];
  }
}

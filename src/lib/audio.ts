/**
 * Audio helpers shared by telephony, recordings and the emulator: G.711 mu-law (A-law: alaw.ts), WAV files,
 * resampling and signal level (speech synthesis is speech.ts).
 * PCM is signed 16-bit mono as an Int16Array.
 */

const BIAS = 0x84;
const CLIP = 32635;

/** G.711 mu-law: one 16-bit sample to one byte. */
export function linearToMulaw(sample: number): number {
  let s = Math.max(-CLIP, Math.min(CLIP, sample | 0));
  const sign = s < 0 ? 0x80 : 0;
  if (sign) s = -s;
  s += BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (s & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (s >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

const MULAW_TABLE = (() => {
  const table = new Int16Array(256);
  for (let i = 0; i < 256; i++) {
    const u = ~i & 0xff;
    const sign = u & 0x80;
    const exponent = (u >> 4) & 0x07;
    const mantissa = u & 0x0f;
    const magnitude = (((mantissa << 3) + BIAS) << exponent) - BIAS;
    table[i] = sign ? -magnitude : magnitude;
  }
  return table;
})();

export function mulawToLinear(byte: number): number {
  return MULAW_TABLE[byte & 0xff]!;
}

/** A G.711 encoder over a sample's byte (mu-law here, A-law in alaw.ts). */
export function g711Encoder(toByte: (sample: number) => number): (pcm: Int16Array) => Buffer {
  return (pcm) => {
    const out = Buffer.allocUnsafe(pcm.length);
    for (let i = 0; i < pcm.length; i++) out[i] = toByte(pcm[i]!);
    return out;
  };
}

/** A G.711 decoder over the 256 samples its bytes stand for. */
export function g711Decoder(table: Int16Array): (bytes: Uint8Array) => Int16Array {
  return (bytes) => {
    const out = new Int16Array(bytes.length);
    for (let i = 0; i < bytes.length; i++) out[i] = table[bytes[i]!]!;
    return out;
  };
}

export const encodeMulaw = g711Encoder(linearToMulaw);
export const decodeMulaw = g711Decoder(MULAW_TABLE);

/** PCM as little-endian bytes (what L16 frames and WAV data carry). */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export function pcmToBytes(pcm: Int16Array): Buffer {
  // On little-endian machines (all we run on) the samples already are the bytes: one copy.
  if (LITTLE_ENDIAN) return Buffer.from(new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength));
  const out = Buffer.allocUnsafe(pcm.length * 2);
  for (let i = 0; i < pcm.length; i++) out.writeInt16LE(pcm[i]!, i * 2);
  return out;
}

/** Little-endian bytes to PCM; a trailing odd byte is dropped. */
export function bytesToPcm(bytes: Uint8Array): Int16Array {
  const n = bytes.length >> 1;
  if (LITTLE_ENDIAN) {
    const copy = new Uint8Array(n * 2);
    copy.set(bytes.subarray(0, n * 2));
    return new Int16Array(copy.buffer);
  }
  const out = new Int16Array(n);
  const view = new DataView(bytes.buffer, bytes.byteOffset, n * 2);
  for (let i = 0; i < n; i++) out[i] = view.getInt16(i * 2, true);
  return out;
}

/** A WAV file (RIFF, PCM 16-bit mono). */
export function encodeWav(pcm: Int16Array, sampleRateHz: number): Buffer {
  const data = pcmToBytes(pcm);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(sampleRateHz, 24);
  header.writeUInt32LE(sampleRateHz * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

export interface DecodedWav {
  sampleRateHz: number;
  channels: number;
  pcm: Int16Array;
}

/** Reads a 16-bit PCM WAV file (the first channel when there are several). Throws on anything else. */
export function decodeWav(file: Uint8Array): DecodedWav {
  const buf = Buffer.from(file.buffer, file.byteOffset, file.byteLength);
  if (buf.length < 12 || buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') {
    throw new Error('not a WAV file');
  }
  let offset = 12;
  let sampleRateHz = 0;
  let channels = 0;
  let bits = 0;
  while (offset + 8 <= buf.length) {
    const id = buf.toString('ascii', offset, offset + 4);
    let size = buf.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ') {
      if (buf.readUInt16LE(body) !== 1) throw new Error('WAV is not PCM');
      channels = buf.readUInt16LE(body + 2);
      sampleRateHz = buf.readUInt32LE(body + 4);
      bits = buf.readUInt16LE(body + 14);
    } else if (id === 'data') {
      if (bits !== 16) throw new Error(`WAV has ${bits}-bit samples; 16-bit expected`);
      // espeak-ng --stdout writes an unknown length (0x7fffffff) when it streams.
      if (size > buf.length - body) size = buf.length - body;
      const all = bytesToPcm(buf.subarray(body, body + size));
      if (channels <= 1) return { sampleRateHz, channels: 1, pcm: all };
      const mono = new Int16Array(Math.floor(all.length / channels));
      for (let i = 0; i < mono.length; i++) mono[i] = all[i * channels]!;
      return { sampleRateHz, channels, pcm: mono };
    }
    offset = body + size + (size & 1);
  }
  throw new Error('WAV has no data chunk');
}

/**
 * Band-limited resampling: a polyphase windowed-sinc (Kaiser) filter at the rational ratio of the
 * two rates, cutting off just below the lower Nyquist frequency, so going down does not alias and
 * going up does not image. `resample` is one-shot; `Resampler` keeps filter state across chunks so
 * 20 ms frames come out exactly as the whole signal would (no clicks at frame boundaries).
 */
export function resample(pcm: Int16Array, fromHz: number, toHz: number): Int16Array {
  if (fromHz === toHz || pcm.length === 0) return pcm;
  const resampler = new Resampler(fromHz, toHz);
  const head = resampler.process(pcm);
  const tail = resampler.flush();
  const out = new Int16Array(head.length + tail.length);
  out.set(head);
  out.set(tail, head.length);
  return out;
}

/**
 * Zero crossings of the sinc on each side: the steepness of the filter (and its look-ahead). 16
 * keeps the telephone band nearly flat (-0.53 dB at 3.3 kHz through 8 -> 16 kHz and back, -0.01 dB with
 * 24) with the stopband the Kaiser window gives, for two thirds of the multiplications of 24: the
 * resampler is the largest share of a call's CPU (bench:voice).
 */
const SINC_ZEROS = 16;
/** Cut-off as a fraction of the lower Nyquist frequency: the passband keeps speech up to ~0.9 of it. */
const CUTOFF = 0.92;
/** Kaiser window beta: about 80 dB of stopband. */
const KAISER_BETA = 8.6;

interface Polyphase {
  /** Output step in input samples is `down / up`. */
  up: number;
  down: number;
  /** Taps reach `halfWidth` input samples each side of the output instant. */
  halfWidth: number;
  /** `up` phases of `2 * halfWidth` taps each, phase-major. */
  taps: Float32Array;
  /**
   * Per phase, how its taps mirror (the sinc and window are even): 1 = about tap `halfWidth - 1`
   * (the output falls on an input sample), 2 = about the middle between taps `halfWidth - 1` and
   * `halfWidth` (half-way between two), 0 = not at all. Mirrored taps need half the multiplications.
   */
  mirror: Uint8Array;
}

/** How the taps of one phase mirror (see Polyphase.mirror); exact equality only. */
function mirrorOf(taps: Float32Array, row: number, halfWidth: number): number {
  const width = 2 * halfWidth;
  let half = true;
  for (let i = 0; i < halfWidth && half; i++) half = taps[row + i] === taps[row + width - 1 - i];
  if (half) return 2;
  const c = halfWidth - 1;
  let center = true;
  for (let k = 1; k < halfWidth && center; k++) center = taps[row + c - k] === taps[row + c + k];
  return center ? 1 : 0;
}

const filters = new Map<string, Polyphase>();

function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  for (let k = 1; k < 50; k++) {
    term *= (x / (2 * k)) ** 2;
    sum += term;
    if (term < sum * 1e-12) break;
  }
  return sum;
}

function polyphase(fromHz: number, toHz: number): Polyphase {
  const key = `${fromHz}:${toHz}`;
  const cached = filters.get(key);
  if (cached) return cached;
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  const g = gcd(fromHz, toHz);
  const up = toHz / g;
  const down = fromHz / g;
  // Cut-off in cycles per input sample, relative to the input's Nyquist frequency.
  const cutoff = CUTOFF * Math.min(1, toHz / fromHz);
  const halfWidth = Math.ceil(SINC_ZEROS / cutoff);
  const width = 2 * halfWidth;
  const taps = new Float32Array(up * width);
  const i0Beta = besselI0(KAISER_BETA);
  for (let phase = 0; phase < up; phase++) {
    const frac = phase / up;
    let sum = 0;
    for (let i = 0; i < width; i++) {
      // Input sample k - halfWidth + 1 + i sits x input samples before the output instant k + frac.
      const x = frac + halfWidth - 1 - i;
      const r = x / halfWidth;
      const window = Math.abs(r) >= 1 ? 0 : besselI0(KAISER_BETA * Math.sqrt(1 - r * r)) / i0Beta;
      const arg = Math.PI * cutoff * x;
      const sinc = x === 0 ? 1 : Math.sin(arg) / arg;
      const h = cutoff * sinc * window;
      taps[phase * width + i] = h;
      sum += h;
    }
    // Unit gain at DC for every phase: no ripple in the level of a steady signal.
    for (let i = 0; i < width; i++) taps[phase * width + i]! /= sum;
  }
  const mirror = Uint8Array.from({ length: up }, (_, phase) => mirrorOf(taps, phase * width, halfWidth));
  const filter = { up, down, halfWidth, taps, mirror };
  filters.set(key, filter);
  return filter;
}

/**
 * Streaming resampler: feed chunks of any length with `process`, then `flush` at the end for the
 * last `halfWidth` input samples' worth of output. Output lags input by the filter's look-ahead
 * (about 1.5 ms at 16 kHz to 8 kHz), never more.
 */
export class Resampler {
  private readonly filter: Polyphase | undefined;
  /**
   * Input kept for the filter: `length` samples in `buffer` from absolute input index
   * `bufferStart`. The array is reused across chunks (compacted in place, grown when short), so a
   * 20 ms frame allocates nothing but its output.
   */
  private buffer: Float32Array;
  private length: number;
  private bufferStart: number;
  private inputCount = 0;
  /** The next output sample's instant: input index `position` plus `phase / up`. */
  private position = 0;
  private phase = 0;
  private flushed = false;

  constructor(readonly fromHz: number, readonly toHz: number) {
    if (!(Number.isInteger(fromHz) && Number.isInteger(toHz) && fromHz > 0 && toHz > 0)) {
      throw new RangeError(`sample rates must be positive integers, got ${fromHz} and ${toHz}`);
    }
    this.filter = fromHz === toHz ? undefined : polyphase(fromHz, toHz);
    const halfWidth = this.filter?.halfWidth ?? 0;
    // Silence before the first sample, so the first outputs have their full filter history.
    this.buffer = new Float32Array(halfWidth);
    this.length = halfWidth;
    this.bufferStart = -halfWidth;
  }

  process(chunk: Int16Array): Int16Array {
    if (!this.filter) return chunk;
    if (this.flushed) throw new Error('Resampler: process() after flush()');
    this.inputCount += chunk.length;
    this.append(chunk);
    return this.emit(false);
  }

  /** The output still held back by the look-ahead, as if the input were followed by silence. */
  flush(): Int16Array {
    if (!this.filter || this.flushed) return new Int16Array(0);
    this.flushed = true;
    this.append(new Int16Array(this.filter.halfWidth + 1));
    return this.emit(true);
  }

  private append(chunk: Int16Array): void {
    const keepFrom = Math.max(0, this.position - this.filter!.halfWidth + 1 - this.bufferStart);
    const kept = this.length - keepFrom;
    const needed = kept + chunk.length;
    if (needed > this.buffer.length) {
      const grown = new Float32Array(Math.max(needed, 2 * this.buffer.length));
      grown.set(this.buffer.subarray(keepFrom, this.length));
      this.buffer = grown;
    } else if (keepFrom > 0) this.buffer.copyWithin(0, keepFrom, this.length);
    // One native copy converting Int16 to Float32: a JavaScript loop here got on-stack-replaced
    // while copying a long chunk, before the lines after it had run, and that optimized code was
    // kept and bailed out at the loop's end on every later long chunk.
    this.buffer.set(chunk, kept);
    this.length = needed;
    this.bufferStart += keepFrom;
  }

  private emit(final: boolean): Int16Array {
    const { up, down, halfWidth, taps, mirror } = this.filter!;
    const width = 2 * halfWidth;
    const end = this.bufferStart + this.length;
    // Outputs whose instant lies inside the input: ceil(inputCount * up / down) of them in all.
    const available = Math.max(0, Math.ceil(((end - this.position) * up) / down) + 1);
    const out = new Int16Array(available);
    const buffer = this.buffer;
    const finalAt = this.inputCount * up;
    // The hot loop of the voice pipeline (every caller frame, every agent frame): locals only.
    let position = this.position;
    let phase = this.phase;
    let n = 0;
    while (position + halfWidth < end) {
      if (final && position * up + phase >= finalAt) break;
      const base = position - halfWidth + 1 - this.bufferStart;
      const row = phase * width;
      const kind = mirror[phase]!;
      // Running sums side by side (about twice as fast as one); mirrored taps add their two inputs first.
      let a0 = 0;
      let a1 = 0;
      let a2 = 0;
      let a3 = 0;
      if (kind === 2) {
        const last = base + width - 1;
        let i = 0;
        for (; i + 1 < halfWidth; i += 2) {
          a0 += (buffer[base + i]! + buffer[last - i]!) * taps[row + i]!;
          a1 += (buffer[base + i + 1]! + buffer[last - i - 1]!) * taps[row + i + 1]!;
        }
        for (; i < halfWidth; i++) a2 += (buffer[base + i]! + buffer[last - i]!) * taps[row + i]!;
      } else if (kind === 1) {
        const c = base + halfWidth - 1;
        const t = row + halfWidth - 1;
        a0 = buffer[c]! * taps[t]! + buffer[base + width - 1]! * taps[row + width - 1]!;
        let k = 1;
        for (; k + 1 < halfWidth; k += 2) {
          a1 += (buffer[c - k]! + buffer[c + k]!) * taps[t - k]!;
          a2 += (buffer[c - k - 1]! + buffer[c + k + 1]!) * taps[t - k - 1]!;
        }
        for (; k < halfWidth; k++) a3 += (buffer[c - k]! + buffer[c + k]!) * taps[t - k]!;
      } else {
        let i = 0;
        for (; i + 3 < width; i += 4) {
          a0 += buffer[base + i]! * taps[row + i]!;
          a1 += buffer[base + i + 1]! * taps[row + i + 1]!;
          a2 += buffer[base + i + 2]! * taps[row + i + 2]!;
          a3 += buffer[base + i + 3]! * taps[row + i + 3]!;
        }
        for (; i < width; i++) a0 += buffer[base + i]! * taps[row + i]!;
      }
      const acc = a0 + a1 + (a2 + a3);
      out[n++] = acc > 32767 ? 32767 : acc < -32768 ? -32768 : Math.round(acc);
      phase += down;
      if (phase >= up) {
        position += Math.floor(phase / up);
        phase %= up;
      }
    }
    this.position = position;
    this.phase = phase;
    return n === out.length ? out : out.slice(0, n);
  }
}

/** Root mean square level of a stretch of PCM (0 to 32767). */
export function rms(pcm: Int16Array): number {
  if (pcm.length === 0) return 0;
  let sum = 0;
  for (let i = 0; i < pcm.length; i++) sum += pcm[i]! * pcm[i]!;
  return Math.sqrt(sum / pcm.length);
}

/** Adds `b` into `a` (same rate) starting at sample `at`, growing nothing: samples past `a` are dropped. Saturates. */
export function mixInto(a: Int16Array, b: Int16Array, at: number): void {
  const end = Math.min(a.length, at + b.length);
  for (let i = Math.max(0, at); i < end; i++) {
    const v = a[i]! + b[i - at]!;
    a[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
  }
}

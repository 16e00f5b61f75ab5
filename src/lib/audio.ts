/**
 * Audio helpers shared by telephony, recordings and the emulator: G.711 mu-law, WAV files,
 * resampling, signal level, and speech synthesis with the local espeak-ng.
 * PCM is signed 16-bit mono as an Int16Array.
 */
import { spawn } from 'node:child_process';

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

export function encodeMulaw(pcm: Int16Array): Buffer {
  const out = Buffer.allocUnsafe(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = linearToMulaw(pcm[i]!);
  return out;
}

export function decodeMulaw(bytes: Uint8Array): Int16Array {
  const out = new Int16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = MULAW_TABLE[bytes[i]!]!;
  return out;
}

/** PCM as little-endian bytes (what L16 frames and WAV data carry). */
export function pcmToBytes(pcm: Int16Array): Buffer {
  const out = Buffer.allocUnsafe(pcm.length * 2);
  for (let i = 0; i < pcm.length; i++) out.writeInt16LE(pcm[i]!, i * 2);
  return out;
}

/** Little-endian bytes to PCM; a trailing odd byte is dropped. */
export function bytesToPcm(bytes: Uint8Array): Int16Array {
  const n = bytes.length >> 1;
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

/** Resamples by linear interpolation, with a box low-pass when going down (speech quality is enough). */
export function resample(pcm: Int16Array, fromHz: number, toHz: number): Int16Array {
  if (fromHz === toHz || pcm.length === 0) return pcm;
  let source = pcm;
  if (toHz < fromHz) {
    const width = Math.max(1, Math.round(fromHz / toHz));
    if (width > 1) {
      source = new Int16Array(pcm.length);
      let sum = 0;
      for (let i = 0; i < pcm.length; i++) {
        sum += pcm[i]!;
        if (i >= width) sum -= pcm[i - width]!;
        source[i] = Math.round(sum / Math.min(i + 1, width));
      }
    }
  }
  const outLength = Math.floor((source.length * toHz) / fromHz);
  const out = new Int16Array(outLength);
  const step = fromHz / toHz;
  for (let i = 0; i < outLength; i++) {
    const x = i * step;
    const j = Math.floor(x);
    const frac = x - j;
    const a = source[j]!;
    const b = source[Math.min(j + 1, source.length - 1)]!;
    out[i] = Math.round(a + (b - a) * frac);
  }
  return out;
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

export class SynthesisError extends Error {
  override name = 'SynthesisError';
}

/**
 * Speaks `text` with the local espeak-ng and returns PCM at `sampleRateHz`.
 * Needs the espeak-ng program (Debian package espeak-ng).
 */
export async function synthesize(text: string, options: { sampleRateHz: number; voice?: string; wordsPerMinute?: number; signal?: AbortSignal }): Promise<Int16Array> {
  const args = ['--stdout', '-v', options.voice ?? 'en-us', '-s', String(options.wordsPerMinute ?? 170), '--', text];
  const wav = await new Promise<Buffer>((resolve, reject) => {
    const child = spawn(process.env.ESPEAK_NG_PATH || 'espeak-ng', args, { stdio: ['ignore', 'pipe', 'pipe'], signal: options.signal });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', (e) => reject(new SynthesisError(`espeak-ng could not run: ${e.message} (install the espeak-ng package)`, { cause: e })));
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out)) : reject(new SynthesisError(`espeak-ng exited with ${code}: ${err.trim()}`))));
  });
  const decoded = decodeWav(wav);
  return resample(decoded.pcm, decoded.sampleRateHz, options.sampleRateHz);
}

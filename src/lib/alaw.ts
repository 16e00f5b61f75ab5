/** G.711 A-law (what European and Indian trunks carry), beside mu-law in audio.ts. PCM is signed 16-bit mono. */
import { g711Decoder, g711Encoder } from './audio.js';

/** G.711 A-law: one 16-bit sample to one byte (the classic segment encoder, even bits inverted). */
export function linearToAlaw(sample: number): number {
  let s = Math.max(-32768, Math.min(32767, sample | 0)) >> 3;
  let mask = 0xd5;
  if (s < 0) {
    mask = 0x55;
    s = -s - 1;
  }
  let segment = 0;
  for (let end = 0x1f; segment < 8 && s > end; end = (end << 1) | 1) segment++;
  if (segment >= 8) return 0x7f ^ mask;
  const a = segment < 2 ? (s >> 1) & 0x0f : (s >> segment) & 0x0f;
  return ((segment << 4) | a) ^ mask;
}

const ALAW_TABLE = (() => {
  const table = new Int16Array(256);
  for (let i = 0; i < 256; i++) {
    const a = i ^ 0x55;
    const segment = (a & 0x70) >> 4;
    let t = (a & 0x0f) << 4;
    if (segment === 0) t += 8;
    else if (segment === 1) t += 0x108;
    else t = (t + 0x108) << (segment - 1);
    table[i] = a & 0x80 ? t : -t;
  }
  return table;
})();

export const encodeAlaw = g711Encoder(linearToAlaw);
export const decodeAlaw = g711Decoder(ALAW_TABLE);

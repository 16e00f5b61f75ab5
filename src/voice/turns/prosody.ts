/**
 * The prosody of the end of a stretch of speech, from its last samples: how the level fell over the
 * last 150 ms, and whether the pitch fell, rose or stayed level over the last 300 ms (an
 * autocorrelation pitch estimate per 100 ms, 70-400 Hz). Cheap enough to run once per stretch.
 */
import type { Prosody } from './end-of-turn.js';

const energy = (pcm: Int16Array, from: number, to: number) => {
  let sum = 0;
  for (let i = from; i < to; i++) sum += pcm[i]! * pcm[i]!;
  return to > from ? sum / (to - from) : 0;
};

/** The fundamental frequency of a voiced window, or undefined when it is not clearly periodic. */
export function pitchHz(pcm: Int16Array, rateHz: number): number | undefined {
  const minLag = Math.floor(rateHz / 400);
  const maxLag = Math.ceil(rateHz / 70);
  if (pcm.length < maxLag * 2) return undefined;
  const e0 = energy(pcm, 0, pcm.length - maxLag);
  if (e0 < 1e4) return undefined;
  let best = 0;
  let bestLag = 0;
  for (let lag = minLag; lag <= maxLag; lag++) {
    let sum = 0;
    for (let i = 0; i + lag < pcm.length; i++) sum += pcm[i]! * pcm[i + lag]!;
    const r = sum / ((pcm.length - lag) * e0);
    if (r > best) (best = r), (bestLag = lag);
  }
  return best > 0.45 ? rateHz / bestLag : undefined;
}

/** `tail`: the last samples of the stretch (at least 300 ms of it); `segmentMs`: the stretch's length. */
export function prosodyOf(tail: Int16Array, rateHz: number, segmentMs: number): Prosody {
  const ms = (n: number) => Math.round((n * rateHz) / 1000);
  const last = Math.max(0, tail.length - ms(150));
  const all = energy(tail, 0, tail.length);
  const end = energy(tail, last, tail.length);
  const prosody: Prosody = { segmentMs: Math.round(segmentMs) };
  if (all > 0 && end > 0) prosody.finalLevelDb = Math.round(10 * Math.log10(end / all) * 10) / 10;
  const step = ms(100);
  const pitches: number[] = [];
  for (let at = Math.max(0, tail.length - 3 * step); at + step <= tail.length; at += step) {
    const f0 = pitchHz(tail.subarray(at, at + step), rateHz);
    if (f0 !== undefined) pitches.push(f0);
  }
  if (pitches.length >= 2) {
    const change = pitches[pitches.length - 1]! / pitches[0]! - 1;
    prosody.pitch = change < -0.06 ? 'falling' : change > 0.06 ? 'rising' : 'level';
  }
  return prosody;
}

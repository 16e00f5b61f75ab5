/**
 * The flow's own lines on a realtime call (a `tts_say`, the goodbye, the disclosure, an apology),
 * spoken by the TTS at the call's rate in the voice of the call's language. Most are the same words
 * call after call: each is kept, as audio at the call's rate and per voice, for the next call that
 * says it (up to LINES lines of at most LINE_SECONDS each, the least recently said dropped first).
 * A kept line plays at once and costs neither a request to the speech service nor its resampling;
 * a line with a lead's variables in it is simply said anew.
 */
import { resample } from '../../lib/audio.js';
import type { TTS } from '../services.js';

const LINES = 200;
const LINE_SECONDS = 20;

export class SpokenLines {
  private readonly kept = new Map<string, Int16Array>();
  /** Each voice's number in the keys: a line said in two voices is two lines. */
  private readonly voices = new WeakMap<TTS, number>();
  private voiceSeq = 0;

  /** `text` in `tts`'s voice, at `sampleRateHz`. */
  async speak(tts: TTS, text: string, sampleRateHz: number, signal: AbortSignal): Promise<Int16Array> {
    let voice = this.voices.get(tts);
    if (voice === undefined) this.voices.set(tts, (voice = ++this.voiceSeq));
    const key = `${voice} ${sampleRateHz} ${text}`;
    const known = this.kept.get(key);
    if (known) {
      // Most recently said: last in the map's order.
      this.kept.delete(key);
      this.kept.set(key, known);
      return known;
    }
    const chunks: Int16Array[] = [];
    for await (const chunk of tts.synthesize(text, { signal })) chunks.push(chunk);
    const pcm = new Int16Array(chunks.reduce((n, c) => n + c.length, 0));
    let at = 0;
    for (const c of chunks) (pcm.set(c, at), (at += c.length));
    const line = resample(pcm, tts.sampleRateHz, sampleRateHz);
    if (line.length > 0 && line.length <= LINE_SECONDS * sampleRateHz && !signal.aborted) {
      this.kept.set(key, line);
      if (this.kept.size > LINES) this.kept.delete(this.kept.keys().next().value!);
    }
    return line;
  }
}

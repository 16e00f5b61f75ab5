/**
 * Streaming resampling for 20 ms frames: state carries across chunks so there are no clicks at
 * frame boundaries. (Interim: linear interpolation; the polyphase filter in lib/audio replaces it.)
 */
export class Resampler {
  private readonly step: number;
  private position = 0;
  private last = 0;

  constructor(readonly fromHz: number, readonly toHz: number) {
    this.step = fromHz / toHz;
  }

  process(chunk: Int16Array): Int16Array {
    if (this.fromHz === this.toHz) return chunk;
    const out: number[] = [];
    // position is measured from the sample before this chunk (index -1 = this.last).
    while (this.position < chunk.length) {
      const x = this.position - 1;
      const j = Math.floor(x);
      const frac = x - j;
      const a = j < 0 ? this.last : chunk[j]!;
      const b = chunk[j + 1] ?? a;
      out.push(Math.round(a + (b - a) * frac));
      this.position += this.step;
    }
    this.position -= chunk.length;
    if (chunk.length > 0) this.last = chunk[chunk.length - 1]!;
    return Int16Array.from(out);
  }
}

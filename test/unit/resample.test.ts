import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resample, Resampler, rms } from '../../src/lib/audio.js';

const RATES = [8000, 16000, 22050, 24000, 48000];

function tone(frequencyHz: number, rateHz: number, seconds: number, amplitude = 10000): Int16Array {
  return Int16Array.from({ length: Math.round(rateHz * seconds) }, (_, i) => Math.round(amplitude * Math.sin((2 * Math.PI * frequencyHz * i) / rateHz)));
}

/** RMS away from the edges, where the filter starts from and ends in silence. */
const middle = (pcm: Int16Array) => rms(pcm.subarray(Math.floor(pcm.length * 0.1), Math.floor(pcm.length * 0.9)));

describe('resample (polyphase windowed sinc)', () => {
  it('keeps a 3 kHz tone through 8 kHz -> 16 kHz -> 8 kHz', () => {
    const original = tone(3000, 8000, 1);
    const back = resample(resample(original, 8000, 16000), 16000, 8000);
    assert.equal(back.length, original.length);
    const ratio = middle(back) / middle(original);
    assert.ok(Math.abs(ratio - 1) < 0.03, `rms ratio ${ratio.toFixed(4)}`);
    // Same phase too: the filter is symmetric, so the round trip does not shift the signal.
    let err = 0;
    for (let i = 800; i < 7200; i++) err += (back[i]! - original[i]!) ** 2;
    assert.ok(Math.sqrt(err / 6400) / middle(original) < 0.05, 'round trip matches sample for sample');
  });

  it('suppresses a 6 kHz tone going from 16 kHz to 8 kHz by more than 30 dB (no alias at 2 kHz)', () => {
    const input = tone(6000, 16000, 1);
    const out = resample(input, 16000, 8000);
    const attenuationDb = 20 * Math.log10(middle(input) / Math.max(1, middle(out)));
    assert.ok(attenuationDb > 30, `attenuation ${attenuationDb.toFixed(1)} dB`);
    for (const [from, to, f] of [[48000, 8000, 6000], [22050, 8000, 5000], [24000, 16000, 10000]] as const) {
      const a = middle(tone(f, from, 0.5));
      const b = middle(resample(tone(f, from, 0.5), from, to));
      assert.ok(20 * Math.log10(a / Math.max(1, b)) > 30, `${from} -> ${to}: ${f} Hz leaks at rms ${b.toFixed(1)}`);
    }
  });

  it('has the right length and keeps level for every pair of 8, 16, 22.05, 24 and 48 kHz', () => {
    for (const from of RATES) {
      for (const to of RATES) {
        const input = tone(1000, from, 0.5);
        const out = resample(input, from, to);
        assert.equal(out.length, Math.ceil((input.length * to) / from), `${from} -> ${to}`);
        const ratio = middle(out) / middle(input);
        assert.ok(Math.abs(ratio - 1) < 0.02, `${from} -> ${to}: rms ratio ${ratio.toFixed(4)}`);
      }
    }
  });

  it('streams 20 ms chunks exactly like the one-shot result (no clicks at chunk boundaries)', () => {
    for (const [from, to] of [[8000, 16000], [16000, 8000], [22050, 8000], [8000, 22050], [48000, 16000], [24000, 8000]] as const) {
      const input = tone(700, from, 1);
      const whole = resample(input, from, to);
      const resampler = new Resampler(from, to);
      const parts: Int16Array[] = [];
      const chunk = Math.round(from / 50);
      for (let i = 0; i < input.length; i += chunk) parts.push(resampler.process(input.subarray(i, i + chunk)));
      parts.push(resampler.flush());
      const streamed = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
      let at = 0;
      for (const p of parts) (streamed.set(p, at), (at += p.length));
      assert.equal(streamed.length, whole.length, `${from} -> ${to} length`);
      let worst = 0;
      for (let i = 0; i < whole.length; i++) worst = Math.max(worst, Math.abs(streamed[i]! - whole[i]!));
      assert.ok(worst <= 1, `${from} -> ${to}: differs by ${worst}`);
    }
  });

  it('passes through equal rates and empty input', () => {
    const pcm = tone(100, 8000, 0.01);
    assert.equal(resample(pcm, 8000, 8000), pcm);
    assert.equal(resample(new Int16Array(0), 8000, 16000).length, 0);
  });
});

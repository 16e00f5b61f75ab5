/** Keypad tones (DTMF): made for every key, heard back in order through line noise and mu-law. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeMulaw, encodeMulaw } from '../../src/lib/audio.js';
import { synthesize } from '../../src/lib/speech.js';
import { prng } from '../../src/lib/random.js';
import { DtmfDetector, dtmfTones } from '../../src/lib/tones.js';

const RATE = 8000;

function hear(pcm: Int16Array, noise = 0, seed = 1): string {
  const random = prng(seed);
  const noisy = pcm.map((v) => Math.max(-32768, Math.min(32767, Math.round(v + (random() - 0.5) * 2 * noise))));
  const lineAudio = decodeMulaw(encodeMulaw(Int16Array.from(noisy)));
  let keys = '';
  const detector = new DtmfDetector(RATE, (key) => (keys += key));
  for (let at = 0; at < lineAudio.length; at += 160) detector.push(lineAudio.subarray(at, at + 160));
  return keys;
}

describe('keypad tones', () => {
  it('every key is heard back, in order, with repeats and pauses', () => {
    const sequence = '0123456789*#';
    assert.equal(hear(dtmfTones(sequence, { sampleRateHz: RATE })), sequence);
    assert.equal(hear(dtmfTones('11w22w#', { sampleRateHz: RATE })), '1122#');
  });

  it('through line noise', () => {
    assert.equal(hear(dtmfTones('4815#', { sampleRateHz: RATE }), 1500, 3), '4815#');
  });

  it('w is half a second of silence; unknown keys are refused', () => {
    assert.equal(dtmfTones('w', { sampleRateHz: RATE }).length, 4000);
    assert.equal(dtmfTones('1', { sampleRateHz: RATE, toneMs: 100, gapMs: 100 }).length, 1600);
    assert.throws(() => dtmfTones('1x', { sampleRateHz: RATE }), /not a keypad key/);
  });

  it('speech is not heard as keys', async () => {
    const speech = await synthesize('Press one for sales, two for support, or stay on the line.', { sampleRateHz: RATE });
    assert.equal(hear(speech), '');
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PcmBlocks, PcmRing } from '../../src/lib/pcm-buffers.js';

/** Frames of a counting signal: sample i of the stream is i (mod 32768). */
function* frames(total: number, sizes: number[]): Generator<Int16Array> {
  let at = 0;
  for (let k = 0; at < total; k++) {
    const n = Math.min(sizes[k % sizes.length]!, total - at);
    yield Int16Array.from({ length: n }, (_, i) => (at + i) % 32768);
    at += n;
  }
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe('PCM buffers', () => {
  it('a ring keeps the last samples in order, across its wrap, and answers silence before the stream', () => {
    const ring = new PcmRing(1000);
    for (const f of frames(350, [160, 7, 33])) ring.append(f);
    assert.equal(ring.length, 350);
    assert.deepEqual([...ring.last()], range(0, 350));
    // Wanted before the first sample: silence there, the samples where they are.
    assert.deepEqual([...ring.last(400)], [...new Array(50).fill(0), ...range(0, 350)]);
    for (const f of frames(2635, [160, 7, 33])) ring.append(f); // a second stream of counting samples
    assert.equal(ring.length, 1000);
    assert.deepEqual([...ring.last()], range(1635, 2635));
    assert.deepEqual([...ring.last(100, 250)], range(2285, 2385), '100 samples ending 250 before the newest');
    // A frame longer than the ring leaves only its own end.
    ring.append(Int16Array.from(range(5000, 6500)));
    assert.deepEqual([...ring.last()], range(5500, 6500));
    ring.clear();
    assert.equal(ring.length, 0);
    assert.deepEqual([...ring.last(3)], [0, 0, 0]);
  });

  it('blocks keep every sample in order across block edges, at most the last maxSamples in whole blocks', () => {
    const all = new PcmBlocks(100);
    for (const f of frames(1234, [160, 7, 33, 100])) all.append(f);
    assert.equal(all.length, 1234);
    assert.deepEqual([...all.take()], range(0, 1234));

    const capped = new PcmBlocks(100, 450);
    for (const f of frames(1234, [160, 7, 33])) capped.append(f);
    // Whole blocks go from the front while the rest still holds 450 samples: 1234 - 700 = 534 stay.
    assert.equal(capped.length, 534);
    assert.deepEqual([...capped.take()], range(700, 1234));
    capped.clear();
    assert.equal(capped.take().length, 0);
    capped.append(Int16Array.from([7, 8]));
    assert.deepEqual([...capped.take()], [7, 8]);
  });
});

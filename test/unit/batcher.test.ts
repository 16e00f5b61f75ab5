import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Batcher } from '../../src/lib/batcher.js';

describe('Batcher (group commit)', () => {
  it('writes the first item at once and groups the ones that arrive meanwhile', async () => {
    const batches: number[][] = [];
    const b = new Batcher<number, number>(async (items) => {
      batches.push(items);
      await new Promise((r) => setTimeout(r, 20));
      return items.map((i) => i * 10);
    });
    const results = await Promise.all([1, 2, 3, 4].map((i) => b.submit(i)));
    assert.deepEqual(results, [10, 20, 30, 40]);
    assert.deepEqual(batches, [[1], [2, 3, 4]]);
  });

  it('with sameTurn, writes what is submitted in one turn of the event loop as one batch', async () => {
    const batches: number[][] = [];
    const b = new Batcher<number, number>(async (items) => (batches.push(items), items), { sameTurn: true });
    // Submitted from separate promise chains of the same turn, as the calls of one claim end.
    const first = Promise.all([1, 2, 3].map((i) => Promise.resolve().then(() => b.submit(i))));
    const later = new Promise<number>((resolve) => setTimeout(() => resolve(b.submit(4)), 5));
    assert.deepEqual(await first, [1, 2, 3]);
    assert.equal(await later, 4);
    assert.deepEqual(batches, [[1, 2, 3], [4]]);
  });

  it('caps a batch at maxBatch', async () => {
    const sizes: number[] = [];
    const b = new Batcher<number, number>(async (items) => (sizes.push(items.length), items), { maxBatch: 2 });
    await Promise.all([1, 2, 3, 4, 5].map((i) => b.submit(i)));
    assert.deepEqual(sizes, [1, 2, 2]);
  });

  it('rejects every item of a failed batch, or lets onBatchError answer each', async () => {
    const failing = new Batcher<number, number>(async () => {
      throw new Error('boom');
    });
    await assert.rejects(failing.submit(1), /boom/);

    const calls: number[][] = [];
    const b = new Batcher<number, string>(
      async (items) => {
        calls.push(items);
        if (items.length > 1) throw new Error('one bad row');
        return ['ok'];
      },
      { onBatchError: async (items) => items.map((i) => (i === 3 ? new Error(`row ${i} is bad`) : `ok ${i}`)) },
    );
    const settled = await Promise.allSettled([1, 2, 3, 4].map((i) => b.submit(i)));
    assert.deepEqual(
      settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message)),
      ['ok', 'ok 2', 'row 3 is bad', 'ok 4'],
    );
  });
});

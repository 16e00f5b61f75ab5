/** A paced campaign's lookahead: twice a worker's claim time, in 50 ms steps, within its bounds. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PACE_LOOKAHEAD, paceLookaheadMs } from '../../src/lifecycle/index.js';

describe('pace lookahead', () => {
  it('is the least for quick claims, steps by 50 ms, and never passes the most', () => {
    assert.equal(paceLookaheadMs(0), PACE_LOOKAHEAD.minMs);
    assert.equal(paceLookaheadMs(Number.NaN), PACE_LOOKAHEAD.minMs);
    assert.equal(paceLookaheadMs(120), PACE_LOOKAHEAD.minMs);
    assert.equal(paceLookaheadMs(301), 350);
    assert.equal(paceLookaheadMs(600), 600);
    assert.equal(paceLookaheadMs(5000), PACE_LOOKAHEAD.maxMs);
  });
});

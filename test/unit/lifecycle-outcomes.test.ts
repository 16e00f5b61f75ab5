/**
 * The outcome vocabulary: each outcome's class in one table, the lists derived from it, the
 * outcome of a call end, and the retry rule.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import {
  COMPLETED,
  FALLBACK_RETRY,
  isReached,
  isRetried,
  NOT_REACHED_OUTCOMES,
  OUTCOMES,
  outcomeOf,
  reasonOf,
  RETRIED_OUTCOMES,
  verdict,
  type CallEnd,
} from '../../src/lifecycle/index.js';

/** outcome -> [reached (a conversation), retried (an unreached attempt, tried again)] */
const CLASSES: Record<string, [reached: boolean, retried: boolean]> = {
  no_answer: [false, true],
  busy: [false, true],
  failed: [false, true],
  error: [false, true],
  worker_lost: [false, true],
  voicemail: [false, false],
  PRECHECK_FAILED: [false, false],
  BLACKLISTED: [false, false],
  aborted: [false, false],
  // A flow's own outcomes, and a conversation whose flow named none.
  completed: [true, false],
  confirmed: [true, false],
  rescheduled: [true, false],
  not_interested: [true, false],
};

describe('outcome vocabulary', () => {
  for (const [outcome, [reached, retried]] of Object.entries(CLASSES)) {
    it(`${outcome}: ${reached ? 'reached' : 'not reached'}, ${retried ? 'retried' : 'finishes the lead'}`, () => {
      assert.equal(isReached(outcome), reached);
      assert.equal(RETRIED_OUTCOMES.includes(outcome as never), retried);
      assert.equal(NOT_REACHED_OUTCOMES.includes(outcome as never), !reached);
      // The webhook's failure payload has a reason exactly for the outcomes that are not a conversation.
      assert.equal(reasonOf(outcome) === undefined, reached);
    });
  }

  it("the table holds exactly Dialer's own outcomes", () => {
    assert.deepEqual(Object.keys(OUTCOMES).sort(), Object.entries(CLASSES).filter(([, [reached]]) => !reached).map(([o]) => o).sort());
  });

  it('a lead without an outcome counts as a conversation that named none', () => {
    assert.equal(isReached(null), true);
    assert.equal(isReached(undefined), true);
  });

  it("the analytics rollup triggers (migration 006) list the same not-reached outcomes", () => {
    const sql = fs.readFileSync(new URL('../../src/db/migrations/006_analytics_rollup.sql', import.meta.url), 'utf8');
    const lists = [...sql.matchAll(/outcome NOT IN \(([^)]*)\)/g)].map((m) => m[1]!.split(',').map((s) => s.trim().replace(/'/g, '')).sort());
    assert.ok(lists.length >= 1);
    for (const list of lists) assert.deepEqual(list, [...NOT_REACHED_OUTCOMES].sort());
  });
});

describe('outcomeOf and isRetried', () => {
  const cases: [CallEnd, string, boolean][] = [
    [{ kind: 'completed', outcome: 'confirmed' }, 'confirmed', false],
    [{ kind: 'completed' }, COMPLETED, false],
    // A flow that names its outcome like one of Dialer's is still a conversation: never retried.
    [{ kind: 'completed', outcome: 'error' }, 'error', false],
    [{ kind: 'no_answer' }, 'no_answer', true],
    [{ kind: 'busy' }, 'busy', true],
    [{ kind: 'failed', error: 'bad number' }, 'failed', true],
    [{ kind: 'voicemail' }, 'voicemail', false],
    [{ kind: 'error', error: 'provider down' }, 'error', true],
  ];
  for (const [end, outcome, retried] of cases) {
    it(`${JSON.stringify(end)} -> ${outcome}${retried ? ', retried' : ''}`, () => {
      assert.equal(outcomeOf(end), outcome);
      assert.equal(isRetried(end), retried);
    });
  }
});

describe('the retry rule', () => {
  const policy = { max_retry: 2, retry_offset: 600 };
  it('retries while attempt <= max_retry, so at most max_retry + 1 attempts', () => {
    assert.deepEqual(verdict('busy', true, 1, policy), { status: 'RETRY', outcome: null, retryInSeconds: 600 });
    assert.deepEqual(verdict('busy', true, 2, policy), { status: 'RETRY', outcome: null, retryInSeconds: 600 });
    assert.deepEqual(verdict('busy', true, 3, policy), { status: 'FINISHED', outcome: 'busy', retryInSeconds: null });
  });
  it('an attempt that is not retried finishes the lead at once', () => {
    assert.deepEqual(verdict('confirmed', false, 1, policy), { status: 'FINISHED', outcome: 'confirmed', retryInSeconds: null });
    assert.deepEqual(verdict('voicemail', false, 1, policy), { status: 'FINISHED', outcome: 'voicemail', retryInSeconds: null });
  });
  it('without a configuration the fallback policy (no retries) applies', () => {
    assert.equal(FALLBACK_RETRY.max_retry, 0);
    assert.deepEqual(verdict('no_answer', true, 1, undefined), { status: 'FINISHED', outcome: 'no_answer', retryInSeconds: null });
  });
});

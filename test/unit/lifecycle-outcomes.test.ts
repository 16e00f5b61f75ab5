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
  voicemail_left: [false, false],
  // Dialer's own outcomes of a conversation its built-in functions ended.
  OPTED_OUT: [true, false],
  callback_requested: [true, false],
  no_answer: [false, true],
  busy: [false, true],
  failed: [false, true],
  error: [false, true],
  worker_lost: [false, true],
  voicemail: [false, false],
  PRECHECK_FAILED: [false, false],
  BLACKLISTED: [false, false],
  DNC_LISTED: [false, false],
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
    const flows = ['completed', 'confirmed', 'rescheduled', 'not_interested'];
    assert.deepEqual(Object.keys(OUTCOMES).sort(), Object.keys(CLASSES).filter((o) => !flows.includes(o)).sort());
  });

  it('a lead without an outcome counts as a conversation that named none', () => {
    assert.equal(isReached(null), true);
    assert.equal(isReached(undefined), true);
  });

  it('the analytics rollup triggers (as the latest migration writes them) list the same not-reached outcomes', () => {
    const dir = new URL('../../src/db/migrations/', import.meta.url);
    const latest = fs.readdirSync(dir).sort().filter((f) => fs.readFileSync(new URL(f, dir), 'utf8').includes('FUNCTION lead_stats_on_insert()')).pop()!;
    const sql = fs.readFileSync(new URL(latest, dir), 'utf8');
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
    // A message left on the machine, an opt-out, a callback the callee chose.
    [{ kind: 'completed', outcome: 'voicemail_left' }, 'voicemail_left', false],
    [{ kind: 'completed', outcome: 'confirmed', metaData: { opted_out: { at: '2026-01-01T00:00:00Z' } } }, 'OPTED_OUT', false],
    [{ kind: 'completed', outcome: 'callback_requested', metaData: { callback: { at: '2026-01-02T10:00:00Z', requested: '2026-01-02T10:00:00Z' } } }, 'callback_requested', true],
    [{ kind: 'completed', outcome: 'rescheduled', metaData: { callback: { at: '2026-01-02T10:00:00Z', requested: '2026-01-02T10:00:00Z' } } }, 'rescheduled', true],
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
  it("a configuration's retry_policy decides per outcome whether and after how long; other outcomes keep the default", () => {
    const rules = { ...policy, retry_policy: { busy: { retry: true, after_seconds: 60 }, no_answer: { retry: false }, voicemail: { retry: true, after_seconds: 86_400 }, voicemail_left: { retry: true }, not_interested: { retry: true, after_seconds: 7 } } };
    assert.deepEqual(verdict('busy', true, 1, rules), { status: 'RETRY', outcome: null, retryInSeconds: 60 });
    assert.deepEqual(verdict('no_answer', true, 1, rules), { status: 'FINISHED', outcome: 'no_answer', retryInSeconds: null });
    assert.deepEqual(verdict('voicemail', false, 1, rules), { status: 'RETRY', outcome: null, retryInSeconds: 86_400 });
    assert.deepEqual(verdict('voicemail_left', false, 2, rules), { status: 'RETRY', outcome: null, retryInSeconds: 600 }, 'no after_seconds: retry_offset');
    assert.deepEqual(verdict('not_interested', false, 1, rules), { status: 'RETRY', outcome: null, retryInSeconds: 7 }, "a flow's own outcome");
    assert.deepEqual(verdict('failed', true, 1, rules), { status: 'RETRY', outcome: null, retryInSeconds: 600 }, 'not named: the default');
    assert.deepEqual(verdict('confirmed', false, 1, rules), { status: 'FINISHED', outcome: 'confirmed', retryInSeconds: null }, 'not named: the default');
    // Still within max_retry.
    assert.deepEqual(verdict('voicemail', false, 3, rules), { status: 'FINISHED', outcome: 'voicemail', retryInSeconds: null });
    // A name like toString is no rule.
    assert.deepEqual(verdict('toString', false, 1, rules), { status: 'FINISHED', outcome: 'toString', retryInSeconds: null });
  });
  it('a callback the callee chose is the due time, within max_retry, unless the policy refuses its outcome', () => {
    const at = new Date('2026-03-14T10:00:00Z');
    assert.deepEqual(verdict('callback_requested', true, 1, policy, at), { status: 'RETRY', outcome: null, retryInSeconds: 0, retryAt: at });
    assert.deepEqual(verdict('callback_requested', true, 3, policy, at), { status: 'FINISHED', outcome: 'callback_requested', retryInSeconds: null });
    const refuses = { ...policy, retry_policy: { callback_requested: { retry: false } } };
    assert.deepEqual(verdict('callback_requested', true, 1, refuses, at), { status: 'FINISHED', outcome: 'callback_requested', retryInSeconds: null });
    const delays = { ...policy, retry_policy: { callback_requested: { retry: true, after_seconds: 5 } } };
    assert.deepEqual(verdict('callback_requested', true, 1, delays, at), { status: 'RETRY', outcome: null, retryInSeconds: 0, retryAt: at }, "the callee's time wins");
  });
  it('without a configuration the fallback policy (no retries) applies', () => {
    assert.equal(FALLBACK_RETRY.max_retry, 0);
    assert.deepEqual(verdict('no_answer', true, 1, undefined), { status: 'FINISHED', outcome: 'no_answer', retryInSeconds: null });
  });
});

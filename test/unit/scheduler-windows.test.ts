import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inWindow, leadZone, nextOpening } from '../../src/lib/windows.js';
import { pick } from '../../src/scheduler/prechecks.js';
import { substitute } from '../../src/voice/flow/index.js';

const at = (iso: string) => new Date(iso);

describe('calling windows', () => {
  it('opens at the start (inclusive) and closes at the end (exclusive)', () => {
    assert.equal(inWindow(at('2026-03-02T08:59:00Z'), '09:00', '17:00', 'UTC'), false);
    assert.equal(inWindow(at('2026-03-02T09:00:00Z'), '09:00', '17:00', 'UTC'), true);
    assert.equal(inWindow(at('2026-03-02T16:59:59Z'), '09:00', '17:00', 'UTC'), true);
    assert.equal(inWindow(at('2026-03-02T17:00:00Z'), '09:00', '17:00', 'UTC'), false);
  });

  it('reads the window in its time zone', () => {
    // 14:00 UTC is 09:00 in New York (EST, UTC-5) and 19:30 in Kolkata (UTC+5:30).
    assert.equal(inWindow(at('2026-01-15T14:00:00Z'), '09:00', '17:00', 'America/New_York'), true);
    assert.equal(inWindow(at('2026-01-15T13:59:00Z'), '09:00', '17:00', 'America/New_York'), false);
    assert.equal(inWindow(at('2026-01-15T14:00:00Z'), '09:00', '19:30', 'Asia/Kolkata'), false);
    assert.equal(inWindow(at('2026-01-15T13:59:00Z'), '09:00', '19:30', 'Asia/Kolkata'), true);
  });

  it('handles windows that cross midnight, and all-day windows', () => {
    assert.equal(inWindow(at('2026-03-02T23:30:00Z'), '22:00', '06:00', 'UTC'), true);
    assert.equal(inWindow(at('2026-03-02T05:59:00Z'), '22:00', '06:00', 'UTC'), true);
    assert.equal(inWindow(at('2026-03-02T12:00:00Z'), '22:00', '06:00', 'UTC'), false);
    assert.deepEqual(nextOpening(at('2026-03-02T12:00:00Z'), '22:00', '06:00', 'UTC'), at('2026-03-02T22:00:00Z'));
    assert.equal(inWindow(at('2026-03-02T03:17:00Z'), '00:00', '00:00', 'UTC'), true);
  });

  it('gives the next opening: later today, or tomorrow once today closed', () => {
    assert.deepEqual(nextOpening(at('2026-03-02T07:00:00Z'), '09:00', '17:00', 'UTC'), at('2026-03-02T09:00:00Z'));
    assert.deepEqual(nextOpening(at('2026-03-02T18:00:00Z'), '09:00', '17:00', 'UTC'), at('2026-03-03T09:00:00Z'));
    const open = at('2026-03-02T10:00:00Z');
    assert.deepEqual(nextOpening(open, '09:00', '17:00', 'UTC'), open, 'already open: now');
    // New York: 18:00 local on Jan 15 is 23:00 UTC; the next 09:00 local is 14:00 UTC on Jan 16.
    assert.deepEqual(nextOpening(at('2026-01-15T23:00:00Z'), '09:00', '17:00', 'America/New_York'), at('2026-01-16T14:00:00Z'));
  });

  it('follows DST changes: the same local time is a different UTC instant after the change', () => {
    // New York springs forward on 2026-03-08 (EST -5 -> EDT -4).
    assert.deepEqual(nextOpening(at('2026-03-07T23:00:00Z'), '09:00', '17:00', 'America/New_York'), at('2026-03-08T13:00:00Z'));
    // And falls back on 2026-11-01 (EDT -4 -> EST -5).
    assert.deepEqual(nextOpening(at('2026-10-31T23:00:00Z'), '09:00', '17:00', 'America/New_York'), at('2026-11-01T14:00:00Z'));
    // 02:30 does not exist on 2026-03-08 in New York: the window opens at the first instant after the gap.
    const opening = nextOpening(at('2026-03-08T05:00:00Z'), '02:30', '05:00', 'America/New_York');
    assert.deepEqual(opening, at('2026-03-08T07:00:00Z'));
    assert.equal(inWindow(opening, '02:30', '05:00', 'America/New_York'), true);
  });

  it('takes the lead time zone from payload.timezone when it is a known zone', () => {
    assert.equal(leadZone({ timezone: 'Asia/Tokyo' }, 'UTC'), 'Asia/Tokyo');
    assert.equal(leadZone({ timezone: 'Mars/Base' }, 'Europe/Paris'), 'Europe/Paris');
    assert.equal(leadZone({ timezone: 5 }, 'UTC'), 'UTC');
    assert.equal(leadZone({}, 'UTC'), 'UTC');
  });
});

describe('pre-check helpers', () => {
  it('substitutes variables, encoding them where asked, and leaves unknown ones', () => {
    assert.equal(substitute('/x/{a}?p={b}&q={missing}', { a: 'x y', b: '+1' }, undefined, encodeURIComponent), '/x/x%20y?p=%2B1&q={missing}');
    assert.equal(substitute('{n} {o}', { n: 3, o: { k: 1 } }), '3 {"k":1}');
  });

  it('picks dot paths from JSON', () => {
    assert.equal(pick({ data: { items: [{ ok: true }] } }, 'data.items.0.ok'), true);
    assert.equal(pick({ data: null }, 'data.x'), undefined);
    assert.equal(pick('text', 'a'), undefined);
  });
});

/**
 * Recipient-local hours: the zone a number tells (libphonenumber's prefix map), the zone a lead's
 * window follows, and the recipient's day, across the days clocks change.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { numberZone } from '../../src/lib/phone-zone.js';
import { inWindow, leadZone, localDay, nextOpening } from '../../src/lib/windows.js';

describe('the zone a number tells', () => {
  const cases: [string, string | undefined][] = [
    ['+14155550123', 'America/Los_Angeles'], // San Francisco area code
    ['+12125550123', 'America/New_York'], // New York
    ['+13125550123', 'America/Chicago'], // Chicago
    ['+442071838750', 'Europe/London'], // the region's zones keep one clock (London, Guernsey, Isle of Man)
    ['+919876543210', 'Asia/Calcutta'],
    ['+61291234567', 'Australia/Sydney'],
    ['+18005550123', undefined], // toll-free: every North American zone
    ['+12', undefined],
  ];
  for (const [number, zone] of cases) {
    it(`${number}: ${zone ?? 'does not tell'}`, () => assert.equal(numberZone(number), zone));
  }
});

describe('the zone a lead is called in', () => {
  const ny = { customer_mobile_number: '+12125550123' };
  it("configuration (the default): the payload's timezone, else call_timezone, as before", () => {
    assert.equal(leadZone(ny, 'UTC'), 'UTC');
    assert.equal(leadZone(ny, 'UTC', 'configuration'), 'UTC');
    assert.equal(leadZone({ ...ny, timezone: 'Asia/Tokyo' }, 'UTC'), 'Asia/Tokyo');
  });
  it("recipient: the payload's timezone, else the number's, else call_timezone", () => {
    assert.equal(leadZone({ ...ny, timezone: 'Asia/Tokyo' }, 'UTC', 'recipient'), 'Asia/Tokyo');
    assert.equal(leadZone(ny, 'UTC', 'recipient'), 'America/New_York');
    assert.equal(leadZone({ ...ny, timezone: 'Not/AZone' }, 'UTC', 'recipient'), 'America/New_York');
    assert.equal(leadZone({ customer_mobile_number: '+18005550123' }, 'America/Denver', 'recipient'), 'America/Denver');
    assert.equal(leadZone({}, 'Europe/Paris', 'recipient'), 'Europe/Paris');
  });
});

describe("the recipient's window and day across clock changes", () => {
  const zone = leadZone({ customer_mobile_number: '+12125550123' }, 'UTC', 'recipient');
  it('09:00 in New York is 14:00 UTC before the spring change and 13:00 UTC after it', () => {
    // Saturday 2026-03-07 08:30 EST: closed, opens 09:00 EST = 14:00Z.
    assert.equal(inWindow(new Date('2026-03-07T13:30:00Z'), '09:00', '17:00', zone), false);
    assert.equal(nextOpening(new Date('2026-03-07T13:30:00Z'), '09:00', '17:00', zone).toISOString(), '2026-03-07T14:00:00.000Z');
    // Sunday 2026-03-08 (clocks went forward at 02:00): 13:30Z is 09:30 EDT, open.
    assert.equal(inWindow(new Date('2026-03-08T13:30:00Z'), '09:00', '17:00', zone), true);
    // From Saturday evening the next opening is Sunday 09:00 EDT = 13:00Z.
    assert.equal(nextOpening(new Date('2026-03-08T00:00:00Z'), '09:00', '17:00', zone).toISOString(), '2026-03-08T13:00:00.000Z');
    // Autumn: Sunday 2026-11-01 09:00 EST = 14:00Z (the day before, 09:00 EDT = 13:00Z).
    assert.equal(nextOpening(new Date('2026-10-31T22:00:00Z'), '09:00', '17:00', zone).toISOString(), '2026-11-01T14:00:00.000Z');
  });

  it('a window opening inside the skipped hour opens at the first instant after it', () => {
    // 02:30 does not exist in New York on 2026-03-08: the window opens at 03:00 EDT = 07:00Z.
    assert.equal(nextOpening(new Date('2026-03-08T05:00:00Z'), '02:30', '04:00', zone).toISOString(), '2026-03-08T07:00:00.000Z');
  });

  it("the recipient's day is 23 hours long in spring and 25 in autumn", () => {
    const spring = localDay(new Date('2026-03-08T18:00:00Z'), zone);
    assert.equal(spring.start.toISOString(), '2026-03-08T05:00:00.000Z');
    assert.equal(spring.next.toISOString(), '2026-03-09T04:00:00.000Z');
    const autumn = localDay(new Date('2026-11-01T18:00:00Z'), zone);
    assert.equal(autumn.start.toISOString(), '2026-11-01T04:00:00.000Z');
    assert.equal(autumn.next.toISOString(), '2026-11-02T05:00:00.000Z');
    // London changes on other days than New York.
    const london = localDay(new Date('2026-03-29T12:00:00Z'), leadZone({ customer_mobile_number: '+442071838750' }, 'UTC', 'recipient'));
    assert.equal(london.start.toISOString(), '2026-03-29T00:00:00.000Z');
    assert.equal(london.next.toISOString(), '2026-03-29T23:00:00.000Z');
  });
});

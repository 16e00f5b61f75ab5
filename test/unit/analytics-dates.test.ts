import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readFilterDate, wallTimeToInstant } from '../../src/analytics/dates.js';

const iso = (r: { at: Date; inclusive: boolean } | undefined) => (r ? `${r.at.toISOString()} ${r.inclusive ? 'inclusive' : 'exclusive'}` : undefined);

describe('analytics filter dates', () => {
  it('a date-time with an offset is that instant, whatever the time zone', () => {
    assert.equal(iso(readFilterDate('2024-05-01T09:30:00Z', 'Asia/Tokyo', false)), '2024-05-01T09:30:00.000Z inclusive');
    assert.equal(iso(readFilterDate('2024-05-01T11:30:00+02:00', 'UTC', true)), '2024-05-01T09:30:00.000Z inclusive');
    assert.equal(iso(readFilterDate('2024-05-01T04:00-0530', 'UTC', false)), '2024-05-01T09:30:00.000Z inclusive');
    assert.equal(iso(readFilterDate('2024-05-01T09:30:00.250Z', 'UTC', false)), '2024-05-01T09:30:00.250Z inclusive');
  });

  it('a date alone: its first instant as date_from, the next day (exclusive) as date_to', () => {
    assert.equal(iso(readFilterDate('2024-05-01', 'UTC', false)), '2024-05-01T00:00:00.000Z inclusive');
    assert.equal(iso(readFilterDate('2024-05-01', 'UTC', true)), '2024-05-02T00:00:00.000Z exclusive');
    assert.equal(iso(readFilterDate('2024-05-01', 'Asia/Tokyo', false)), '2024-04-30T15:00:00.000Z inclusive');
    assert.equal(iso(readFilterDate('2024-05-01', 'Asia/Kolkata', true)), '2024-05-01T18:30:00.000Z exclusive');
  });

  it('wall times without an offset follow DST in the time zone', () => {
    // New York: EST (-05:00) in January, EDT (-04:00) in July.
    assert.equal(iso(readFilterDate('2024-01-15T12:00', 'America/New_York', false)), '2024-01-15T17:00:00.000Z inclusive');
    assert.equal(iso(readFilterDate('2024-07-15T12:00', 'America/New_York', false)), '2024-07-15T16:00:00.000Z inclusive');
    // The day of the spring change is 23 hours long: 2024-03-10 ends at 2024-03-11T04:00Z.
    assert.equal(iso(readFilterDate('2024-03-10', 'America/New_York', true)), '2024-03-11T04:00:00.000Z exclusive');
    assert.equal(new Date(wallTimeToInstant(Date.UTC(2024, 2, 10), 'America/New_York')).toISOString(), '2024-03-10T05:00:00.000Z');
  });

  it('refuses what is not an ISO 8601 date or date-time', () => {
    for (const text of ['yesterday', '2024-02-30', '2023-02-29', '2024-13-01', '2024-05-01T24:00', '2024-05-01T10:60', '05/01/2024', '2024-5-1', '']) {
      assert.equal(readFilterDate(text, 'UTC', false), undefined, text);
    }
    assert.ok(readFilterDate('2024-02-29', 'UTC', false), 'a leap day');
  });
});

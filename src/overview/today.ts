import { DateTime } from 'luxon';

/** Midnight of `now`'s day in `timezone`. */
export function startOfDay(now: Date, timezone: string): Date {
  return DateTime.fromJSDate(now, { zone: timezone }).startOf('day').toJSDate();
}

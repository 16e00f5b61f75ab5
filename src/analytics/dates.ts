/**
 * Dates of analytics requests: ISO 8601 dates and date-times, read in the request's time zone
 * when they carry no offset. A date alone (`2024-05-31`) is a whole day: as `date_from` its first
 * instant, as `date_to` everything before the next day (so the day is included).
 */

const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?([Zz]|[+-]\d{2}(?::?\d{2})?)?)?$/;

/** A parsed date or date-time; `instant` is set when it carries an offset (or Z). */
interface ParsedIso {
  /** The wall-clock time, read as if it were UTC, in milliseconds. */
  wallMs: number;
  dateOnly: boolean;
  /** Milliseconds east of UTC, when the text has an offset. */
  offsetMs?: number;
}

function utcMs(year: number, month: number, day: number, hour = 0, minute = 0, second = 0, ms = 0): number {
  const d = new Date(Date.UTC(2000, month - 1, day, hour, minute, second, ms));
  d.setUTCFullYear(year); // Date.UTC reads years 0-99 as 1900-1999
  return d.getTime();
}

function parseIso(text: string): ParsedIso | undefined {
  const m = ISO_8601.exec(text.trim());
  if (!m) return undefined;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const hour = m[4] === undefined ? 0 : Number(m[4]);
  const minute = m[5] === undefined ? 0 : Number(m[5]);
  const second = m[6] === undefined ? 0 : Number(m[6]);
  const ms = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'));
  if (year < 1 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const wallMs = utcMs(year, month, day, hour, minute, second, ms);
  if (new Date(wallMs).getUTCDate() !== day) return undefined; // 2024-02-30
  let offsetMs: number | undefined;
  const zone = m[8];
  if (zone !== undefined) {
    if (zone === 'Z' || zone === 'z') offsetMs = 0;
    else {
      const digits = zone.slice(1).replace(':', '');
      const oh = Number(digits.slice(0, 2));
      const om = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
      if (oh > 23 || om > 59) return undefined;
      offsetMs = (zone[0] === '-' ? -1 : 1) * (oh * 60 + om) * 60_000;
    }
  }
  return { wallMs, dateOnly: m[4] === undefined, ...(offsetMs === undefined ? {} : { offsetMs }) };
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** Milliseconds east of UTC of time zone `timeZone` at instant `atMs`. */
function zoneOffsetMs(timeZone: string, atMs: number): number {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      era: 'short',
    });
    formatters.set(timeZone, f);
  }
  const parts: Record<string, string> = {};
  for (const p of f.formatToParts(new Date(atMs))) parts[p.type] = p.value;
  const year = parts.era === 'BC' || parts.era === 'B' ? 1 - Number(parts.year) : Number(parts.year);
  const wall = utcMs(year, Number(parts.month), Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second));
  return wall - Math.floor(atMs / 1000) * 1000;
}

/** The instant at which the wall clock of `timeZone` shows `wallMs` (the earlier one around DST). */
export function wallTimeToInstant(wallMs: number, timeZone: string): number {
  if (timeZone.toUpperCase() === 'UTC') return wallMs;
  const guess = wallMs - zoneOffsetMs(timeZone, wallMs);
  return wallMs - zoneOffsetMs(timeZone, guess);
}

const DAY_MS = 86_400_000;

/**
 * Reads a filter date. Returns undefined when the text is not an ISO 8601 date or date-time.
 * `end`: the value is an upper bound (date_to), so a date alone covers its whole day.
 */
export function readFilterDate(text: string, timeZone: string, end: boolean): { at: Date; inclusive: boolean } | undefined {
  const parsed = parseIso(text);
  if (!parsed) return undefined;
  if (parsed.offsetMs !== undefined) return { at: new Date(parsed.wallMs - parsed.offsetMs), inclusive: true };
  if (parsed.dateOnly && end) return { at: new Date(wallTimeToInstant(parsed.wallMs + DAY_MS, timeZone)), inclusive: false };
  return { at: new Date(wallTimeToInstant(parsed.wallMs, timeZone)), inclusive: true };
}

/**
 * Calling windows and due times, pure. A window is `start`-`end` (HH:MM, 24-hour) in an IANA time
 * zone; an end before the start means the window crosses midnight (22:00-06:00); an end equal to
 * the start means all day. Wall-clock times
 * that a DST change skips open at the first instant after the gap; a repeated hour counts once.
 */
import { DateTime } from 'luxon';
import { LEGAL_HOURS, type Jurisdiction, type LegalHours } from './legal-hours.js';
import { numberCountry } from './phone.js';
import { numberZone } from './phone-zone.js';

const minutesOf = (hhmm: string): number => {
  const [h, m] = hhmm.split(':').map(Number);
  return h! * 60 + m!;
};

/** Minutes since local midnight of `at` in `zone`. */
function localMinutes(at: Date, zone: string): number {
  const local = DateTime.fromJSDate(at, { zone });
  return local.hour * 60 + local.minute;
}

/** Whether `at` falls inside the window (start inclusive, end exclusive). */
export function inWindow(at: Date, start: string, end: string, zone: string): boolean {
  const s = minutesOf(start);
  const e = minutesOf(end);
  // All day: no need of the local time (the claim asks for every lead).
  if (s === e) return true;
  const now = localMinutes(at, zone);
  return s < e ? now >= s && now < e : now >= s || now < e;
}

/**
 * The next instant at or after `at` when the window is open: `at` itself when it already is,
 * otherwise the coming opening (`start` on the local day it next occurs).
 */
export function nextOpening(at: Date, start: string, end: string, zone: string): Date {
  if (inWindow(at, start, end, zone)) return at;
  const local = DateTime.fromJSDate(at, { zone });
  const s = minutesOf(start);
  for (let day = 0; day <= 2; day++) {
    let candidate: DateTime = local.startOf('day').plus({ days: day }).set({ hour: Math.floor(s / 60), minute: s % 60 });
    // luxon moves a time inside a DST gap forward by the gap's length; the window opens when the gap ends.
    if (candidate.hour * 60 + candidate.minute !== s) candidate = gapEnd(candidate);
    if (candidate.toMillis() > at.getTime()) return candidate.toJSDate();
  }
  /* c8 ignore next */
  throw new Error(`no opening found for ${start}-${end} in ${zone}`);
}

/** The first instant after the clock change just before `shifted` (the offset changes there; found to the minute). */
function gapEnd(shifted: DateTime): DateTime {
  let lo = shifted.minus({ hours: 3 }).toMillis();
  let hi = shifted.toMillis();
  const after = shifted.offset;
  while (hi - lo > 60_000) {
    const mid = lo + Math.floor((hi - lo) / 2 / 60_000) * 60_000;
    if (DateTime.fromMillis(mid, { zone: shifted.zone }).offset === after) hi = mid;
    else lo = mid;
  }
  return DateTime.fromMillis(hi, { zone: shifted.zone });
}

/**
 * The zone a lead is called in: its payload's `timezone` when that is a known IANA zone; else, when
 * the window follows the recipient (`window_timezone: recipient`), the zone its number tells (the
 * number's region, or its area where the region has several zones); else the configured zone.
 */
export function leadZone(payload: Record<string, unknown>, configured: string, follows: 'configuration' | 'recipient' = 'configuration'): string {
  const tz = payload.timezone;
  if (typeof tz === 'string' && tz.length > 0 && DateTime.local().setZone(tz).isValid) return tz;
  const phone = payload.customer_mobile_number;
  if (follows === 'recipient' && typeof phone === 'string') return numberZone(phone) ?? configured;
  return configured;
}

/** The start of `at`'s day in `zone` and the start of the next (23 or 25 hours later on the days clocks change). */
export function localDay(at: Date, zone: string): { start: Date; next: Date } {
  const start = DateTime.fromJSDate(at, { zone }).startOf('day');
  return { start: start.toJSDate(), next: start.plus({ days: 1 }).toJSDate() };
}

/** When an attempt is due: `from` plus `offsetSeconds`. */
export const dueAfter = (from: Date, offsetSeconds: number): Date => new Date(from.getTime() + offsetSeconds * 1000);

/** Why a lead waits for a jurisdiction's calling hours, and until when. */
export interface LegalHold {
  jurisdiction: Jurisdiction;
  /** `start`-`end` and the zone they were judged in (several when the number tells none). */
  hours: string;
  zones: string[];
  until: Date;
}

/**
 * Whether the calling hours of law stop a call to `phone` at `at`: of the `jurisdictions` named,
 * those whose countries the number belongs to apply, in the recipient's zone (the one its number
 * tells, else every zone of the jurisdiction). Undefined when the call may go; otherwise the first
 * jurisdiction that stops it and the next instant all of them allow.
 */
export function legalHold(at: Date, phone: string, jurisdictions: readonly string[]): LegalHold | undefined {
  if (jurisdictions.length === 0) return undefined;
  const country = numberCountry(phone);
  if (country === undefined) return undefined;
  const rules: { jurisdiction: Jurisdiction; rule: LegalHours; zones: string[] }[] = [];
  for (const j of jurisdictions) {
    const rule: LegalHours | undefined = LEGAL_HOURS[j as Jurisdiction];
    if (!rule || !rule.countries.includes(country)) continue;
    const told = numberZone(phone);
    rules.push({ jurisdiction: j as Jurisdiction, rule, zones: told ? [told] : [...rule.zones] });
  }
  const open = (t: Date) => rules.find((r) => r.zones.some((z) => !inWindow(t, r.rule.start, r.rule.end, z)));
  const first = open(at);
  if (!first) return undefined;
  // The next instant every applicable window is open in every zone: each closed one moves it on.
  let until = at;
  for (let round = 0; round < 16; round++) {
    const closed = open(until);
    if (!closed) break;
    for (const z of closed.zones) until = nextOpening(until, closed.rule.start, closed.rule.end, z);
  }
  return { jurisdiction: first.jurisdiction, hours: `${first.rule.start}-${first.rule.end}`, zones: first.zones, until };
}

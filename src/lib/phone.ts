import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

const E164_SHAPE = /^\+[1-9]\d{6,14}$/;

/**
 * True when `value` is a strict E.164 number: `+` and digits only, and a valid number for its
 * country according to libphonenumber's metadata. Formatted input (spaces, dashes, brackets) is
 * refused rather than rewritten, so what is stored is exactly what the client sent.
 */
export function isE164(value: unknown): value is string {
  return phoneNumberProblem(value) === undefined;
}

/**
 * `isE164` for a stream of many numbers (a do-not-call list's import): the same verdicts, but a
 * number whose block (the same digits but the last four, the same length) already held a valid
 * number is taken without parsing again: libphonenumber's patterns decide validity by a number's
 * leading digits and length, and parsing costs some 30 µs a number, half a minute a million.
 * Only valid blocks are remembered, so a valid number is never refused for a neighbour's sake.
 */
export function e164Checker(maxBlocks = 500_000): (value: string) => boolean {
  const validBlocks = new Set<string>();
  return (value) => {
    if (!E164_SHAPE.test(value)) return false;
    const block = value.slice(0, -4);
    if (validBlocks.has(block)) return true;
    if (!isE164(value)) return false;
    if (validBlocks.size >= maxBlocks) validBlocks.clear();
    validBlocks.add(block);
    return true;
  };
}

export const E164_HINT = 'must be an E.164 phone number such as +14155550123 (a plus sign and digits only)';

const regions = new Intl.DisplayNames('en', { type: 'region' });
const regionName = (code: string) => regions.of(code) ?? code;

/**
 * Why `value` is not a number Dialer calls, in words for the field's message; undefined when it is
 * one. A number written right (E.164) but unknown to its country's numbering plan, such as the
 * fictional +1 555 numbers, is told apart from one written wrong.
 */
export function phoneNumberProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || !E164_SHAPE.test(value)) return E164_HINT;
  const parsed = parsePhoneNumberFromString(value);
  if (parsed === undefined) return "is written as E.164, but begins with no country's calling code";
  if (parsed.number === value && parsed.isValid()) return undefined;
  const countries = parsed.country ? [parsed.country] : parsed.getPossibleCountries();
  const others = countries.length - 1;
  const where = `+${parsed.countryCallingCode}${countries[0] ? `, ${regionName(countries[0])}` : ''}${others > 0 ? ` and ${others} other ${others === 1 ? 'country' : 'countries'}` : ''}`;
  return `is written as E.164, but is not a valid number for its country (${where})`;
}

/** The country (ISO 3166-1 alpha-2) a number belongs to, as libphonenumber's metadata reads it; undefined when it cannot tell. */
export function numberCountry(e164: string): string | undefined {
  return parsePhoneNumberFromString(e164)?.country;
}

/**
 * The E.164 prefixes a local caller ID for `e164` starts with, nearest first: in the North American
 * Numbering Plan (+1) the area code, then the plan; elsewhere the country calling code (the
 * numbering plans of other countries give no area code that libphonenumber's metadata can tell
 * apart from the rest of the number). Empty for a number it cannot read.
 */
export function localPrefixes(e164: string): string[] {
  const parsed = parsePhoneNumberFromString(e164);
  if (!parsed) return [];
  const country = `+${parsed.countryCallingCode}`;
  if (parsed.countryCallingCode === '1' && /^[2-9]\d{9}$/.test(parsed.nationalNumber)) return [`${country}${parsed.nationalNumber.slice(0, 3)}`, country];
  return [country];
}

import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

const E164_SHAPE = /^\+[1-9]\d{6,14}$/;

/**
 * True when `value` is a strict E.164 number: `+` and digits only, and a valid number for its
 * country according to libphonenumber's metadata. Formatted input (spaces, dashes, brackets) is
 * refused rather than rewritten, so what is stored is exactly what the client sent.
 */
export function isE164(value: unknown): value is string {
  if (typeof value !== 'string' || !E164_SHAPE.test(value)) return false;
  const parsed = parsePhoneNumberFromString(value);
  return parsed !== undefined && parsed.number === value && parsed.isValid();
}

export const E164_HINT = 'must be an E.164 phone number such as +14155550123 (a plus sign and digits only)';

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

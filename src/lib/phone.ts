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

/** The country (ISO 3166-1 alpha-2) a number belongs to, as libphonenumber's metadata reads it; undefined when it cannot tell. */
export function numberCountry(e164: string): string | undefined {
  return parsePhoneNumberFromString(e164)?.country;
}

/** Timestamps leave the service as ISO 8601 strings in UTC; `null` stays `null`. */
export function iso(value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  const date = value instanceof Date ? value : new Date(value);
  return date.toISOString();
}

/** The same, for columns that are never null. */
export function isoRequired(value: Date | string): string {
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

const HHMM = /^([01]\d|2[0-3]):[0-5]\d$/;
export const isHhMm = (value: string): boolean => HHMM.test(value);

/** True when `name` is an IANA time zone the runtime knows. */
export function isTimeZone(name: string): boolean {
  if (name.length === 0 || name.length > 64) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

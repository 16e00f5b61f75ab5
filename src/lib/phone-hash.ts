/**
 * The one-way hash an erased phone number is kept as: `sha256:` and the hex SHA-256 of the
 * installation's key (the setting `phone_hash_key`, made by the migration) followed by the number.
 * Written once, as SQL over an expression, so that erasure (which writes it) and the blacklist
 * rule (which matches an erased opt-out with it) compute the same value inside their statements.
 */
export const PHONE_HASH_PREFIX = 'sha256:';

/** The hash of the E.164 number `phone` (an SQL expression); the key is read once per statement. */
export function phoneHashSql(phone: string): string {
  return `('${PHONE_HASH_PREFIX}' || encode(sha256(convert_to((SELECT s.value FROM settings s WHERE s.key = 'phone_hash_key') || (${phone}), 'UTF8')), 'hex'))`;
}

/** Whether a stored number is an erased one's hash. */
export function isPhoneHash(value: unknown): boolean {
  return typeof value === 'string' && value.startsWith(PHONE_HASH_PREFIX);
}

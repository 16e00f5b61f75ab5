import { hash, verify } from '@node-rs/argon2';

// Argon2id (memory-hard) with the library's defaults: 19 MiB, 2 passes, as OWASP recommends.
export const hashPassword = (password: string): Promise<string> => hash(password);

let dummyHash: Promise<string> | undefined;

/** Verifies a password; with no stored hash it still spends the same time, so timing tells nothing. */
export async function verifyPassword(stored: string | undefined, password: string): Promise<boolean> {
  if (stored === undefined) {
    dummyHash ??= hash('not-a-real-password');
    await verify(await dummyHash, password).catch(() => false);
    return false;
  }
  return verify(stored, password).catch(() => false);
}

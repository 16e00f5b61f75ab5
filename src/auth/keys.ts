import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Db } from '../db/index.js';

/**
 * The login-token signing key: DIALER_JWT_SECRET when set; otherwise generated once and kept, in
 * the data directory for the embedded database, or in the `settings` table on PostgreSQL (so that
 * every process of a deployment signs and verifies with the same key).
 */
export async function resolveJwtSecret(options: { configured: string | undefined; db: Db; dataDir: string }): Promise<string> {
  if (options.configured) return options.configured;
  const fresh = randomBytes(48).toString('base64url');
  if (options.db.kind === 'pglite') {
    const file = path.join(options.dataDir, 'jwt.key');
    try {
      return fs.readFileSync(file, 'utf8').trim();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    fs.mkdirSync(options.dataDir, { recursive: true });
    fs.writeFileSync(file, `${fresh}\n`, { mode: 0o600 });
    return fresh;
  }
  await options.db.query(
    "INSERT INTO settings (key, value) VALUES ('jwt_secret', $1) ON CONFLICT (key) DO NOTHING",
    [fresh],
  );
  const { rows } = await options.db.query<{ value: string }>("SELECT value FROM settings WHERE key = 'jwt_secret'");
  return rows[0]!.value;
}

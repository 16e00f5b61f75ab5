/**
 * `dialer serve` in-process for end-to-end tests: the environment is also copied to process.env
 * (some settings are read from it at start, as in production), then the admin logs in.
 */
import type { Logger } from '../../src/lib/logger.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/lib/logger.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { client, TEST_OUTBOUND_ALLOW, type Client } from './app.js';
import { migratedDataDir } from './db.js';

export interface Served {
  server: RunningServer;
  /** The admin of DIALER_ADMIN_EMAIL, logged in. */
  admin: Client;
  anon: Client;
}

/**
 * The tests' receivers listen on 127.0.0.1: loopback is allowed unless `env` sets DIALER_OUTBOUND_ALLOW
 * itself. The sandbox line stays off unless a test asks for it: a test's leads go where the test says.
 * On the embedded database, the data directory starts with the migrated database in it (see
 * migratedDataDir): these tests are about what the running service does, not its first start.
 */
export async function serveDialer(given: Record<string, string> & { DIALER_ADMIN_EMAIL: string; DIALER_ADMIN_PASSWORD: string }, logger: Logger = createLogger('silent')): Promise<Served> {
  const env = { DIALER_SANDBOX: 'false', DIALER_OUTBOUND_ALLOW: TEST_OUTBOUND_ALLOW, ...given };
  for (const [k, v] of Object.entries(env)) process.env[k] = v;
  if (given.DIALER_DATA_DIR && !given.DATABASE_URL) await migratedDataDir(given.DIALER_DATA_DIR);
  const server = await startServer(loadConfig(env), logger);
  const anon = client(server.app);
  const login = await anon.post('/login', { email: env.DIALER_ADMIN_EMAIL, password: env.DIALER_ADMIN_PASSWORD });
  if (login.status !== 200) throw new Error(`admin login failed: ${JSON.stringify(login.body)}`);
  return { server, admin: client(server.app, login.body.access_token), anon };
}

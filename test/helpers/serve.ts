/**
 * `dialer serve` in-process for end-to-end tests: the environment is also copied to process.env
 * (some settings are read from it at start, as in production), then the admin logs in.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { API_PREFIX } from '../../src/app.js';
import type { Logger } from '../../src/lib/logger.js';
import { loadConfig } from '../../src/config.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { createLogger } from '../../src/lib/logger.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { client, TEST_OUTBOUND_ALLOW, type Client } from './app.js';
import { migratedDataDir } from './db.js';
import { freePort } from './net.js';

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

export interface OnEmulator extends Served {
  emulator: Emulator;
  /** Stops Dialer and the emulator and removes the data directory. */
  close(): Promise<void>;
}

/**
 * `dialer serve` on the embedded database in a temporary folder, its Twilio the provider emulator
 * (the callees the test scripts): the admin admin@example.com, polling every 100 ms, quiet logs.
 * `name` names the folder and the Twilio account (each file its own); `env` adds to or overrides
 * those settings (the AI services, a realtime model).
 */
export async function serveOnEmulator(name: string, env: Record<string, string>): Promise<OnEmulator> {
  const port = await freePort();
  const twilio = { accountSid: `AC${createHash('sha256').update(name).digest('hex').slice(0, 32)}`, authToken: `${name}-e2e-token` };
  const emulator = await startEmulator({ dialerUrl: `http://127.0.0.1:${port}${API_PREFIX}`, twilio, plivo: { authId: 'MAX', authToken: 'x' }, exotel: { accountSid: 'x', apiKey: 'x', apiToken: 'x' } });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `dialer-${name}-`));
  const served = await serveDialer({
    PORT: String(port),
    HOST: '127.0.0.1',
    DIALER_DATA_DIR: dataDir,
    DIALER_JWT_SECRET: `${name}-secret-`.padEnd(40, 'x'),
    DIALER_ADMIN_EMAIL: 'admin@example.com',
    DIALER_ADMIN_PASSWORD: 'admin-password-1',
    DIALER_POLL_MS: '100',
    LOG_LEVEL: 'silent',
    TWILIO_ACCOUNT_SID: twilio.accountSid,
    TWILIO_AUTH_TOKEN: twilio.authToken,
    TWILIO_API_URL: emulator.url,
    ...env,
  });
  return {
    ...served,
    emulator,
    close: async () => {
      await served.server.close();
      await emulator.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

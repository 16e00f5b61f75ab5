import type { Config } from './config.js';
import { buildApp } from './app.js';
import { openAndMigrate, type Db } from './db/index.js';
import type { App } from './http/index.js';
import type { Logger } from './lib/logger.js';
import { tenantsService } from './tenants/index.js';

export interface RunningServer {
  app: App;
  db: Db;
  /** The address the API listens on, e.g. http://127.0.0.1:8080. */
  url: string;
  close(): Promise<void>;
}

/**
 * Opens and migrates the database, makes sure an admin exists, and listens. Used by `dialer serve`.
 * `onAdminCreated` receives the bootstrap admin when this start created it (with the generated
 * password when none was configured), so the caller can show it once.
 */
export async function startServer(
  config: Config,
  logger: Logger,
  onAdminCreated?: (admin: { email: string; generatedPassword?: string }) => void,
): Promise<RunningServer> {
  const db = await openAndMigrate(config);
  let app: App | undefined;
  try {
    const admin = await tenantsService(db).ensureAdmin(config.adminEmail, config.adminPassword);
    if (admin) onAdminCreated?.(admin);
    app = await buildApp({ config, db, logger });
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    await app?.close().catch(() => undefined);
    await db.close();
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const running = app;
  return {
    app: running,
    db,
    url: `http://${host}:${port}`,
    async close() {
      try {
        await running.close();
      } finally {
        await db.close();
      }
    },
  };
}

import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.js';
import type { Db } from './db/index.js';
import type { App } from './http/index.js';
import { registerTenants } from './tenants/index.js';

export interface FeatureDeps {
  config: Config;
  db: Db;
  log: FastifyBaseLogger;
}

/**
 * Mounts every feature's routes under the API prefix. Each feature's index.ts is its only door;
 * a feature takes the database and configuration and builds its own repository and service.
 */
export async function registerFeatures(app: App, deps: FeatureDeps): Promise<void> {
  registerTenants(app, deps.db);
}

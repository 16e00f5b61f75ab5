import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.js';
import type { Db } from './db/index.js';
import type { App } from './http/index.js';
import { registerAnalytics } from './analytics/index.js';
import { registerBlacklist } from './blacklist/index.js';
import { registerConfigurations } from './configurations/index.js';
import { registerLeads } from './leads/index.js';
import { registerNumbers } from './numbers/index.js';
import { registerTemplates } from './templates/index.js';
import { registerWebhooks } from './webhooks/index.js';
import { registerTenants } from './tenants/index.js';
import type { OnFinished } from './lifecycle/index.js';
import type { RecordingStore } from './recordings/index.js';

export interface FeatureDeps {
  config: Config;
  db: Db;
  log: FastifyBaseLogger;
  /** Where call recordings are read from (GET /leads/recording/{call_sid}). */
  recordings?: RecordingStore;
  /** What finishing a lead queues (its notifications), in the finishing transaction. */
  onFinished: OnFinished;
}

/**
 * Mounts every feature's routes under the API prefix. Each feature's index.ts is its only door;
 * a feature takes the database and configuration and builds its own repository and service.
 */
export async function registerFeatures(app: App, deps: FeatureDeps): Promise<void> {
  registerTenants(app, deps.db);
  registerTemplates(app, deps);
  registerConfigurations(app, deps);
  registerNumbers(app, deps);
  registerBlacklist(app, deps);
  registerLeads(app, deps);
  registerWebhooks(app, deps);
  registerAnalytics(app, deps);
}

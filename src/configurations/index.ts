import type { Db } from '../db/index.js';
import type { App } from '../http/index.js';
import type { OutboundPolicy } from '../lib/outbound/index.js';
import { registerConfigurationRoutes } from './routes.js';
import { ConfigurationsService, type OnCallingEnabled } from './service.js';

export { ConfigurationsService, findConfiguration, findPushTargets, type OnCallingEnabled, type PushTarget, type PushTargetKey } from './service.js';
export type { ConfigurationRow } from './repository.js';
export { effectiveConfiguration, mayCall, EFFECTIVE_PROVIDER_SQL, MAY_CALL_SQL } from './effective.js';
export { findInboundConfiguration, type InboundConfiguration } from './inbound.js';
export { PROVIDERS, ConfigurationOverride, type Provider, type PreCheck } from './schema.js';

/** The configurations feature's only door: CRUD of call execution configurations. */
export function registerConfigurations(app: App, db: Db, policy: OutboundPolicy, onCallingEnabled?: OnCallingEnabled): void {
  registerConfigurationRoutes(app, new ConfigurationsService(db, policy, onCallingEnabled));
}

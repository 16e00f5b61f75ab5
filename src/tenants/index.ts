import type { Db } from '../db/index.js';
import type { App } from '../http/index.js';
import { TenantsRepository } from './repository.js';
import { registerTenantRoutes } from './routes.js';
import { TenantsService } from './service.js';

export { TenantsService } from './service.js';
export { TenantsRepository } from './repository.js';
export type { MerchantRow, ResellerRow, UserRecord } from './repository.js';

export function tenantsService(db: Db): TenantsService {
  return new TenantsService(new TenantsRepository(db));
}

export function registerTenants(app: App, db: Db): void {
  registerTenantRoutes(app, tenantsService(db));
}

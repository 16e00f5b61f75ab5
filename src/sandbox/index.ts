/**
 * The sandbox line: a first call with no account anywhere. Providers without credentials are
 * served by the provider emulator inside the process (its simulated customer answers); a person
 * calls it from the dashboard or pushes a lead on it. The feature's only door.
 */
import { ConfigurationsService, type OnCallingEnabled } from '../configurations/index.js';
import type { Db } from '../db/index.js';
import type { OnFinished } from '../lifecycle/index.js';
import type { OutboundPolicy } from '../lib/outbound/index.js';
import type { SandboxStatus } from '../telephony/index.js';
import type { App } from '../http/index.js';
import { LeadsService } from '../leads/index.js';
import { registerSandboxRoutes } from './routes.js';
import { SandboxService } from './service.js';

export { startSandboxLine, SANDBOX_CALLEE, SANDBOX_CUSTOMER_NUMBER, SANDBOX_NUMBERS, type SandboxLine } from './line.js';
export { SANDBOX_TEMPLATE_NAME, SANDBOX_RESELLER_NAME, SANDBOX_CHANNEL } from './repository.js';
export { SANDBOX_FLOW, syncSandboxNumbers } from './service.js';
export { SandboxInfo, SandboxCallResult } from './routes.js';

export function registerSandbox(
  app: App,
  deps: { db: Db; onFinished: OnFinished; onCallingEnabled: OnCallingEnabled; policy: OutboundPolicy; sandbox: () => SandboxStatus },
): void {
  const { db, policy } = deps;
  registerSandboxRoutes(
    app,
    new SandboxService(db, {
      leads: new LeadsService(db, deps.onFinished, policy),
      configurations: new ConfigurationsService(db, policy, deps.onCallingEnabled),
      policy,
      status: deps.sandbox,
    }),
  );
}

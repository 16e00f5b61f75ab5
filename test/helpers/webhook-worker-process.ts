/**
 * A worker process that only delivers webhooks: a WebhookDispatcher on the test PostgreSQL, for
 * tests that kill a worker mid-delivery. Environment: DATABASE_URL, WORKER_ID, the DIALER_WEBHOOK_*
 * settings, LEASE_MARGIN_MS. Prints "ready" once it polls.
 */
import { webhookSettings } from '../../src/config/webhooks.js';
import { openPostgres } from '../../src/db/index.js';
import { createLogger } from '../../src/lib/logger.js';
import { OutboundClient, parseOutboundAllowList } from '../../src/lib/outbound/index.js';
import { WebhookDispatcher } from '../../src/webhooks/index.js';

const db = await openPostgres(process.env.DATABASE_URL!, { max: 2 });
const dispatcher = new WebhookDispatcher({
  db,
  log: createLogger('warn'),
  settings: webhookSettings(process.env),
  workerId: process.env.WORKER_ID!,
  pollMs: 50,
  leaseMarginMs: Number(process.env.LEASE_MARGIN_MS ?? 10_000),
  outbound: new OutboundClient(parseOutboundAllowList('127.0.0.0/8')),
});
dispatcher.start();
process.stdout.write('ready\n');

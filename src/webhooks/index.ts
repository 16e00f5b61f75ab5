import type { FeatureDeps } from '../features.js';
import type { App } from '../http/index.js';
import { registerWebhookRoutes } from './routes.js';

export { enqueueReportingWebhook, reportingPayload, FAILURE_OUTCOMES } from './payload.js';
export { WebhookDispatcher, type DispatcherOptions } from './dispatcher.js';
export { webhookSettings, type WebhookSettings } from './settings.js';
export { signWebhook, verifyWebhookSignature } from './sign.js';
export { enqueueServiceCallback, serviceCallbackPayload } from './service-callback.js';
import type { Queryable } from '../db/index.js';
import { enqueueReportingWebhook } from './payload.js';
import { enqueueServiceCallback } from './service-callback.js';

/**
 * What a lead's finish queues, in the transaction that finishes it (phone calls and WebRTC
 * sessions alike): its reporting webhook (spec 6.1) and, after a conversation, the service
 * callback (spec 6.2) to the configuration's endpoint or `deploymentCallbackUrl`.
 */
export function queueFinishNotifications(deploymentCallbackUrl: string | undefined): (q: Queryable, leadId: string) => Promise<void> {
  return async (q, leadId) => {
    await enqueueReportingWebhook(q, leadId);
    await enqueueServiceCallback(q, leadId, deploymentCallbackUrl);
  };
}

/** The webhooks feature's only door: reporting webhook queueing, delivery, and its read API. */
export function registerWebhooks(app: App, deps: FeatureDeps): void {
  registerWebhookRoutes(app, deps.db);
}

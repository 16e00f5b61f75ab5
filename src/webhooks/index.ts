import type { Db } from '../db/index.js';
import type { App } from '../http/index.js';
import { registerWebhookRoutes } from './routes.js';

export { enqueueReportingWebhook, enqueueReportingWebhooks, reportingPayload, eraseDeliveryPayloads } from './payload.js';
export { WebhookDispatcher, type DispatcherOptions } from './dispatcher.js';
export { signWebhook, verifyWebhookSignature } from './sign.js';
export { enqueueServiceCallback, enqueueServiceCallbacks, serviceCallbackPayload } from './service-callback.js';
export { queueFinishNotifications } from './notifications.js';

/** The webhooks feature's only door: reporting webhooks and service callbacks (queueing, delivery) and their read API. */
export function registerWebhooks(app: App, db: Db): void {
  registerWebhookRoutes(app, db);
}

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

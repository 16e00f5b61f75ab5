import type { Queryable } from '../db/index.js';
import { enqueueReportingWebhooks } from './payload.js';
import { enqueueServiceCallbacks } from './service-callback.js';

/**
 * What a lead's finish queues, in the transaction that finishes it (phone calls and WebRTC
 * sessions alike): its reporting webhook and, after a conversation, the service
 * callback to the configuration's endpoint or `deploymentCallbackUrl`. Called with every
 * lead that one statement finished.
 */
export function queueFinishNotifications(deploymentCallbackUrl: string | undefined): (q: Queryable, leadIds: readonly string[]) => Promise<void> {
  // Leads that finished together (a worker's batch) are read and queued together: a few statements
  // per batch rather than two reads per lead.
  return async (q, leadIds) => {
    await enqueueReportingWebhooks(q, leadIds);
    await enqueueServiceCallbacks(q, leadIds, deploymentCallbackUrl);
  };
}

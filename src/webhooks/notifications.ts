import type { Queryable } from '../db/index.js';
import type { OnFinished } from '../lifecycle/index.js';
import { reportingDeliveries } from './payload.js';
import { asksForReport, conversed, WebhooksRepository } from './repository.js';
import { serviceCallbackDeliveries } from './service-callback.js';

/**
 * What a lead's finish queues, in the transaction that finishes it (phone calls and WebRTC
 * sessions alike): its reporting webhook and, after a conversation, the service
 * callback to the configuration's endpoint or `deploymentCallbackUrl`. Called with every
 * lead that one statement finished.
 */
export function queueFinishNotifications(deploymentCallbackUrl: string | undefined): OnFinished {
  // Leads that finished together (a worker's batch) are read once and queued by one insert, both
  // kinds together: each statement is a round trip inside the finish's transaction, which holds
  // its leads' row locks until it commits.
  const queue = async (q: Queryable, leadIds: readonly string[]) => {
    if (leadIds.length === 0) return;
    const repo = new WebhooksRepository(q);
    const leads = await repo.notifiable(leadIds, deploymentCallbackUrl !== undefined);
    await repo.insert([...reportingDeliveries(leads), ...serviceCallbackDeliveries(leads, deploymentCallbackUrl)]);
  };
  // A lead that asked for no report and had no conversation notifies nobody: the finish of calls
  // leaves it out as it writes it (most unanswered calls), and reads nothing when none is left.
  return Object.assign(queue, { concerns: (l: string) => `(${asksForReport(l)} OR ${conversed(l)})` });
}

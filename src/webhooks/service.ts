import type { Principal } from '../auth/index.js';
import type { Db } from '../db/index.js';
import { conflict, notFound } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { WebhooksRepository, type DeliveryRecord } from './repository.js';

/** What the read API may show of a lead's notifications. */
export class WebhooksService {
  private readonly repo: WebhooksRepository;

  constructor(db: Db) {
    this.repo = new WebhooksRepository(db);
  }

  /** The lead's deliveries and their attempts; 404 both when the lead is missing and when it is out of scope. */
  async deliveriesOfLead(caller: Principal, leadId: string): Promise<DeliveryRecord[]> {
    if (!(await this.repo.leadInScope(caller, leadId))) throw notFound(`Lead ${leadId}`);
    return this.repo.deliveriesOfLead(leadId);
  }

  /** Sends a finished delivery again (a receiver that was down, a fixed endpoint); 404 out of scope, 409 while it is still being delivered. */
  async redeliver(caller: Principal, leadId: string, deliveryId: string): Promise<DeliveryRecord> {
    if (!(await this.repo.leadInScope(caller, leadId))) throw notFound(`Lead ${leadId}`);
    const result = await this.repo.redeliver(newId(), leadId, deliveryId);
    if (result === 'missing') throw notFound(`Delivery ${deliveryId} of lead ${leadId}`);
    if (result === 'pending') throw conflict(`Delivery ${deliveryId} is still being delivered; send it again once it has succeeded or failed`, 'delivery_pending');
    return result;
  }
}

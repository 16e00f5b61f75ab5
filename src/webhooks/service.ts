import type { Principal } from '../auth/index.js';
import type { Db } from '../db/index.js';
import { notFound } from '../lib/errors.js';
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
}

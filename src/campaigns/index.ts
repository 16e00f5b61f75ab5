import type { Db } from '../db/index.js';
import type { App } from '../http/index.js';
import { registerCampaignRoutes } from './routes.js';
import { CampaignsService, type FinishStopped, type WakeWorkers } from './service.js';

export { joinProblem, type FinishStopped, type WakeWorkers } from './service.js';
export { campaignRefs, campaignHold, type CampaignRef } from './repository.js';
export { admitCampaignStarts, type Admission } from './admission.js';
export { Campaign, CampaignSummary, CreateCampaignBody, ResultList, CAMPAIGN_STATUSES, type CampaignStatus } from './schema.js';

/** The campaigns feature's only door: the campaign API, what a push checks of a campaign, and the claim's admission of its starts. */
export function registerCampaigns(app: App, deps: { db: Db; finishStopped: FinishStopped; wake: WakeWorkers; publicBase: string }): void {
  registerCampaignRoutes(app, new CampaignsService(deps.db, deps.finishStopped, deps.wake), deps.publicBase);
}

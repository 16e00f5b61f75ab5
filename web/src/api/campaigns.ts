/** The campaign operations the dashboard uses, and the import's preview, typed by the server's schemas. */
import type { Static } from 'typebox';
import { http } from './client.js';
import type { Paged } from './types.js';
import type { Campaign as CampaignSchema, CampaignSummary as SummarySchema, CreateCampaignBody as CreateSchema, ResultList as ResultListSchema } from '../../../src/campaigns/index.js';
import type { ImportPreview as PreviewSchema, PreviewBody as PreviewBodySchema } from '../../../src/leads/index.js';

export type Campaign = Static<typeof CampaignSchema>;
export type CampaignSummary = Static<typeof SummarySchema>;
export type CreateCampaign = Static<typeof CreateSchema>;
export type ResultList = Static<typeof ResultListSchema>;
export type ImportPreview = Static<typeof PreviewSchema>;
export type PreviewBody = Static<typeof PreviewBodySchema>;

const at = (id: string) => `/campaigns/${encodeURIComponent(id)}`;

export const campaigns = {
  list: (page: number, signal?: AbortSignal) => http.get<Paged<CampaignSummary>>('/campaigns', { page, page_size: 50 }, signal),
  get: (id: string, signal?: AbortSignal) => http.get<Campaign>(at(id), undefined, signal),
  create: (body: CreateCampaign) => http.post<Campaign>('/campaigns', body),
  pause: (id: string) => http.post<Campaign>(`${at(id)}/pause`),
  resume: (id: string) => http.post<Campaign>(`${at(id)}/resume`),
  stop: (id: string) => http.post<Campaign>(`${at(id)}/stop`),
  results: (id: string, page: number, signal?: AbortSignal) => http.get<ResultList>(`${at(id)}/results`, { page, page_size: 50 }, signal),
  resultsPath: (id: string) => `${at(id)}/results`,
};

export const importPreview = (body: PreviewBody) => http.post<ImportPreview>('/leads/import/preview', body);

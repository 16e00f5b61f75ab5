/** Every API operation the dashboard uses, typed by the server's schemas (api/types.ts). */
import { http } from './client.js';
import type * as T from './types.js';
import type { Overview, LiveCalls } from '../../../src/overview/index.js';
import type { Static } from 'typebox';

export type OverviewData = Static<typeof Overview>;
export type LiveCallList = Static<typeof LiveCalls>;

export const analytics = {
  query: <Row = Record<string, unknown>>(body: T.AnalyticsBody) =>
    http.post<Omit<T.AnalyticsResponse, 'data'> & { data: Row[] }>('/analytics', body),
};

export const overview = {
  get: (timezone: string, signal?: AbortSignal) => http.get<OverviewData>('/overview', { timezone }, signal),
  liveCalls: (signal?: AbortSignal) => http.get<LiveCallList>('/calls/live', undefined, signal),
};

import type { LeadList as LeadListSchema, LeadListQuery as LeadListQuerySchema, Attempt as AttemptSchema, RecordingLink as RecordingLinkSchema, RecordingPeaks as RecordingPeaksSchema } from '../../../src/leads/index.js';
import type { LeadEvent as LeadEventSchema, LiveEvent as LiveEventSchema } from '../../../src/leads/events.js';

export type LeadList = Static<typeof LeadListSchema>;
export type LeadListQuery = Static<typeof LeadListQuerySchema>;
export type Attempt = Static<typeof AttemptSchema>;
export type RecordingLink = Static<typeof RecordingLinkSchema>;
export type RecordingPeaks = Static<typeof RecordingPeaksSchema>;
export type LeadEvent = Static<typeof LeadEventSchema>;
export type LiveEvent = Static<typeof LiveEventSchema>;

type Query = Record<string, string | number | boolean | undefined | null>;

export const leads = {
  list: (query: LeadListQuery, signal?: AbortSignal) => http.get<LeadList>('/leads', query as Query, signal),
  get: (id: string, signal?: AbortSignal) => http.get<T.Lead>(`/leads/${encodeURIComponent(id)}`, undefined, signal),
  push: (body: T.PushBody) => http.post<T.PushResult>('/leads', body),
  batch: (bodies: unknown[], options: { skip_duplicates?: boolean; dedupe_days?: number } = {}) => http.post<T.BatchResult>('/leads/batch', { leads: bodies, ...options }),
  abort: (ids: string[], reason: string) => http.post<T.AbortResult>('/lead/abort', { leads: ids.map((lead_id) => ({ lead_id, cancellation_reason: reason })) }),
  attempts: (id: string, signal?: AbortSignal) => http.get<{ data: Attempt[] }>(`/leads/${encodeURIComponent(id)}/attempts`, undefined, signal),
  webhooks: (id: string, signal?: AbortSignal) => http.get<{ data: T.Delivery[] }>(`/leads/${encodeURIComponent(id)}/webhooks`, undefined, signal),
  redeliver: (id: string, deliveryId: string) => http.post<T.Delivery>(`/leads/${encodeURIComponent(id)}/webhooks/${encodeURIComponent(deliveryId)}/redeliver`),
  recordingLink: (callId: string) => http.get<RecordingLink>(`/leads/recording/${encodeURIComponent(callId)}/link`),
  recordingPeaks: (callId: string, count: number) => http.get<RecordingPeaks>(`/leads/recording/${encodeURIComponent(callId)}/peaks`, { count }),
};

export const templates = {
  list: (query: { page_size?: number; reseller_id?: string; merchant_id?: string } = {}, signal?: AbortSignal) =>
    http.get<T.Paged<T.Template>>('/templates', { page_size: 1000, ...query }, signal),
  get: (id: string, signal?: AbortSignal) => http.get<T.Template>(`/templates/${encodeURIComponent(id)}`, undefined, signal),
  create: (body: { name: string; reseller_id: string; merchant_id?: string | null; flow: unknown; agent?: T.AgentChoice | null }) => http.post<T.Template>('/templates', body),
  replace: (id: string, body: unknown) => http.put<T.Template>(`/templates/${encodeURIComponent(id)}`, body),
  delete: (id: string) => http.delete<{ id: string; deleted: true }>(`/templates/${encodeURIComponent(id)}`),
  /** What a template's voice, model and language may be chosen from on this Dialer. */
  agentOptions: (signal?: AbortSignal) => http.get<T.AgentOptions>('/agent-options', undefined, signal),
};

export const templateTests = {
  list: (templateId: string, signal?: AbortSignal) => http.get<{ data: T.TestCase[] }>(`/templates/${encodeURIComponent(templateId)}/tests`, undefined, signal),
  create: (templateId: string, body: T.TestCaseBody) => http.post<T.TestCase>(`/templates/${encodeURIComponent(templateId)}/tests`, body),
  delete: (templateId: string, id: string) => http.delete<{ id: string; deleted: true }>(`/templates/${encodeURIComponent(templateId)}/tests/${encodeURIComponent(id)}`),
  run: (templateId: string) => http.post<T.TestRun>(`/templates/${encodeURIComponent(templateId)}/tests/run`, {}),
  runs: (templateId: string, signal?: AbortSignal) => http.get<{ data: T.TestRun[] }>(`/templates/${encodeURIComponent(templateId)}/test-runs`, { limit: 2 }, signal),
  getRun: (id: string) => http.get<T.TestRun>(`/test-runs/${encodeURIComponent(id)}`),
};

export const tenants = {
  resellers: (signal?: AbortSignal) => http.get<T.Paged<T.Reseller>>('/resellers', { page_size: 1000 }, signal),
  createReseller: (name: string) => http.post<T.Reseller>('/resellers', { name }),
  merchants: (signal?: AbortSignal) => http.get<T.Paged<T.Merchant>>('/merchants', { page_size: 1000 }, signal),
  createMerchant: (body: { name: string; reseller_id: string; contact_email: string }) => http.post<T.Merchant>('/merchants', body),
  updateMerchant: (id: string, body: { name: string; reseller_id: string; contact_email: string }) => http.put<T.Merchant>(`/merchants/${encodeURIComponent(id)}`, body),
  deleteMerchant: (id: string) => http.delete<{ id: string }>(`/merchants/${encodeURIComponent(id)}`),
  users: (signal?: AbortSignal) => http.get<T.Paged<T.User>>('/users', { page_size: 1000 }, signal),
  createUser: (body: { email: string; password: string; role: string; reseller_id?: string | null; merchant_id?: string | null }) => http.post<T.User>('/users', body),
  updateUser: (id: string, body: { email: string; role: string; reseller_id?: string | null; merchant_id?: string | null }) => http.put<T.User>(`/users/${encodeURIComponent(id)}`, body),
  resetPassword: (id: string, password: string) => http.post<T.User>(`/users/${encodeURIComponent(id)}/password`, { password }),
  deleteUser: (id: string) => http.delete<{ id: string }>(`/users/${encodeURIComponent(id)}`),
};

import type { SandboxInfo as SandboxInfoSchema, SandboxCallResult as SandboxCallResultSchema } from '../../../src/sandbox/index.js';
export type SandboxInfo = Static<typeof SandboxInfoSchema>;
export type SandboxCallResult = Static<typeof SandboxCallResultSchema>;

export const sandbox = {
  info: (signal?: AbortSignal) => http.get<SandboxInfo>('/sandbox', undefined, signal),
  call: (templateId?: string, provider?: string) => http.post<SandboxCallResult>('/sandbox/call', templateId ? { template_id: templateId } : provider ? { provider } : {}),
};

export const trunks = {
  list: (signal?: AbortSignal) => http.get<T.Paged<T.Trunk>>('/trunks', { page_size: 1000 }, signal),
  create: (body: T.TrunkBody) => http.post<T.Trunk>('/trunks', body),
  replace: (id: string, body: T.TrunkBody) => http.put<T.Trunk>(`/trunks/${encodeURIComponent(id)}`, body),
  delete: (id: string) => http.delete<{ id: string; deleted: true }>(`/trunks/${encodeURIComponent(id)}`),
  failures: (id: string, signal?: AbortSignal) => http.get<{ data: T.TrunkFailure[] }>(`/trunks/${encodeURIComponent(id)}/failures`, { limit: 20 }, signal),
};

export const numbers = {
  list: (signal?: AbortSignal) => http.get<T.Paged<T.OutboundNumber>>('/numbers', { page_size: 1000 }, signal),
  create: (body: T.NumberBody) => http.post<T.OutboundNumber>('/numbers', body),
  update: (n: T.OutboundNumber, change: Partial<T.NumberBody>) =>
    http.put<T.OutboundNumber>(`/numbers/${encodeURIComponent(n.id)}`, { phone_number: n.phone_number, provider: n.provider, status: n.status, channel: n.channel, ...change }),
  delete: (id: string) => http.delete<unknown>(`/numbers/${encodeURIComponent(id)}`),
};

export const blacklist = {
  list: (query: { page?: number; phone_number?: string; reseller_id?: string }, signal?: AbortSignal) => http.get<T.Paged<T.BlacklistEntry>>('/blacklist', { page_size: 100, ...query }, signal),
  add: (phone_numbers: string[], reseller_id?: string | null) => http.post<T.BlacklistAdded>('/blacklist', { phone_numbers, ...(reseller_id !== undefined ? { reseller_id } : {}) }),
  remove: (phone_numbers: string[], reseller_id?: string | null) => http.delete<T.BlacklistRemoved>('/blacklist', { phone_numbers, ...(reseller_id !== undefined ? { reseller_id } : {}) }),
};

export const tokens = {
  list: (signal?: AbortSignal) => http.get<T.Paged<T.TokenRecord>>('/s2s-token', { page_size: 1000 }, signal),
  issue: (body: { name: string; role: string; reseller_id: string; merchant_id?: string | null }) => http.post<T.IssuedToken>('/s2s-token', body),
  revoke: (id: string) => http.delete<T.TokenRecord>(`/s2s-token/${encodeURIComponent(id)}`),
};

import type { AuditEntry as AuditEntrySchema, AuditQuery as AuditQuerySchema } from '../../../src/auth/audit-routes.js';
export type AuditEntry = Static<typeof AuditEntrySchema>;
export type AuditQuery = Static<typeof AuditQuerySchema>;

export const audit = {
  list: (query: AuditQuery, signal?: AbortSignal) => http.get<T.Paged<AuditEntry>>('/audit', query as Query, signal),
};

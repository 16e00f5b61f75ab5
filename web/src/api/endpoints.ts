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

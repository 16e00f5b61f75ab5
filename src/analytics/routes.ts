import type { ErrorObject } from 'ajv';
import type { App } from '../http/index.js';
import { problems } from '../http/index.js';
import { AnalyticsBody, AnalyticsResponse, QUERY_TYPES } from './schemas.js';
import type { AnalyticsService } from './service.js';

/**
 * Schema failures are 400 (malformed), except a filter value outside its range (a negative
 * duration, a sentiment outside 0..1): that is 422, as for any invalid filter value.
 */
function validationStatus(errors: ErrorObject[]): number {
  const outOfRange = (e: ErrorObject) => (e.keyword === 'minimum' || e.keyword === 'maximum') && e.instancePath.startsWith('/filters/');
  return errors.length > 0 && errors.every(outOfRange) ? 422 : 400;
}

/** POST /analytics. */
export function registerAnalyticsRoutes(app: App, analytics: AnalyticsService): void {
  app.post('/analytics', {
    config: { permission: ['analytics', 'read'], validationStatus },
    schema: {
      tags: ['analytics'],
      summary: 'Run an aggregate query over the leads in the caller\'s scope',
      description:
        `Query types: ${QUERY_TYPES.join(', ')}. Each answers rows of one shape (see the row schemas and their examples). ` +
        'Test and playground leads (is_playground, TELEPHONY_TEST, WEBRTC_TEST) are never counted. ' +
        'Dates and time buckets use a lead\'s activity time: the start of its call, or when it was pushed if it was never dialled. ' +
        '400: unknown query_type, malformed filters (wrong types, unknown keys, unreadable dates), bad granularity or timezone. ' +
        '422: date_from after date_to, a negative duration, a sentiment outside 0..1, a minimum above its maximum, a date range of more than 100000 buckets.',
      body: AnalyticsBody,
      response: { 200: AnalyticsResponse, ...problems(400, 401, 403, 422) },
    },
    handler: (request) => analytics.query(request.principal, request.body),
  });
}

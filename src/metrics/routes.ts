import { timingSafeEqual } from 'node:crypto';
import type { App } from '../http/index.js';
import { AppError, unauthorized } from '../lib/errors.js';
import { registry } from './registry.js';

function sameToken(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * GET /metrics: Prometheus text exposition, guarded by its own bearer token (DIALER_METRICS_TOKEN),
 * not a user's login, so a scraper holds no API rights. Without the setting it answers 404.
 */
export function registerMetricsRoute(app: App, token: string | undefined): void {
  app.get('/metrics', {
    config: { public: true },
    schema: {
      tags: ['service'],
      summary: 'Prometheus metrics (text exposition format); `Authorization: Bearer <DIALER_METRICS_TOKEN>`',
      security: [],
      produces: ['text/plain'],
    },
    handler: async (request, reply) => {
      if (!token) throw new AppError(404, 'metrics_disabled', 'Metrics are off: set DIALER_METRICS_TOKEN to enable GET /metrics');
      const m = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
      if (!m || !sameToken(token, m[1]!)) throw unauthorized('GET /metrics needs `Authorization: Bearer <DIALER_METRICS_TOKEN>`');
      reply.header('content-type', registry.contentType);
      return registry.metrics();
    },
  });
}

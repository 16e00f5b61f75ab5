/**
 * Prometheus metrics (GET /metrics) and the instruments the rest of Dialer counts with.
 * The feature's only door.
 */
import type { App } from '../http/index.js';
import { httpDuration, httpRequests } from './registry.js';

export {
  addSources,
  attemptsEnded,
  dials,
  liveCallsNow,
  providerErrors,
  registry,
  turnLatency,
  turnOverhead,
  webhookAttempts,
  webhookFailures,
} from './registry.js';
export { registerMetricsRoute } from './routes.js';

/** Counts every answered request by its route pattern (never the raw URL: IDs would explode the label set). */
export function instrumentHttp(app: App): void {
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const labels = { method: request.method, route, status_code: String(reply.statusCode) };
    httpRequests.inc(labels);
    httpDuration.observe(labels, reply.elapsedTime / 1000);
  });
}

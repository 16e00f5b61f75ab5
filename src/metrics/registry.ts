/**
 * Prometheus metrics of this process, on one registry. Instruments are created once per process
 * (a process is one Dialer); what must be read at scrape time (queue depth, live calls) comes from
 * sources the app registers while it runs.
 *
 * Names follow Prometheus conventions: base units (seconds), `_total` for counters.
 */
import { PerformanceObserver, constants as perf } from 'node:perf_hooks';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { LEAD_STATUSES } from '../lifecycle/index.js';

export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: 'dialer_' });

/**
 * Garbage-collection pauses, every one of them, in buckets that tell a pause a caller hears from
 * one nobody notices: every live call's audio waits while the event loop's thread collects, and a
 * pause of 20 ms or more is a late frame. prom-client's own histogram of the same name (replaced
 * here) keeps only the first pause of each batch node delivers (several collections in one turn
 * of the event loop, common under load, counted as one), in buckets of 1, 10 and 100 ms. Its
 * observer cannot be turned off on its own and still fills that histogram, which is no longer served.
 */
const GC_KINDS: Record<number, string> = {
  [perf.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [perf.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [perf.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [perf.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};
registry.removeSingleMetric('dialer_nodejs_gc_duration_seconds');
const gcDuration = new Histogram({
  name: 'dialer_nodejs_gc_duration_seconds',
  help: 'Garbage collection pauses of the event loop\'s thread, by kind: major (the pause of a full collection), minor (a young-generation one), incremental (a step of marking), weakcb',
  labelNames: ['kind'] as const,
  buckets: [0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1],
  registers: [registry],
});
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcDuration.observe({ kind: GC_KINDS[(entry as { detail?: { kind?: number } }).detail?.kind ?? -1] ?? 'other' }, entry.duration / 1000);
}).observe({ entryTypes: ['gc'] });

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const TURN_BUCKETS = [0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 8];

export const httpRequests = new Counter({
  name: 'dialer_http_requests_total',
  help: 'HTTP requests answered, by method, route pattern and status code',
  labelNames: ['method', 'route', 'status_code'] as const,
  registers: [registry],
});

export const httpDuration = new Histogram({
  name: 'dialer_http_request_duration_seconds',
  help: 'Time to answer an HTTP request, by method, route pattern and status code',
  labelNames: ['method', 'route', 'status_code'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const dials = new Counter({
  name: 'dialer_dials_total',
  help: 'Calls placed (one per attempt that reached a driver), by provider',
  labelNames: ['provider'] as const,
  registers: [registry],
});

export const attemptsEnded = new Counter({
  name: 'dialer_call_attempts_ended_total',
  help: 'Call attempts that ended, by provider and outcome kind (completed, no_answer, busy, failed, voicemail, error)',
  labelNames: ['provider', 'kind'] as const,
  registers: [registry],
});

export const turnLatency = new Histogram({
  name: 'dialer_turn_latency_seconds',
  help: "Agent turn latency: end of the caller's speech to the agent's first audio",
  buckets: TURN_BUCKETS,
  registers: [registry],
});

export const turnOverhead = new Histogram({
  name: 'dialer_turn_overhead_seconds',
  help: "The engine's own share of a turn's latency (latency minus the AI services' time)",
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5],
  registers: [registry],
});

export const webhookAttempts = new Counter({
  name: 'dialer_webhook_attempts_total',
  help: 'Outbound webhook delivery attempts (reporting webhooks and service callbacks), by kind and result (delivered, failed)',
  labelNames: ['kind', 'result'] as const,
  registers: [registry],
});

export const webhookFailures = new Counter({
  name: 'dialer_webhook_delivery_failures_total',
  help: 'Outbound webhooks given up after their last attempt, by kind',
  labelNames: ['kind'] as const,
  registers: [registry],
});

export const providerErrors = new Counter({
  name: 'dialer_provider_errors_total',
  help: 'Errors of outside services: AI services (llm, stt, tts) by client label, and telephony providers',
  labelNames: ['service', 'provider', 'retryable'] as const,
  registers: [registry],
});

/** Scrape-time readings: each running app adds its own and removes them when it closes. */
type Reading = () => Promise<Record<string, number>> | Record<string, number>;
const queueSources = new Set<Reading>();
const liveCallSources = new Set<() => number>();
const analyticsBacklogSources = new Set<Reading>();

new Gauge({
  name: 'dialer_leads',
  help: 'Leads by status (the queue depth: BACKLOG and RETRY wait, PROCESSING are being called)',
  labelNames: ['status'] as const,
  registers: [registry],
  async collect() {
    this.reset();
    for (const source of queueSources) {
      const counts = await source();
      for (const status of LEAD_STATUSES) this.inc({ status }, counts[status] ?? 0);
    }
  },
});

new Gauge({
  name: 'dialer_analytics_backlog',
  help: "Analytics changes waiting for the analytics folder: rollup delta rows (rollup_deltas) and rows of leads whose payload terms wait to be rewritten (pending_terms). Answers stay exact meanwhile; a backlog that keeps growing means the folder cannot keep up",
  labelNames: ['kind'] as const,
  registers: [registry],
  async collect() {
    this.reset();
    for (const source of analyticsBacklogSources) {
      for (const [kind, n] of Object.entries(await source())) this.inc({ kind }, n);
    }
  },
});

new Gauge({
  name: 'dialer_live_calls',
  help: 'Calls (telephony and WebRTC sessions) in progress in this process',
  registers: [registry],
  collect() {
    this.set(liveCallsNow());
  },
});

/** Calls (telephony and WebRTC sessions) in progress in this process now. */
export function liveCallsNow(): number {
  let n = 0;
  for (const source of liveCallSources) n += source();
  return n;
}

/** Registers scrape-time readings; returns the function that removes them. */
export function addSources(sources: { queue?: Reading; liveCalls?: () => number; analyticsBacklog?: Reading }): () => void {
  if (sources.queue) queueSources.add(sources.queue);
  if (sources.liveCalls) liveCallSources.add(sources.liveCalls);
  if (sources.analyticsBacklog) analyticsBacklogSources.add(sources.analyticsBacklog);
  return () => {
    if (sources.queue) queueSources.delete(sources.queue);
    if (sources.liveCalls) liveCallSources.delete(sources.liveCalls);
    if (sources.analyticsBacklog) analyticsBacklogSources.delete(sources.analyticsBacklog);
  };
}

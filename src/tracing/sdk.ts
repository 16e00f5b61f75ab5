/**
 * The OpenTelemetry SDK of this process: a tracer provider with a batch span processor exporting
 * OTLP over HTTP (JSON), registered as the global provider that `@opentelemetry/api` hands out.
 * Unconfigured, nothing is loaded or registered: the API's no-op tracer answers every span
 * request and the call code skips its attribute work (it checks `isRecording()`).
 */
import { trace } from '@opentelemetry/api';
import type { Logger } from '../lib/logger.js';
import { VERSION } from '../lib/version.js';
import type { TracingSettings } from '../config/tracing.js';

export interface Tracing {
  readonly enabled: boolean;
  /** Sends the spans that are waiting. */
  flush(): Promise<void>;
  /** Flushes and unregisters the provider (process shutdown). */
  shutdown(): Promise<void>;
}

const OFF: Tracing = { enabled: false, flush: async () => {}, shutdown: async () => {} };

export async function startTracing(settings: TracingSettings, log: Logger): Promise<Tracing> {
  if (!settings.tracesUrl) return OFF;
  // Loaded only when tracing is on: an unconfigured process does not pay for the SDK.
  const [{ BasicTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  const exporter = new OTLPTraceExporter({ url: settings.tracesUrl, headers: settings.headers });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName, 'service.version': VERSION }),
    spanProcessors: [new BatchSpanProcessor(exporter, settings.batch)],
    ...(settings.attributeValueLengthLimit ? { spanLimits: { attributeValueLengthLimit: settings.attributeValueLengthLimit } } : {}),
  });
  if (!trace.setGlobalTracerProvider(provider)) {
    log.warn('an OpenTelemetry tracer provider is already registered in this process: Dialer uses it');
    await provider.shutdown();
    return OFF;
  }
  log.info({ tracesUrl: settings.tracesUrl, serviceName: settings.serviceName }, 'tracing: exporting spans over OTLP/HTTP');
  let closed = false;
  return {
    enabled: true,
    flush: () => provider.forceFlush(),
    async shutdown() {
      if (closed) return;
      closed = true;
      try {
        await provider.shutdown();
      } catch (err) {
        log.warn({ err }, 'tracing: could not export the last spans');
      } finally {
        trace.disable();
      }
    },
  };
}

/**
 * Tracing: OpenTelemetry spans for every call, exported over OTLP/HTTP when configured (Langfuse's
 * /api/public/otel or any OTLP backend), a no-op otherwise. This is the feature's only door.
 */
export { startTracing, type Tracing } from './sdk.js';
export { startCallSpan, startDialSpan, TRACER_NAME, type CallSpan, type CallSpanEnd, type CallSpanInfo, type DialSpan, type DialResult } from './call.js';

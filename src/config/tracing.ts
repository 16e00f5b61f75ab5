/**
 * Tracing settings from the standard OpenTelemetry environment variables. Tracing is on when an
 * OTLP endpoint is set (and the SDK is not disabled); otherwise it is off and costs nothing.
 *
 *   OTEL_EXPORTER_OTLP_TRACES_ENDPOINT  full URL of the traces endpoint (used as is)
 *   OTEL_EXPORTER_OTLP_ENDPOINT         base URL; `/v1/traces` is appended (Langfuse: https://cloud.langfuse.com/api/public/otel)
 *   OTEL_EXPORTER_OTLP_HEADERS          `key=value,key2=value2` (values URL-encoded), e.g. `Authorization=Basic <base64 pk:sk>`
 *   OTEL_EXPORTER_OTLP_TRACES_HEADERS   the same, for traces only (wins over the general ones)
 *   OTEL_SERVICE_NAME                   service.name of the spans (default `dialer`)
 *   OTEL_SDK_DISABLED=true, OTEL_TRACES_EXPORTER=none   tracing off even with an endpoint
 *   OTEL_BSP_SCHEDULE_DELAY, OTEL_BSP_MAX_QUEUE_SIZE, OTEL_BSP_MAX_EXPORT_BATCH_SIZE, OTEL_BSP_EXPORT_TIMEOUT
 *                                       the batch span processor (the SDK no longer reads them itself)
 *   OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT   longest attribute value (LLM prompts are the long ones); default unlimited
 */

import { ConfigError, type Env } from './env.js';

export interface TracingSettings {
  /** Where spans are sent (OTLP/HTTP, JSON); undefined: tracing is off. */
  tracesUrl: string | undefined;
  headers: Record<string, string>;
  serviceName: string;
  batch: { scheduledDelayMillis?: number; maxQueueSize?: number; maxExportBatchSize?: number; exportTimeoutMillis?: number };
  attributeValueLengthLimit?: number;
}

function positive(env: Env, name: string): number | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new ConfigError(`${name} must be a positive whole number, got "${raw}"`);
  return Number(raw);
}

/** Parses the OTLP headers format: comma-separated `key=value`, values percent-encoded (a `=` in a value, as in base64, is kept). */
export function parseOtlpHeaders(name: string, raw: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (raw ?? '').split(',')) {
    if (!pair.trim()) continue;
    const at = pair.indexOf('=');
    if (at <= 0) throw new ConfigError(`${name} must be key=value pairs separated by commas, got "${pair.trim()}"`);
    const key = pair.slice(0, at).trim();
    const value = pair.slice(at + 1).trim();
    try {
      headers[decodeURIComponent(key)] = decodeURIComponent(value);
    } catch {
      headers[key] = value;
    }
  }
  return headers;
}

function url(name: string, raw: string): string {
  try {
    const parsed = new URL(raw);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http');
    return raw;
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`);
  }
}

export function tracingSettings(env: Env): TracingSettings {
  const serviceName = env.OTEL_SERVICE_NAME?.trim() || 'dialer';
  const off = env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true' || env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none';
  const tracesEndpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  let tracesUrl: string | undefined;
  if (tracesEndpoint) tracesUrl = url('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', tracesEndpoint);
  else if (endpoint) tracesUrl = `${url('OTEL_EXPORTER_OTLP_ENDPOINT', endpoint).replace(/\/+$/, '')}/v1/traces`;
  const headers = {
    ...parseOtlpHeaders('OTEL_EXPORTER_OTLP_HEADERS', env.OTEL_EXPORTER_OTLP_HEADERS),
    ...parseOtlpHeaders('OTEL_EXPORTER_OTLP_TRACES_HEADERS', env.OTEL_EXPORTER_OTLP_TRACES_HEADERS),
  };
  const batch = {
    scheduledDelayMillis: positive(env, 'OTEL_BSP_SCHEDULE_DELAY'),
    maxQueueSize: positive(env, 'OTEL_BSP_MAX_QUEUE_SIZE'),
    maxExportBatchSize: positive(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
    exportTimeoutMillis: positive(env, 'OTEL_BSP_EXPORT_TIMEOUT'),
  };
  const attributeValueLengthLimit = positive(env, 'OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT');
  return {
    tracesUrl: off ? undefined : tracesUrl,
    headers,
    serviceName,
    batch: Object.fromEntries(Object.entries(batch).filter(([, v]) => v !== undefined)),
    ...(attributeValueLengthLimit !== undefined ? { attributeValueLengthLimit } : {}),
  };
}

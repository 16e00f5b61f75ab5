/**
 * Configuration: the environment, read once at start into a typed, validated object.
 * Every variable is listed in README.md (Configuration); keep the two in step.
 */
import path from 'node:path';
import { telephonySettings, TelephonySettingsError, type TelephonySettings } from './config/telephony.js';
import { flagSettingsFromEnv, FlagSettingsError, type FlagSettings } from './flags/index.js';
import { tracingSettings, TracingSettingsError, type TracingSettings } from './tracing/index.js';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export type Role = 'worker' | 'api' | 'all';

export interface Config {
  /** Where the API listens. */
  port: number;
  host: string;
  /** Public base URL of this process, as providers and browsers reach it. */
  publicUrl: string;
  /**
   * Origin at which other Dialer processes reach this one (DIALER_INTERNAL_URL): operations on a
   * WebRTC session hosted here that reach another process are forwarded to it. Undefined: this
   * process's listening address (http://HOST:PORT; the machine's host name when HOST is 0.0.0.0 or ::).
   */
  internalUrl: string | undefined;
  /** PostgreSQL connection string; undefined means embedded PGlite in dataDir. */
  databaseUrl: string | undefined;
  dataDir: string;
  /** HS256 signing key for login tokens; undefined: generated once and kept (data dir or database). */
  jwtSecret: string | undefined;
  jwtTtlSeconds: number;
  adminEmail: string | undefined;
  adminPassword: string | undefined;
  logLevel: LogLevel;
  /** Largest accepted request body. */
  bodyLimitBytes: number;
  scheduler: {
    /** Calls one worker process carries at once. */
    maxConcurrentCalls: number;
    /** Lease on a claimed lead; a worker that stops renewing it for this long is presumed dead. */
    leaseSeconds: number;
    /** Idle poll interval (a push wakes workers at once through NOTIFY). */
    pollMs: number;
    /** On SIGTERM: how long live calls may take to end before they are hung up. */
    shutdownGraceSeconds: number;
  };
  /** Provider credentials and call limits (a provider is enabled when its credentials are set). */
  telephony: TelephonySettings;
  /** Feature flags: the flag file, its webhook secret, and the defaults of the day-one flags. */
  flags: FlagSettings;
  /** Bearer token that GET /metrics requires; unset: /metrics answers 404. */
  metricsToken: string | undefined;
  /** Deployment-wide service callback URL (spec 6.2); a configuration's own URL wins. */
  serviceCallbackUrl: string | undefined;
  /** OpenTelemetry export (OTEL_* variables); off when no OTLP endpoint is set. */
  tracing: TracingSettings;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

/** Parses a duration such as `3600`, `60m`, `1h` or `90s` into seconds. */
export function parseDurationSeconds(name: string, raw: string): number {
  const m = /^(\d+)\s*(s|m|h|d)?$/.exec(raw.trim());
  if (!m) throw new ConfigError(`${name} must be a duration such as 3600, 60m or 1h, got "${raw}"`);
  const n = Number(m[1]);
  const unit = m[2] ?? 's';
  const factor = unit === 's' ? 1 : unit === 'm' ? 60 : unit === 'h' ? 3600 : 86400;
  const seconds = n * factor;
  if (seconds < 1) throw new ConfigError(`${name} must be at least one second`);
  return seconds;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const host = env.HOST?.trim() || '127.0.0.1';
  const logLevel = (env.LOG_LEVEL?.trim() || 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${env.LOG_LEVEL}"`);
  }
  const jwtSecret = env.DIALER_JWT_SECRET?.trim() || undefined;
  if (jwtSecret !== undefined && jwtSecret.length < 32) {
    throw new ConfigError('DIALER_JWT_SECRET must be at least 32 characters');
  }
  const databaseUrl = env.DATABASE_URL?.trim() || undefined;
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must be a postgres:// or postgresql:// connection string');
  }
  const adminEmail = env.DIALER_ADMIN_EMAIL?.trim() || undefined;
  const adminPassword = env.DIALER_ADMIN_PASSWORD || undefined;
  if (adminPassword !== undefined && adminPassword.length < 8) {
    throw new ConfigError('DIALER_ADMIN_PASSWORD must be at least 8 characters');
  }
  let telephony: TelephonySettings;
  try {
    telephony = telephonySettings(env);
  } catch (err) {
    if (err instanceof TelephonySettingsError) throw new ConfigError(err.message);
    throw err;
  }
  let flags: FlagSettings;
  const dataDir = path.resolve(env.DIALER_DATA_DIR?.trim() || './data');
  try {
    flags = flagSettingsFromEnv(env, dataDir);
  } catch (err) {
    if (err instanceof FlagSettingsError) throw new ConfigError(err.message);
    throw err;
  }
  const metricsToken = env.DIALER_METRICS_TOKEN?.trim() || undefined;
  if (metricsToken !== undefined && metricsToken.length < 16) throw new ConfigError('DIALER_METRICS_TOKEN must be at least 16 characters');
  const serviceCallbackUrl = env.DIALER_SERVICE_CALLBACK_URL?.trim() || undefined;
  if (serviceCallbackUrl !== undefined && !/^https?:\/\/[^\s]+$/.test(serviceCallbackUrl)) {
    throw new ConfigError(`DIALER_SERVICE_CALLBACK_URL must be an http(s) URL, got "${serviceCallbackUrl}"`);
  }
  let tracing: TracingSettings;
  try {
    tracing = tracingSettings(env);
  } catch (err) {
    if (err instanceof TracingSettingsError) throw new ConfigError(err.message);
    throw err;
  }
  const internalUrl = env.DIALER_INTERNAL_URL?.trim().replace(/\/+$/, '') || undefined;
  if (internalUrl !== undefined && !/^https?:\/\/[^\s/]+$/.test(internalUrl)) {
    throw new ConfigError(`DIALER_INTERNAL_URL must be an origin such as http://10.0.0.5:8080 (no path), got "${internalUrl}"`);
  }
  const displayHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  const publicUrl = (env.DIALER_PUBLIC_URL?.trim() || `http://${displayHost}:${port}`).replace(/\/+$/, '');
  return {
    port,
    host,
    publicUrl,
    internalUrl,
    databaseUrl,
    dataDir,
    jwtSecret,
    jwtTtlSeconds: env.DIALER_JWT_TTL ? parseDurationSeconds('DIALER_JWT_TTL', env.DIALER_JWT_TTL) : 3600,
    adminEmail,
    adminPassword,
    logLevel,
    bodyLimitBytes: integer(env, 'DIALER_BODY_LIMIT_BYTES', 1024 * 1024, 1024, 100 * 1024 * 1024),
    scheduler: {
      maxConcurrentCalls: integer(env, 'DIALER_MAX_CONCURRENT_CALLS', 50, 1, 10_000),
      leaseSeconds: integer(env, 'DIALER_LEASE_SECONDS', 30, 3, 3600),
      pollMs: integer(env, 'DIALER_POLL_MS', 1000, 10, 60_000),
      shutdownGraceSeconds: integer(env, 'DIALER_SHUTDOWN_GRACE_SECONDS', 30, 0, 3600),
    },
    telephony,
    flags,
    metricsToken,
    serviceCallbackUrl,
    tracing,
  };
}

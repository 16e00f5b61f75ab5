/**
 * Configuration: the environment, read once at start into a typed, validated object. This file
 * and the settings modules it calls (src/config/) are the only code that reads the environment;
 * every wrong value is a ConfigError naming its variable. docs/configuration.md lists every
 * variable, generated from these modules (npm run docs:config).
 */
import path from 'node:path';
import { boolean, ConfigError, text, wholeNumber, type Env } from './config/env.js';
import { flagSettingsFromEnv, type FlagSettings } from './config/flags.js';
import { knowledgeSettings, type KnowledgeSettings } from './config/knowledge.js';
import { recordingsConfigFromEnv, type RecordingsConfig } from './config/recordings.js';
import { securitySettings, type SecuritySettings } from './config/security.js';
import { telephonySettings, type TelephonySettings } from './config/telephony.js';
import { tracingSettings, type TracingSettings } from './config/tracing.js';
import { voiceSettings, type VoiceSettings } from './config/voice.js';
import { webhookSettings, type WebhookSettings } from './config/webhooks.js';
import { webRtcSettings, type WebRtcSettings } from './config/webrtc.js';
import { LOG_LEVELS, type LogLevel } from './lib/logger.js';

export { ConfigError } from './config/env.js';
export type { LogLevel } from './lib/logger.js';
export type Role = 'worker' | 'api' | 'all';

export type { EmbeddingsSettings, KnowledgeSettings } from './config/knowledge.js';
export type { LoginThrottleSettings, RateLimitSettings, SecuritySettings } from './config/security.js';

/** Settings; the security ones (outbound allow-list, login throttle, request limits, proxies, audit retention) are docs/security.md's. */
export interface Config extends SecuritySettings {
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
  /** Where each runner keeps the ends of calls not yet written (DIALER_JOURNAL_DIR; docs/dispatch.md). */
  journalDir: string;
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
    /** The outbound numbers' health rounds and rests (docs/leads.md, "Outbound number"). */
    numberHealth: {
      /** How often each worker measures the numbers. */
      everyMs: number;
      /** The window: at most this many of a number's latest calls, started within `windowHours`. */
      windowCalls: number;
      windowHours: number;
      /** An answered call shorter than this is a short call. */
      shortCallSeconds: number;
      /** A number is rested when its answer rate is below this share of its pool's, with at least `restMinCalls` calls in its window... */
      restBelowRatio: number;
      restMinCalls: number;
      /** ...for this long. */
      restSeconds: number;
    };
  };
  /** Provider credentials and call limits (a provider is enabled when its credentials are set). */
  telephony: TelephonySettings;
  /** Feature flags: the flag file, its webhook secret, and the defaults of the day-one flags. */
  flags: FlagSettings;
  /** Bearer token that GET /metrics requires; unset: /metrics answers 404. */
  metricsToken: string | undefined;
  /** Deployment-wide service callback URL; a configuration's own URL wins. */
  serviceCallbackUrl: string | undefined;
  /** OpenTelemetry export (OTEL_* variables); off when no OTLP endpoint is set. */
  tracing: TracingSettings;
  /**
   * The sandbox line (DIALER_SANDBOX, default true): providers without credentials are served by
   * the provider emulator inside this process, whose simulated customer answers every call.
   */
  sandbox: boolean;
  /**
   * A scenarios file for the sandbox line's callees (DIALER_SANDBOX_SCENARIOS): number -> callee,
   * `*` for every other number, as `dialer emulator --scenarios` reads it; unset: the simulated
   * customer who answers, replies and says goodbye.
   */
  sandboxScenarios: string | undefined;
  /** Delivery of reporting webhooks and service callbacks. */
  webhooks: WebhookSettings;
  /** Where call recordings are stored: a local directory, or an S3 bucket. */
  recordings: RecordingsConfig;
  /** ICE servers and timeouts of browser sessions. */
  webrtc: WebRtcSettings;
  /** The agent that talks on calls, its AI services, the local voice, the VAD's runtime, prices. */
  voice: VoiceSettings;
  /** The token `dialer leads import` sends when no --token is given (DIALER_TOKEN). */
  cliToken: string | undefined;
  /** The knowledge base's embeddings endpoint, when one is configured. */
  knowledge: KnowledgeSettings;
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

export function loadConfig(env: Env = process.env): Config {
  const port = wholeNumber(env, 'PORT', 8080, 0, 65535);
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
  const telephony = telephonySettings(env);
  const dataDir = path.resolve(env.DIALER_DATA_DIR?.trim() || './data');
  const flags = flagSettingsFromEnv(env, dataDir);
  const metricsToken = env.DIALER_METRICS_TOKEN?.trim() || undefined;
  if (metricsToken !== undefined && metricsToken.length < 16) throw new ConfigError('DIALER_METRICS_TOKEN must be at least 16 characters');
  const serviceCallbackUrl = env.DIALER_SERVICE_CALLBACK_URL?.trim() || undefined;
  if (serviceCallbackUrl !== undefined && !/^https?:\/\/[^\s]+$/.test(serviceCallbackUrl)) {
    throw new ConfigError(`DIALER_SERVICE_CALLBACK_URL must be an http(s) URL, got "${serviceCallbackUrl}"`);
  }
  const tracing = tracingSettings(env);
  const leaseSeconds = wholeNumber(env, 'DIALER_LEASE_SECONDS', 30, 3, 3600);
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
    journalDir: path.resolve(text(env, 'DIALER_JOURNAL_DIR') ?? path.join(dataDir, 'journal')),
    jwtSecret,
    jwtTtlSeconds: env.DIALER_JWT_TTL ? parseDurationSeconds('DIALER_JWT_TTL', env.DIALER_JWT_TTL) : 3600,
    adminEmail,
    adminPassword,
    logLevel,
    bodyLimitBytes: wholeNumber(env, 'DIALER_BODY_LIMIT_BYTES', 1024 * 1024, 1024, 100 * 1024 * 1024),
    scheduler: {
      maxConcurrentCalls: wholeNumber(env, 'DIALER_MAX_CONCURRENT_CALLS', 50, 1, 10_000),
      leaseSeconds,
      pollMs: wholeNumber(env, 'DIALER_POLL_MS', 1000, 10, 60_000),
      shutdownGraceSeconds: wholeNumber(env, 'DIALER_SHUTDOWN_GRACE_SECONDS', 30, 0, 3600),
      numberHealth: {
        everyMs: wholeNumber(env, 'DIALER_NUMBER_HEALTH_EVERY_SECONDS', 60, 1, 3600) * 1000,
        windowCalls: wholeNumber(env, 'DIALER_NUMBER_HEALTH_WINDOW_CALLS', 100, 1, 10_000),
        windowHours: wholeNumber(env, 'DIALER_NUMBER_HEALTH_WINDOW_HOURS', 24, 1, 720),
        shortCallSeconds: wholeNumber(env, 'DIALER_NUMBER_SHORT_CALL_SECONDS', 10, 1, 600),
        restBelowRatio: wholeNumber(env, 'DIALER_NUMBER_REST_BELOW_PERCENT', 50, 0, 100) / 100,
        restMinCalls: wholeNumber(env, 'DIALER_NUMBER_REST_MIN_CALLS', 20, 1, 10_000),
        restSeconds: wholeNumber(env, 'DIALER_NUMBER_REST_SECONDS', 14_400, 1, 30 * 86_400),
      },
    },
    telephony,
    flags,
    metricsToken,
    serviceCallbackUrl,
    sandbox: boolean(env, 'DIALER_SANDBOX', true),
    sandboxScenarios: text(env, 'DIALER_SANDBOX_SCENARIOS'),
    tracing,
    webhooks: webhookSettings(env),
    recordings: recordingsConfigFromEnv(env, dataDir),
    webrtc: webRtcSettings(env, leaseSeconds),
    voice: voiceSettings(env),
    cliToken: text(env, 'DIALER_TOKEN'),
    knowledge: knowledgeSettings(env),
    ...securitySettings(env, serviceCallbackUrl),
  };
}

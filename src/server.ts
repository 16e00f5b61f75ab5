import type { Config, Role } from './config.js';
import { hostname } from 'node:os';
import { Scheduler } from './scheduler/index.js';
import { queueFinishNotifications, WebhookDispatcher, webhookSettings } from './webhooks/index.js';
import { Flags } from './flags/index.js';
import { createTelephony, type Drivers } from './telephony/index.js';
import { createRecordingStore, recordingsConfigFromEnv } from './recordings/index.js';
import { API_PREFIX, buildApp } from './app.js';
import { openAndMigrate, type Db } from './db/index.js';
import type { App } from './http/index.js';
import type { Logger } from './lib/logger.js';
import { OutboundClient } from './lib/outbound/index.js';
import { tenantsService } from './tenants/index.js';
import { AuditRetention, AuditService, AuthRepository } from './auth/index.js';
import { startTracing } from './tracing/index.js';
import { RecordingRetention, webRtcSettings } from './webrtc/index.js';

export interface RunningServer {
  app: App;
  db: Db;
  /** The address the API listens on, e.g. http://127.0.0.1:8080. */
  url: string;
  /** The scheduler of this process (roles all and worker). */
  scheduler: Scheduler | undefined;
  close(): Promise<void>;
}

export interface ServeOptions {
  /** all: API and scheduler; api: HTTP only; worker: scheduler (and the HTTP its calls need). */
  role?: Role;
  /** Telephony drivers by provider; by default those of the providers configured in the environment. */
  drivers?: Drivers;
}

/**
 * Opens and migrates the database, makes sure an admin exists, and listens. Used by `dialer serve`.
 * `onAdminCreated` receives the bootstrap admin when this start created it (with the generated
 * password when none was configured), so the caller can show it once. Roles all and worker also run
 * the scheduler and the webhook dispatcher; close() stops them gracefully first.
 */
export async function startServer(
  config: Config,
  logger: Logger,
  onAdminCreated?: (admin: { email: string; generatedPassword?: string }) => void,
  options: ServeOptions = {},
): Promise<RunningServer> {
  const hookSettings = webhookSettings(); // fails fast on a bad setting, before anything opens
  const recordingsConfig = recordingsConfigFromEnv(process.env, config.dataDir);
  const db = await openAndMigrate(config);
  // A malformed flag file stops the start with its reason.
  let flags: Flags;
  try {
    flags = await Flags.open(config.flags, logger);
  } catch (err) {
    await db.close();
    throw err;
  }
  // Recordings are stored once, by this store, and served by the API from the same one.
  const recordings = createRecordingStore(recordingsConfig, `${config.publicUrl}${API_PREFIX}`, () => flags.uploadRecordings());
  // One client for every tenant-steered request of this process: hooks, pre-checks, webhooks.
  const outbound = new OutboundClient(config.outboundAllow);
  const telephony = createTelephony({ config, db, log: logger, flags, outbound, prefix: API_PREFIX, saveRecording: (callSid, wav) => recordings.save(callSid, wav) });
  const tracing = await startTracing(config.tracing, logger);
  warnIfUnreachable(config, logger);
  let app: App | undefined;
  try {
    const admin = await tenantsService(db).ensureAdmin(config.adminEmail, config.adminPassword);
    if (admin) onAdminCreated?.(admin);
    app = await buildApp({ config, db, logger, telephony, recordings, flags, outbound });
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    await app?.close().catch(() => undefined);
    await db.close();
    await flags.close();
    await tracing.shutdown();
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const running = app;
  const role = options.role ?? 'all';
  const webhooks =
    role === 'api' ? undefined : new WebhookDispatcher({ db, log: logger, settings: hookSettings, workerId: `${hostname()}:${process.pid}`, outbound });
  const scheduler =
    role === 'api'
      ? undefined
      : new Scheduler({
          db,
          drivers: options.drivers ?? telephony.drivers,
          log: logger,
          onFinished: queueFinishNotifications(config.serviceCallbackUrl),
          stoppedResellers: (ids) => flags.diallingStopped(ids),
          afterFinished: () => webhooks?.wake(),
          maxConcurrentCalls: config.scheduler.maxConcurrentCalls,
          leaseSeconds: config.scheduler.leaseSeconds,
          pollMs: config.scheduler.pollMs,
          shutdownGraceMs: config.scheduler.shutdownGraceSeconds * 1000,
          outbound,
        });
  const retention =
    role === 'api'
      ? undefined
      : new RecordingRetention({ db, recordings, log: logger, retentionSeconds: webRtcSettings(process.env).recordingRetentionSeconds });
  // Every role prunes the audit trail and old login failures (idempotent: several processes may).
  const auditRetention = new AuditRetention({
    audit: new AuditService(db),
    pruneLoginFailures: () => new AuthRepository(db).pruneLoginFailures(config.loginThrottle.forgetSeconds),
    retentionDays: config.auditRetentionDays,
    log: logger,
  });
  scheduler?.start();
  webhooks?.start();
  retention?.start();
  auditRetention.start();
  return {
    app: running,
    db,
    url: `http://${host}:${port}`,
    scheduler,
    async close() {
      try {
        // Stop claiming and let live calls end first; the API answers meanwhile.
        await scheduler?.stop();
        await webhooks?.stop();
        await retention?.stop();
        await auditRetention.stop();
        await running.close();
      } finally {
        await db.close();
        await flags.close();
        await outbound.close();
        // Last: the spans of calls that ended during shutdown are exported.
        await tracing.shutdown();
      }
    },
  };
}

/** Real providers cannot call back to a loopback address: say so at start, not after the first silent call. */
function warnIfUnreachable(config: Config, logger: Logger): void {
  const local = (url: string) => /^(localhost|127\.|\[::1\]|0\.0\.0\.0)/.test(new URL(url).host);
  if (!local(config.publicUrl)) return;
  const t = config.telephony;
  const remote = [t.twilio, t.exotel, t.plivo].filter((p): p is NonNullable<typeof p> => p !== undefined).filter((p) => !local(p.apiBaseUrl));
  if (remote.length > 0) {
    logger.warn({ publicUrl: config.publicUrl }, 'a telephony provider is configured but DIALER_PUBLIC_URL is a local address the provider cannot reach: set it to this process\'s public https URL');
  }
}

/**
 * The composition root: the one place that builds Dialer's parts from the configuration and wires
 * them together (the agent that talks on calls, the telephony drivers, WebRTC sessions, recordings,
 * flags, the scheduler, the webhook dispatcher) before the app listens. Features never import it.
 */
import type { Config, Role } from './config.js';
import { hostname } from 'node:os';
import { Scheduler } from './scheduler/index.js';
import { queueFinishNotifications, WebhookDispatcher } from './webhooks/index.js';
import { LiveTranscripts } from './leads/index.js';
import { Flags } from './flags/index.js';
import { createKits, SIP_PROVIDER, SipDriver, Telephony, type Drivers, type SipTrunk } from './telephony/index.js';
import { TrunksService, type TrunkRow } from './trunks/index.js';
import { createRecordingStore, type RecordingStore } from './recordings/index.js';
import { API_PREFIX, buildApp, type AppDeps } from './app.js';
import { openAndMigrate, type Db } from './db/index.js';
import type { App } from './http/index.js';
import { createLogger, type Logger } from './lib/logger.js';
import { OutboundClient } from './lib/outbound/index.js';
import { warmUp } from './lib/speech.js';
import { createRealtimeModel, createVoiceServices, preloadSilero } from './providers/index.js';
import { findTemplateById } from './templates/index.js';
import { tenantsService } from './tenants/index.js';
import { AuditRetention, AuditService, AuthRepository } from './auth/index.js';
import { startTracing } from './tracing/index.js';
import { ConversationAgent, GreeterAgent, RealtimeAgent, StreamAgent, type CallAgent, type VoiceServices } from './voice/index.js';
import { RecordingRetention, WebRtcService } from './webrtc/index.js';
import { RetentionJob } from './privacy/index.js';
import { createKnowledgeService } from './knowledge/index.js';
import { SANDBOX_NUMBERS, startSandboxLine, syncSandboxNumbers, type SandboxLine } from './sandbox/index.js';

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

/** The agent that carries calls, and why calls cannot be carried when its services are missing. */
export interface ChosenAgent {
  agent: CallAgent;
  notReady?: string;
  services?: VoiceServices;
}

/**
 * The agent that carries calls: `flow` (the default) runs each lead's template with the configured
 * AI services; `greeter` is the built-in demo agent that needs none.
 */
export function chooseAgent(config: Config, db: Db, outbound: OutboundClient, log: Logger): ChosenAgent {
  const voice = config.voice;
  if (voice.agent === 'greeter') {
    warmUp(voice.localVoice);
    return { agent: new GreeterAgent({ voice: voice.localVoice }) };
  }
  const chosen = createVoiceServices(voice, log);
  if ('missing' in chosen) {
    const reason = `the voice agent cannot run: ${chosen.missing}`;
    // Never dialled (no driver is offered while not ready); a call that reaches it anyway is ended at once.
    const unavailable: CallAgent = {
      label: 'flow',
      converse: async (_context, io) => {
        io.hangup();
        return { outcome: 'error', metaData: { call_ended_by: 'error', errors: [reason] } };
      },
    };
    return { agent: unavailable, notReady: reason };
  }
  // Compiling the VAD model takes a moment: do it now, not inside the first call's media stream.
  void preloadSilero(voice.sileroRuntime).catch(() => undefined);
  const knowledge = createKnowledgeService(db, { fetch: outbound.fetch, settings: config.knowledge, log });
  const flowParts = {
    pricing: voice.pricing,
    // Template hooks go out through the outbound URL policy.
    hookFetch: outbound.fetch,
    loadTemplate: (templateId: string) => findTemplateById(db, templateId),
    searchKnowledge: (templateId: string, query: string) => knowledge.searchForTemplate(templateId, query),
  };
  const chat = new ConversationAgent({ services: chosen.services, ...flowParts });
  // A realtime model carries the flows when one is configured; the chat pipeline takes the calls it cannot.
  const agent = voice.realtime ? new RealtimeAgent({ model: createRealtimeModel(voice.realtime), services: chosen.services, chatLlm: chosen.services.llm, fallback: chat, ...flowParts }) : chat;
  return { agent, services: chosen.services };
}

/** The parts the app serves and the workers use, built from the configuration. */
export interface Parts {
  flags: Flags;
  recordings: RecordingStore;
  telephony: Telephony;
  webrtc: WebRtcService;
  /** One client for every tenant-steered request of this process: hooks, pre-checks, webhooks. */
  outbound: OutboundClient;
  /** What template test runs play their cases with: the sandbox line's callees, and the LLM that judges criteria. */
  testLine: NonNullable<AppDeps['testLine']>;
}

/** A trunk as the SIP driver dials it; a sandbox trunk at this process's far side (`sandboxAddress`). */
function sipTrunk(t: TrunkRow | undefined, sandboxAddress: string | undefined): SipTrunk | undefined {
  if (!t) return undefined;
  const address = t.sandbox ? (sandboxAddress ?? t.address) : t.address;
  return { id: t.id, resellerId: t.reseller_id, address, transport: t.transport, codecs: t.codecs, transferMethod: t.transfer_method, ...(t.sandbox ? { sandbox: true } : {}), ...(t.username && t.password ? { username: t.username, password: t.password } : {}), ...(t.from_domain ? { fromDomain: t.from_domain } : {}) };
}

/**
 * Builds recordings, the agent, telephony and WebRTC around open flags. The sandbox line's kits
 * (providers without credentials, dialled on the in-process emulator) join the configured ones;
 * its calls run the greeter while the template agent lacks its services. `ownerUrl`: this
 * process's origin as other processes reach it, once it listens (WebRTC sessions record it).
 */
export function buildParts(config: Config, db: Db, log: Logger, flags: Flags, extra: { sandbox?: SandboxLine | undefined; ownerUrl?: () => string | undefined } = {}): Parts {
  const { sandbox, ownerUrl } = extra;
  // Recordings are stored once, by this store, and served by the API from the same one.
  const recordings = createRecordingStore(config.recordings, `${config.publicUrl}${API_PREFIX}`, () => flags.uploadRecordings());
  const outbound = new OutboundClient(config.outboundAllow);
  const { agent, notReady, services } = chooseAgent(config, db, outbound, log);
  const onFinished = queueFinishNotifications(config.serviceCallbackUrl);
  const kits = createKits(config.telephony);
  for (const [slot, kit] of sandbox?.kits ?? []) if (!kits.has(slot)) kits.set(slot, kit);
  // Calls through SIP trunks: the lead's configuration names its trunk.
  const trunks = new TrunksService(db, outbound.policy);
  const live = new LiveTranscripts(db, log);
  const sandboxAgent = notReady ? new GreeterAgent() : agent;
  const sip = new SipDriver({
    agent,
    saveRecording: (callId, wav) => recordings.save(callId, wav),
    log,
    trunkFor: async (request) => sipTrunk(await trunks.forLead(request.leadId), sandbox?.sip.address),
    failover: async (request, fromTrunkId) => sipTrunk(await trunks.failoverFor({ id: request.leadId, attempt: request.attempt }, fromTrunkId), sandbox?.sip.address),
    trunkAt: async (source) => sipTrunk(await trunks.at(source.host, source.port), undefined),
    ...(sandbox ? { sandbox: { agent: sandboxAgent, callerId: SANDBOX_NUMBERS.SIP } } : {}),
    ...(notReady ? { notReady } : {}),
    liveTranscript: (leadId) => live.sink(leadId),
    bind: config.telephony.sip,
    ringTimeoutSeconds: config.telephony.ringTimeoutSeconds,
    maxCallSeconds: config.telephony.maxCallSeconds,
  });
  const telephony = new Telephony({
    sip,
    settings: config.telephony,
    kits,
    ...(sandbox ? { sandbox: { slots: new Set(sandbox.kits.keys()), agent: sandboxAgent, sip: true } } : {}),
    callbackBaseUrl: `${config.publicUrl}${API_PREFIX}`,
    agent,
    notReady,
    services,
    saveRecording: (callSid, wav) => recordings.save(callSid, wav),
    log,
    db,
    switches: flags,
    onInboundFinished: onFinished,
    journalDir: config.journalDir,
    liveTranscript: (leadId: string) => live.sink(leadId),
  });
  const webrtc = new WebRtcService({
    db,
    log,
    settings: config.webrtc,
    // The template agent telephony uses (shared: one VAD model, one set of clients).
    flowAgent: agent,
    streamAgent: services ? new StreamAgent({ services }) : undefined,
    notReady,
    greeter: new GreeterAgent({ voice: config.voice.localVoice }),
    saveRecording: (room, wav) => recordings.save(room, wav),
    onFinished,
    journalDir: config.journalDir,
    ...(ownerUrl ? { ownerUrl } : {}),
  });
  return { flags, recordings, telephony, webrtc, outbound, testLine: { callees: sandbox?.emulator, llm: services?.llm } };
}

/**
 * The HTTP application with every part built from the configuration, not listening (tests drive
 * it with inject()). Its flags close with it.
 */
export async function composeApp(options: { config: Config; db: Db; logger?: Logger }): Promise<App> {
  const { config, db } = options;
  const log = options.logger ?? createLogger('silent');
  const flags = await Flags.open(config.flags, log);
  const parts = buildParts(config, db, log, flags);
  const app = await buildApp({ config, db, ...(options.logger ? { logger: options.logger } : {}), ...parts });
  app.addHook('onClose', async () => {
    await flags.close();
    await parts.outbound.close();
  });
  return app;
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
  const db = await openAndMigrate(config);
  // A malformed flag file stops the start with its reason.
  let flags: Flags;
  try {
    flags = await Flags.open(config.flags, logger);
  } catch (err) {
    await db.close();
    throw err;
  }
  let sandbox: SandboxLine | undefined;
  try {
    sandbox = await startSandboxLine(config, logger);
    // The line's caller IDs in the pool (and those of providers that now have credentials disabled).
    await syncSandboxNumbers(
      db,
      new Map([...(sandbox?.kits.keys() ?? []), ...(sandbox ? [SIP_PROVIDER] : [])].map((provider) => [provider, SANDBOX_NUMBERS[provider as keyof typeof SANDBOX_NUMBERS]])),
      Object.keys(SANDBOX_NUMBERS),
    );
  } catch (err) {
    await sandbox?.close();
    await db.close();
    await flags.close();
    throw err;
  }
  let internalOrigin: string | undefined;
  const parts = buildParts(config, db, logger, flags, { sandbox, ownerUrl: () => internalOrigin });
  const tracing = await startTracing(config.tracing, logger);
  warnIfUnreachable(config, logger);
  let app: App | undefined;
  try {
    const admin = await tenantsService(db).ensureAdmin(config.adminEmail, config.adminPassword);
    if (admin) onAdminCreated?.(admin);
    app = await buildApp({ config, db, logger, ...parts, role: options.role ?? 'all' });
    await parts.telephony.answerSipCalls();
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    await app?.close().catch(() => undefined);
    await sandbox?.close();
    await db.close();
    await flags.close();
    await parts.outbound.close();
    await tracing.shutdown();
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const reachableHost = config.host === '0.0.0.0' || config.host === '::' ? hostname() : host;
  internalOrigin = config.internalUrl ?? `http://${reachableHost}:${port}`;
  const running = app;
  const role = options.role ?? 'all';
  const webhooks =
    role === 'api' ? undefined : new WebhookDispatcher({ db, log: logger, settings: config.webhooks, workerId: `${hostname()}:${process.pid}`, outbound: parts.outbound });
  const scheduler =
    role === 'api'
      ? undefined
      : new Scheduler({
          db,
          drivers: options.drivers ?? parts.telephony.drivers,
          log: logger,
          onFinished: queueFinishNotifications(config.serviceCallbackUrl),
          stoppedResellers: (ids) => flags.diallingStopped(ids),
          afterFinished: () => webhooks?.wake(),
          maxConcurrentCalls: config.scheduler.maxConcurrentCalls,
          leaseSeconds: config.scheduler.leaseSeconds,
          pollMs: config.scheduler.pollMs,
          shutdownGraceMs: config.scheduler.shutdownGraceSeconds * 1000,
          outbound: parts.outbound,
          journalDir: config.journalDir,
          numberHealth: config.scheduler.numberHealth,
        });
  const retention =
    role === 'api'
      ? undefined
      : new RecordingRetention({ db, recordings: parts.recordings, log: logger, retentionSeconds: config.webrtc.recordingRetentionSeconds });
  const privacyRetention = role === 'api' ? undefined : new RetentionJob({ db, recordings: parts.recordings, log: logger });
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
  privacyRetention?.start();
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
        await privacyRetention?.stop();
        await auditRetention.stop();
        await running.close();
        await sandbox?.close();
      } finally {
        await db.close();
        await flags.close();
        await parts.outbound.close();
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

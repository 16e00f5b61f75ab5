import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config, Role } from './config.js';
import type { Db } from './db/index.js';
import {
  AuditService,
  AuthRepository,
  AuthService,
  JwtSigner,
  registerAuditRoutes,
  registerAuditTrail,
  registerAuth,
  registerAuthRoutes,
  resolveJwtSecret,
} from './auth/index.js';
import {
  addSharedSchema,
  API_PREFIX,
  clientErrorHandler,
  frameworkErrors,
  ProblemSchema,
  registerAccessLog,
  registerErrorHandling,
  registerJsonBodies,
  registerRateLimits,
  registerSecurityHeaders,
  registerTextChecks,
  validatorCompiler,
  type App,
} from './http/index.js';
import { analyticsBacklog, registerAnalytics } from './analytics/index.js';
import { registerBlacklist } from './blacklist/index.js';
import { registerCompliance } from './compliance/index.js';
import { createKnowledgeService, registerKnowledge } from './knowledge/index.js';
import { registerPrivacy } from './privacy/index.js';
import { registerCampaigns } from './campaigns/index.js';
import { registerConfigurations, type OnCallingEnabled } from './configurations/index.js';
import { registerLeads } from './leads/index.js';
import { abortLeads, LEADS_CHANNEL, RELEASE_BATCH, releaseAllHeld, releaseHeld } from './lifecycle/index.js';
import { registerNumbers } from './numbers/index.js';
import { registerTrunks } from './trunks/index.js';
import { registerTemplates } from './templates/index.js';
import { registerTenants } from './tenants/index.js';
import { registerWebhooks } from './webhooks/index.js';
import type { Logger } from './lib/logger.js';
import type { OutboundClient } from './lib/outbound/index.js';
import type { RecordingStore } from './recordings/index.js';
import { createHmac } from 'node:crypto';
import { attachMediaServer, registerCallbackRoutes, type Telephony } from './telephony/index.js';
import { registerFlagRoutes, type Flags } from './flags/index.js';
import { addSources, instrumentHttp, registerMetricsRoute } from './metrics/index.js';
import { registerWebRtc, type WebRtcService } from './webrtc/index.js';
import { queueFinishNotifications } from './webhooks/index.js';
import { registerOverview } from './overview/index.js';
import { registerSandbox } from './sandbox/index.js';
import { registerTemplateTests } from './template-tests/index.js';
import type { CalleeScript } from './emulator/index.js';
import type { LLM } from './voice/index.js';
import { agentOptions } from './providers/index.js';
import { DashboardBundle, registerDashboardRoutes, registerRootRedirect } from './dashboard/index.js';

export { API_PREFIX } from './http/index.js';
export { VERSION } from './lib/version.js';
import { VERSION } from './lib/version.js';

/** GET /health: liveness, and whether this process can carry calls (and on what). */
export const HealthSchema = Type.Object({
  status: Type.Literal('ok'),
  version: Type.String(),
  database: Type.String(),
  calls: Type.Object(
    {
      ready: Type.Boolean({ description: 'Calls can be placed; when false, leads wait and `reason` says why' }),
      agent: Type.String(),
      providers: Type.Array(Type.String(), { description: 'The providers this process dials: the configured hosted providers, the sandbox line\'s, and SIP (calls through SIP trunks)' }),
      liveCalls: Type.Integer({ description: 'Phone calls and WebRTC sessions in progress in this process' }),
      reason: Type.Optional(Type.String()),
    },
    { description: 'Whether this process can carry calls' },
  ),
  sandbox: Type.Object(
    {
      enabled: Type.Boolean(),
      providers: Type.Array(Type.String(), { description: 'The providers whose calls reach the simulated customer (no credentials configured for them)' }),
      agent: Type.String({ description: 'The agent sandbox calls run: greeter until an LLM is configured' }),
      note: Type.String(),
    },
    { description: 'The sandbox line: calls on these providers reach a simulated customer inside Dialer; no phone rings' },
  ),
});

export interface AppDeps {
  config: Config;
  db: Db;
  logger?: Logger;
  /** Call recordings (GET /leads/recording/{call_sid}). */
  recordings: RecordingStore;
  /** Live calls, callback routes and the media endpoint. */
  telephony: Telephony;
  /** Feature flags (GET/POST /flags, the flag webhook). */
  flags: Flags;
  /** Browser voice sessions. */
  webrtc: WebRtcService;
  /** The dashboard's files (built on first use); the process's shared bundle when not given. */
  dashboard?: DashboardBundle;
  /** The outbound URL policy's client: URLs a tenant writes are checked with its policy. */
  outbound: OutboundClient;
  /**
   * Which routes to mount: `all` and `api` everything; `worker` only what a process carrying calls
   * needs: the provider callbacks and media streams, health and metrics.
   */
  role?: Role;
  /** Template test runs: the sandbox line's simulated customers (none: runs are refused) and the LLM that judges criteria. */
  testLine?: { callees: { script(number: string, script: CalleeScript): void } | undefined; llm: LLM | undefined };
}

/** Builds the HTTP application from its built parts (see server.ts). It never listens: server.ts does, tests use `inject()`. */
export async function buildApp(deps: AppDeps): Promise<App> {
  const { config, db } = deps;
  const app = Fastify({
    loggerInstance: (deps.logger ?? undefined) as FastifyBaseLogger | undefined,
    bodyLimit: config.bodyLimitBytes,
    // Request IDs: honour a caller's X-Request-Id, echo it back, put it on every log line.
    requestIdHeader: 'x-request-id',
    // The client's address (login throttling, rate limits, audit) from X-Forwarded-For only behind trusted proxies.
    trustProxy: config.trustProxy as boolean | string[], // a hop count is accepted too (Fastify request.js)
    genReqId: () => crypto.randomUUID(),
    // One line per request instead of Fastify's two (see registerAccessLog).
    logController: new LogController({ disableRequestLogging: true }),
    ajv: { customOptions: { strict: false } },
    // A response serializer checks union branches (every nullable field is `anyOf [T, null]`) with
    // ajv validators: compiled when the routes are made ready, not by the first response that
    // reaches each branch (tens of milliseconds on the event loop that paces live calls' audio).
    serializerOpts: { compileValidators: true },
    // Errors raised before routing, and requests Node's parser refuses, are problems too.
    frameworkErrors,
    clientErrorHandler,
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;

  app.setValidatorCompiler(validatorCompiler);
  // JSON only (spec: all bodies are JSON); a text body answers 415 instead of a confusing type error.
  app.removeContentTypeParser('text/plain');
  registerJsonBodies(app);
  addSharedSchema(ProblemSchema as typeof ProblemSchema & { $id: string });
  app.addSchema(ProblemSchema);
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-request-id', request.id);
    done(null, payload);
  });
  registerSecurityHeaders(app);
  registerAccessLog(app);
  registerErrorHandling(app);
  registerTextChecks(app);
  instrumentHttp(app);
  // Before the auth hook, which refuses routes that are neither public nor permissioned.
  app.addHook('onRoute', (route) => {
    // The interactive docs are public; swagger-ui registers its own routes under /docs.
    if (route.url.startsWith(`${API_PREFIX}/docs`)) route.config = { ...(route.config ?? {}), public: true };
  });


  const log = (deps.logger ?? app.log) as Logger;
  const { flags, recordings, telephony, webrtc, outbound } = deps;
  const closeMedia = attachMediaServer(app.server, API_PREFIX, telephony, log);
  const removeSources = addSources({
    queue: () => leadCounts(db),
    liveCalls: () => telephony.liveCalls + webrtc.liveSessions,
    analyticsBacklog: () => analyticsBacklog(db),
  });
  app.addHook('onClose', async () => {
    removeSources();
    await webrtc.close();
    await telephony.close();
    await closeMedia();
  });

  const jwtSecret = await resolveJwtSecret({ configured: config.jwtSecret, db, dataDir: config.dataDir });
  const signer = new JwtSigner(jwtSecret, config.jwtTtlSeconds);
  // Signed links (recordings for an <audio> element) use a key of their own, derived from the same secret.
  const linkKey = createHmac('sha256', jwtSecret).update('dialer signed links').digest();
  const auth = new AuthService(new AuthRepository(db), signer, config.loginThrottle);
  registerAuth(app, auth, API_PREFIX);
  await registerRateLimits(app, config.rateLimits);
  const audit = new AuditService(db);
  registerAuditTrail(app, audit, API_PREFIX, log);

  const worker = deps.role === 'worker';
  if (!worker) await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Dialer API',
        version: VERSION,
        description: 'Outbound AI voice-agent calling: leads, templates, configurations, numbers, merchants, blacklist, analytics.',
      },
      servers: [{ url: config.publicUrl }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'A login JWT (POST /login) or an s2s_ token' },
        },
      },
      security: [{ bearer: [] }],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (json.$id as string) ?? `def-${i}` },
  });

  await app.register(
    async (api) => {
      const scoped = api as unknown as App;
      scoped.get('/health', {
        config: { public: true, limit: 'none' },
        schema: {
          tags: ['service'],
          summary: 'Liveness: 200 once the database is migrated and requests are served',
          security: [],
          response: { 200: HealthSchema },
        },
        handler: async () => {
          await db.query('SELECT 1');
          const calls = telephony.status();
          // Live calls of both kinds: phone calls and browser sessions.
          const sandbox = telephony.sandboxStatus();
          return {
            status: 'ok' as const,
            version: VERSION,
            database: db.kind,
            calls: { ...calls, liveCalls: calls.liveCalls + webrtc.liveSessions },
            sandbox: {
              enabled: sandbox.providers.length > 0,
              providers: sandbox.providers,
              agent: sandbox.agent,
              note:
                sandbox.providers.length > 0
                  ? `Calls on ${sandbox.emulated.length ? `${sandbox.emulated.join(', ')}${sandbox.providers.length > sandbox.emulated.length ? ', and SIP calls through a sandbox trunk,' : ''}` : 'SIP through a sandbox trunk'} reach a simulated customer inside Dialer: no phone rings. Set a provider's credentials (or use a trunk of your own) to call real phones; DIALER_SANDBOX=false turns the sandbox off.` +
                    (sandbox.agentMissing ? ` Sandbox calls run the built-in greeter because ${sandbox.agentMissing}.` : '')
                  : 'The sandbox line is off: every configured provider calls real phones.',
            },
          };
        },
      });
      registerMetricsRoute(scoped, config.metricsToken);
      // Provider callbacks are not rate limited: a provider's retries must not be refused.
      await scoped.register(async (callbacks) => {
        callbacks.addHook('onRoute', (route) => {
          route.config = { ...(route.config ?? {}), limit: 'none' };
        });
        registerCallbackRoutes(callbacks as unknown as App, { telephony, db, publicUrl: config.publicUrl, skipSignatureCheck: config.telephony.skipSignatureCheck });
      });
      if (worker) return;
      scoped.get('/openapi.json', {
        config: { public: true },
        schema: { hide: true },
        handler: async () => api.swagger(),
      });
      registerAuthRoutes(scoped, auth, { traceUrlTemplate: config.tracing.traceUrlTemplate });
      registerAuditRoutes(scoped, audit);
      registerFlagRoutes(scoped, flags);
      // Every feature's routes, mounted here and nowhere else; each builds its own service.
      registerTenants(scoped, db);
      registerTemplates(scoped, db, outbound.policy, agentOptions(config.voice));
      // A configuration that starts calling brings its template's held leads forward: a batch as it
      // is saved, the rest after.
      const onCallingEnabled: OnCallingEnabled = async (q, c) => {
        if ((await releaseHeld(q, c.reseller_id, c.template_id, c.initial_offset)) < RELEASE_BATCH) return undefined;
        return () => {
          releaseAllHeld(db, c.reseller_id, c.template_id, c.initial_offset).catch((err: unknown) =>
            app.log.error({ err, template_id: c.template_id }, 'releasing held leads failed; they are released by their recheck'),
          );
        };
      };
      registerConfigurations(scoped, db, outbound.policy, onCallingEnabled);
      registerNumbers(scoped, db);
      registerTrunks(scoped, db, outbound.policy);
      registerBlacklist(scoped, db);
      await registerCompliance(scoped, db);
      registerKnowledge(scoped, createKnowledgeService(db, { fetch: outbound.fetch, settings: config.knowledge, log: app.log }));
      const onFinished = queueFinishNotifications(config.serviceCallbackUrl);
      registerPrivacy(scoped, { db, recordings, onFinished });
      registerLeads(scoped, { db, recordings, onFinished, linkKey, publicBase: `${config.publicUrl}${API_PREFIX}`, prefix: API_PREFIX, policy: outbound.policy });
      // A stopped campaign's waiting leads are aborted; a resumed one wakes the workers.
      registerCampaigns(scoped, {
        db,
        publicBase: `${config.publicUrl}${API_PREFIX}`,
        finishStopped: async (q, campaignId, ids) => {
          await abortLeads(q, ids.map((lead_id) => ({ lead_id, cancellation_reason: 'campaign stopped' })), { sql: 'l.campaign_id = $2', params: [campaignId] }, onFinished);
        },
        wake: async (q) => void (await q.query(`SELECT pg_notify('${LEADS_CHANNEL}', '')`)),
      });
      registerWebhooks(scoped, db);
      registerAnalytics(scoped, { db, log: app.log });
      registerOverview(scoped, db);
      registerSandbox(scoped, { db, onFinished, onCallingEnabled, policy: outbound.policy, sandbox: () => telephony.sandboxStatus() });
      const templateTests = registerTemplateTests(scoped, {
        db,
        log,
        onFinished,
        onCallingEnabled,
        policy: outbound.policy,
        sandbox: () => telephony.sandboxStatus(),
        callees: deps.testLine?.callees,
        llm: deps.testLine?.llm,
        publicBase: `${config.publicUrl}${API_PREFIX}`,
      });
      app.addHook('onClose', () => templateTests.close());
      registerWebRtc(scoped, webrtc);
      registerDashboardRoutes(scoped, deps.dashboard ?? DashboardBundle.shared(), API_PREFIX);
    },
    { prefix: API_PREFIX },
  );
  if (!worker) {
    await app.register(swaggerUi, { routePrefix: `${API_PREFIX}/docs` });
    registerRootRedirect(app, API_PREFIX);
  }
  return app;
}

/** Leads by status, for the queue-depth gauge (read at scrape time). */
async function leadCounts(db: Db): Promise<Record<string, number>> {
  const { rows } = await db.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM leads GROUP BY status');
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

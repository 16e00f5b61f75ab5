/**
 * The `dialer` command: serve, migrate, user create (and the feature commands registered below).
 * Errors a user can fix (configuration, a locked data directory, bad arguments) print one clear
 * line and exit 1; nothing else is swallowed.
 */
import { Command, Option } from 'commander';
import { ConfigError, loadConfig } from './config.js';
import { DataDirLockedError, openAndMigrate } from './db/index.js';
import { AppError } from './lib/errors.js';
import { gcReport, setHeapGrowth } from './lib/gc.js';
import { createLogger } from './lib/logger.js';
import { startServer } from './server.js';
import { tenantsService } from './tenants/index.js';
import { VERSION, API_PREFIX } from './app.js';
import { ROLES, type Principal, type RoleName } from './auth/index.js';
import { registerCommands } from './commands.js';
import { DashboardBundle } from './dashboard/index.js';

const program = new Command()
  .name('dialer')
  .description('Dialer: outbound AI voice-agent calling service')
  .version(VERSION);

program
  .command('serve')
  .description('Serve the API (and, in the default role, the scheduler and call runners)')
  .addOption(new Option('--role <role>', 'which parts to run').choices(['all', 'api', 'worker']).default('all'))
  .action(async (opts: { role: 'all' | 'api' | 'worker' }) => {
    const config = loadConfig();
    const logger = createLogger(config.logLevel);
    const gc = gcReport();
    const heapGrowthPercent = setHeapGrowth();
    const server = await startServer(config, logger, (admin) => {
      if (admin.generatedPassword) {
        process.stdout.write(
          `\nCreated the first admin: ${admin.email} / ${admin.generatedPassword}\n` +
            'This password is shown once. Set DIALER_ADMIN_EMAIL and DIALER_ADMIN_PASSWORD to choose your own.\n\n',
        );
      } else {
        logger.info({ email: admin.email }, 'created the first admin from DIALER_ADMIN_EMAIL');
      }
    }, { role: opts.role });
    logger.info(
      { url: `${server.url}${API_PREFIX}`, docs: `${server.url}${API_PREFIX}/docs`, dashboard: `${server.url}/`, database: server.db.kind, role: opts.role, gc: gc.gc, heap_growth_percent: heapGrowthPercent, cpus: gc.cpus },
      'Dialer is serving',
    );
    if (gc.advice) logger.warn({ cpus: gc.cpus, gc: gc.gc }, gc.advice);
    if (opts.role !== 'worker') {
      // Built now rather than on the first visit, so the dashboard opens at once.
      DashboardBundle.shared()
        .get()
        .catch((err: unknown) => logger.error({ err }, 'the dashboard could not be built'));
      process.stdout.write(`Dashboard: ${server.url}/
`);
    }
    let stopping = false;
    const stop = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'shutting down');
      try {
        await server.close();
        process.exit(0);
      } catch (err) {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      }
    };
    process.on('SIGINT', () => void stop('SIGINT'));
    process.on('SIGTERM', () => void stop('SIGTERM'));
  });

program
  .command('migrate')
  .description('Apply the database migrations and exit')
  .action(async () => {
    const config = loadConfig();
    const db = await openAndMigrate(config);
    await db.close();
    process.stdout.write(`Database migrated (${db.kind}).\n`);
  });

const SYSTEM: Principal = { kind: 'user', id: 'cli', label: 'dialer CLI', role: 'admin', resellerId: null, merchantId: null };

program
  .command('user')
  .description('Manage users')
  .command('create')
  .description('Create a user (as an admin would through POST /users)')
  .requiredOption('--email <email>', 'login email')
  .requiredOption('--password <password>', 'password (at least 8 characters)')
  .addOption(new Option('--role <role>', 'role').choices([...ROLES]).default('admin'))
  .option('--reseller-id <id>', 'reseller of a reseller, merchant or user')
  .option('--merchant-id <id>', 'merchant of a merchant or user')
  .action(async (opts: { email: string; password: string; role: RoleName; resellerId?: string; merchantId?: string }) => {
    if (opts.password.length < 8) throw new ConfigError('--password must be at least 8 characters');
    const config = loadConfig();
    const db = await openAndMigrate(config);
    try {
      const user = await tenantsService(db).createUser(SYSTEM, {
        email: opts.email,
        password: opts.password,
        role: opts.role,
        reseller_id: opts.resellerId ?? null,
        merchant_id: opts.merchantId ?? null,
      });
      process.stdout.write(`Created ${user.role} ${user.email} (${user.id}).\n`);
    } finally {
      await db.close();
    }
  });

program
  .command('emulator')
  .description('Play Twilio, Exotel and Plivo toward a Dialer on this machine (offline demo and tests): their REST APIs, signed callbacks and media streams, with a scripted callee speaking the local voice')
  .option('--port <port>', 'port to listen on', '4010')
  .option('--host <host>', 'address to listen on', '127.0.0.1')
  .option('--dialer-url <url>', "Dialer's URL with its API prefix (for inbound calls and the Exotel Voicebot applet)", 'http://127.0.0.1:8080/agent/voice/dialer')
  .option('--twilio-account-sid <sid>', 'Twilio account SID (default: TWILIO_ACCOUNT_SID or a demo value)')
  .option('--twilio-auth-token <token>', 'Twilio auth token (default: TWILIO_AUTH_TOKEN or a demo value)')
  .option('--plivo-auth-id <id>', 'Plivo auth ID (default: PLIVO_AUTH_ID or a demo value)')
  .option('--plivo-auth-token <token>', 'Plivo auth token (default: PLIVO_AUTH_TOKEN or a demo value)')
  .option('--exotel-account-sid <sid>', 'Exotel account SID (default: EXOTEL_ACCOUNT_SID or a demo value)')
  .option('--exotel-api-key <key>', 'Exotel API key (default: EXOTEL_API_KEY or a demo value)')
  .option('--exotel-api-token <token>', 'Exotel API token (default: EXOTEL_API_TOKEN or a demo value)')
  .option('--scenarios <file>', 'JSON file of phone number -> callee (voicemail, menu, opt_out, person, busy, no_answer, script); see docs/campaigns.md')
  .action(async (opts: Record<string, string | undefined>) => {
    const { startEmulator, ANY_NUMBER, DEMO_CALLEE, readScenarios } = await import('./emulator/index.js');
    let scenarios: Map<string, import('./emulator/index.js').CalleeScript> | undefined;
    try {
      scenarios = opts.scenarios ? readScenarios(opts.scenarios) : undefined;
    } catch (err) {
      throw new ConfigError(`--scenarios ${(err as Error).message}`);
    }
    const port = Number(opts.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`--port must be a port number, not ${opts.port}`);
    // Defaults: the credentials this machine gives Dialer (its environment), else demo values.
    const config = loadConfig();
    const t = config.telephony;
    const twilio = { accountSid: opts.twilioAccountSid || t.twilio?.accountSid || `AC${'0'.repeat(31)}1`, authToken: opts.twilioAuthToken || t.twilio?.authToken || 'emulator-twilio-token' };
    const plivo = { authId: opts.plivoAuthId || t.plivo?.authId || 'MAEMULATOR0000000001', authToken: opts.plivoAuthToken || t.plivo?.authToken || 'emulator-plivo-token' };
    const exotel = {
      accountSid: opts.exotelAccountSid || t.exotel?.accountSid || 'emulator1',
      apiKey: opts.exotelApiKey || t.exotel?.apiKey || 'emulator-exotel-key',
      apiToken: opts.exotelApiToken || t.exotel?.apiToken || 'emulator-exotel-token',
    };
    const emulator = await startEmulator({
      port,
      host: opts.host,
      dialerUrl: opts.dialerUrl ?? 'http://127.0.0.1:8080/agent/voice/dialer',
      twilio,
      plivo,
      exotel,
      defaultScript: scenarios?.get(ANY_NUMBER) ?? DEMO_CALLEE,
      voice: config.voice.localVoice,
      log: (msg) => process.stdout.write(`${new Date().toISOString()} ${msg}\n`),
    });
    for (const [number, script] of scenarios ?? []) if (number !== ANY_NUMBER) emulator.script(number, script);
    process.stdout.write(
      `Provider emulator on ${emulator.url} for the Dialer at ${opts.dialerUrl}. Give Dialer:\n\n` +
        [
          `TWILIO_API_URL=${emulator.url}`,
          `TWILIO_ACCOUNT_SID=${twilio.accountSid}`,
          `TWILIO_AUTH_TOKEN=${twilio.authToken}`,
          `PLIVO_API_URL=${emulator.url}`,
          `PLIVO_AUTH_ID=${plivo.authId}`,
          `PLIVO_AUTH_TOKEN=${plivo.authToken}`,
          `EXOTEL_API_URL=${emulator.url}`,
          `EXOTEL_ACCOUNT_SID=${exotel.accountSid}`,
          `EXOTEL_API_KEY=${exotel.apiKey}`,
          `EXOTEL_API_TOKEN=${exotel.apiToken}`,
          `EXOTEL_FLOW_URL=${emulator.exotelFlowUrl}`,
        ].join('\n') +
        `\n\n${scenarios?.size ? `${scenarios.size} number(s) play the callees of ${opts.scenarios}; every other callee` : 'Every callee'} answers, says "Hello? Yes, this is me.", listens, says "Thank you, goodbye." and hangs up. Ctrl-C stops.\n`,
    );
    let stopping = false;
    const stop = async () => {
      if (stopping) return;
      stopping = true;
      await emulator.close();
      process.exit(0);
    };
    process.on('SIGINT', () => void stop());
    process.on('SIGTERM', () => void stop());
  });

registerCommands(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof ConfigError || err instanceof DataDirLockedError) {
    process.stderr.write(`dialer: ${err.message}\n`);
    process.exit(1);
  }
  if (err instanceof AppError) {
    process.stderr.write(`dialer: ${err.message}${err.errors ? ` (${err.errors.map((e) => `${e.path} ${e.message}`).join('; ')})` : ''}\n`);
    process.exit(1);
  }
  throw err;
}

/**
 * Feature flags (spec 6.5) through OpenFeature, over a flag file in flagd's format, refreshed by
 * the flag system's signed webhook or a change of the file. The feature's only door.
 */
import path from 'node:path';
import { Flags, type FlagSettings } from './service.js';

export { Flags, FLAG_KEYS, type FlagSettings, type RefreshResult } from './service.js';
export { FlagFileError } from './provider.js';
export { registerFlagRoutes } from './routes.js';
export { signFlagWebhook, verifyFlagWebhook } from './signature.js';

/** A flag setting in the environment is wrong (config.ts reports it as a ConfigError; this module does not import config.ts, which loads it). */
export class FlagSettingsError extends Error {
  override name = 'FlagSettingsError';
}

function bool(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const v = env[name]?.trim().toLowerCase();
  if (!v) return fallback;
  if (['true', '1', 'yes'].includes(v)) return true;
  if (['false', '0', 'no'].includes(v)) return false;
  throw new FlagSettingsError(`${name} must be true or false, got "${env[name]}"`);
}

/** DIALER_FLAGS_PROVIDER, DIALER_FLAGS_FILE, DIALER_FLAGS_WEBHOOK_SECRET, DIALER_FLAGS_POLL_SECONDS; the defaults come from the older switches. */
export function flagSettingsFromEnv(env: NodeJS.ProcessEnv, dataDir: string): FlagSettings {
  const secret = env.DIALER_FLAGS_WEBHOOK_SECRET || undefined;
  if (secret !== undefined && secret.length < 16) throw new FlagSettingsError('DIALER_FLAGS_WEBHOOK_SECRET must be at least 16 characters');
  const rawPoll = env.DIALER_FLAGS_POLL_SECONDS?.trim();
  if (rawPoll && (!/^\d+$/.test(rawPoll) || Number(rawPoll) > 86_400)) {
    throw new FlagSettingsError(`DIALER_FLAGS_POLL_SECONDS must be a whole number of seconds (0-86400), got "${rawPoll}"`);
  }
  const provider = env.DIALER_FLAGS_PROVIDER?.trim() || 'file';
  if (provider !== 'file' && provider !== 'flagd') throw new FlagSettingsError(`DIALER_FLAGS_PROVIDER must be file or flagd, got "${provider}"`);
  return {
    provider,
    file: path.resolve(env.DIALER_FLAGS_FILE?.trim() || path.join(dataDir, 'flags.json')),
    webhookSecret: secret,
    pollSeconds: rawPoll ? Number(rawPoll) : 10,
    defaults: {
      uploadRecordings: bool(env, 'UPLOAD_VOICE_AGENT_CALL_RECORDINGS_TO_CLOUD', false),
      voicemailDetection: bool(env, 'DIALER_MACHINE_DETECTION', true),
    },
  };
}

export function openFlags(settings: FlagSettings, log: Parameters<typeof Flags.open>[1]): Promise<Flags> {
  return Flags.open(settings, log);
}

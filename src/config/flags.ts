/** The feature flags' settings: where the flags come from and the defaults of the day-one flags. */
import path from 'node:path';
import { ConfigError, type Env } from './env.js';

export interface FlagSettings {
  /** `file` (default): the flag file below; `flagd`: a flagd daemon or flagd's offline file mode (FLAGD_* variables). */
  provider: 'file' | 'flagd';
  /** The flag file (flagd's format). */
  file: string;
  /** HMAC key the flag system signs its update webhook with; unset: the webhook is refused. */
  webhookSecret: string | undefined;
  /** How often the file's modification time is checked (0: only on the webhook). */
  pollSeconds: number;
  /** Defaults where the file defines nothing. */
  defaults: { uploadRecordings: boolean; voicemailDetection: boolean };
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const v = env[name]?.trim().toLowerCase();
  if (!v) return fallback;
  if (['true', '1', 'yes'].includes(v)) return true;
  if (['false', '0', 'no'].includes(v)) return false;
  throw new ConfigError(`${name} must be true or false, got "${env[name]}"`);
}

/** DIALER_FLAGS_PROVIDER, DIALER_FLAGS_FILE, DIALER_FLAGS_WEBHOOK_SECRET, DIALER_FLAGS_POLL_SECONDS; the defaults come from the older switches. */
export function flagSettingsFromEnv(env: Env, dataDir: string): FlagSettings {
  const secret = env.DIALER_FLAGS_WEBHOOK_SECRET || undefined;
  if (secret !== undefined && secret.length < 16) throw new ConfigError('DIALER_FLAGS_WEBHOOK_SECRET must be at least 16 characters');
  const rawPoll = env.DIALER_FLAGS_POLL_SECONDS?.trim();
  if (rawPoll && (!/^\d+$/.test(rawPoll) || Number(rawPoll) > 86_400)) {
    throw new ConfigError(`DIALER_FLAGS_POLL_SECONDS must be a whole number of seconds (0-86400), got "${rawPoll}"`);
  }
  const provider = env.DIALER_FLAGS_PROVIDER?.trim() || 'file';
  if (provider !== 'file' && provider !== 'flagd') throw new ConfigError(`DIALER_FLAGS_PROVIDER must be file or flagd, got "${provider}"`);
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


/**
 * Feature flags (spec 6.5), evaluated through OpenFeature. Each Flags instance registers its
 * provider under its own OpenFeature domain, so several Dialer apps in one process (tests) never
 * share flags. The flags Dialer reads from day one:
 *
 * - `upload-recordings-to-cloud` (boolean; default: UPLOAD_VOICE_AGENT_CALL_RECORDINGS_TO_CLOUD):
 *   store new recordings in the S3 bucket rather than the local directory.
 * - `dialling-enabled` (boolean, context `reseller_id`; default true): the per-reseller kill switch.
 *   A reseller's leads wait (they are not failed) while it is false.
 * - `voicemail-detection` (boolean, context `reseller_id`; default: DIALER_MACHINE_DETECTION):
 *   the provider's answering-machine detection and the agent's first-words voicemail check.
 *
 * Every evaluation reads the provider's current definitions: a refresh takes effect at the next
 * dial, with no restart.
 */
import { randomUUID } from 'node:crypto';
import { NOOP_PROVIDER, OpenFeature, type Client } from '@openfeature/server-sdk';
import type { Logger } from '../lib/logger.js';
import { FileFlagProvider } from './provider.js';

export const FLAG_KEYS = {
  uploadRecordings: 'upload-recordings-to-cloud',
  diallingEnabled: 'dialling-enabled',
  voicemailDetection: 'voicemail-detection',
} as const;

export interface FlagSettings {
  /** The flag file (flagd's format). */
  file: string;
  /** HMAC key the flag system signs its update webhook with; unset: the webhook is refused. */
  webhookSecret: string | undefined;
  /** How often the file's modification time is checked (0: only on the webhook). */
  pollSeconds: number;
  /** Defaults where the file defines nothing. */
  defaults: { uploadRecordings: boolean; voicemailDetection: boolean };
}

export interface RefreshResult {
  changed: string[];
  /** Flag keys now defined. */
  flags: string[];
}

export class Flags {
  private readonly client: Client;
  private readonly provider: FileFlagProvider;
  private readonly domain = `dialer-${randomUUID()}`;
  private timer: NodeJS.Timeout | undefined;

  private constructor(
    readonly settings: FlagSettings,
    private readonly log: Logger,
  ) {
    this.provider = new FileFlagProvider(settings.file);
    this.client = OpenFeature.getClient(this.domain);
  }

  /** Loads the flag file (a malformed one stops the start with its reason) and starts the poll. */
  static async open(settings: FlagSettings, log: Logger): Promise<Flags> {
    const flags = new Flags(settings, log);
    await flags.provider.reload();
    await OpenFeature.setProviderAndWait(flags.domain, flags.provider);
    if (settings.pollSeconds > 0) {
      flags.timer = setInterval(() => void flags.poll(), settings.pollSeconds * 1000);
      flags.timer.unref();
    }
    log.info({ file: settings.file, flags: flags.provider.keys() }, 'feature flags loaded');
    return flags;
  }

  /** Re-reads the flags now (the flag system's webhook) and logs what changed. */
  async refresh(source: string): Promise<RefreshResult> {
    const changed = await this.provider.reload();
    this.report(changed, source);
    return { changed, flags: this.provider.keys() };
  }

  /** The definitions in force (flagd format). */
  definitions(): Record<string, unknown> {
    return this.provider.snapshot();
  }

  uploadRecordings(): Promise<boolean> {
    return this.client.getBooleanValue(FLAG_KEYS.uploadRecordings, this.settings.defaults.uploadRecordings);
  }

  diallingEnabled(resellerId: string): Promise<boolean> {
    return this.client.getBooleanValue(FLAG_KEYS.diallingEnabled, true, { targetingKey: resellerId, reseller_id: resellerId });
  }

  voicemailDetection(resellerId: string): Promise<boolean> {
    return this.client.getBooleanValue(FLAG_KEYS.voicemailDetection, this.settings.defaults.voicemailDetection, { targetingKey: resellerId, reseller_id: resellerId });
  }

  /** Of these resellers, those whose dialling is switched off now. */
  async diallingStopped(resellerIds: Iterable<string>): Promise<Set<string>> {
    const ids = [...new Set(resellerIds)];
    const enabled = await Promise.all(ids.map((id) => this.diallingEnabled(id)));
    return new Set(ids.filter((_, i) => !enabled[i]));
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    // Unbinds this domain's provider (OpenFeature keeps a provider per domain for the process's life).
    await OpenFeature.setProviderAndWait(this.domain, NOOP_PROVIDER).catch(() => undefined);
  }

  private async poll(): Promise<void> {
    try {
      this.report(await this.provider.reloadIfChanged(), 'file change');
    } catch (err) {
      this.log.error({ err, file: this.settings.file }, 'feature flags not reloaded: the previous definitions stay in force');
    }
  }

  private report(changed: string[], source: string): void {
    if (changed.length === 0) return;
    const now = this.provider.snapshot();
    this.log.info({ source, changed: Object.fromEntries(changed.map((k) => [k, now[k] ?? null])) }, 'feature flags changed');
  }
}

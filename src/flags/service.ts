/**
 * Feature flags, evaluated through OpenFeature. Each Flags instance registers its
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
import { NOOP_PROVIDER, OpenFeature, ProviderEvents, type Client } from '@openfeature/server-sdk';
import type { FlagSettings } from '../config/flags.js';
import type { Logger } from '../lib/logger.js';
import { flagdSource } from './flagd.js';
import { fileSource } from './provider.js';
import type { FlagSource } from './source.js';

export const FLAG_KEYS = {
  uploadRecordings: 'upload-recordings-to-cloud',
  diallingEnabled: 'dialling-enabled',
  voicemailDetection: 'voicemail-detection',
} as const;


export interface RefreshResult {
  changed: string[];
  /** Flag keys now defined. */
  flags: string[];
}

export class Flags {
  private readonly client: Client;
  private readonly domain = `dialer-${randomUUID()}`;
  private timer: NodeJS.Timeout | undefined;

  private constructor(
    readonly settings: FlagSettings,
    private readonly source: FlagSource,
    private readonly log: Logger,
  ) {
    this.client = OpenFeature.getClient(this.domain);
  }

  /** Opens the provider the settings choose (a malformed flag file stops the start with its reason) and starts the poll. */
  static async open(settings: FlagSettings, log: Logger): Promise<Flags> {
    const source = settings.provider === 'flagd' ? await flagdSource() : fileSource(settings.file);
    const flags = new Flags(settings, source, log);
    // The file is read first so that a bad one is reported as such, not as a provider in error.
    if (settings.provider === 'file') await source.refresh();
    await OpenFeature.setProviderAndWait(flags.domain, source.provider);
    if (settings.pollSeconds > 0 && settings.provider === 'file') {
      flags.timer = setInterval(() => void flags.poll(), settings.pollSeconds * 1000);
      flags.timer.unref();
    }
    if (settings.provider === 'flagd') {
      // flagd streams its changes: log them as they come.
      source.provider.events?.addHandler(ProviderEvents.ConfigurationChanged, (details) => {
        const changed = (details as { flagsChanged?: string[] } | undefined)?.flagsChanged ?? [];
        if (changed.length > 0) log.info({ trigger: 'flagd', changed }, 'feature flags changed');
      });
    }
    log.info({ provider: settings.provider, source: source.label, flags: source.keys() }, 'feature flags loaded');
    return flags;
  }

  /** Brings the flags up to date now (the flag system's webhook) and logs what changed. */
  async refresh(trigger: string): Promise<RefreshResult> {
    const changed = await this.source.refresh();
    this.report(changed, trigger);
    return { changed, flags: this.source.keys() };
  }

  /** Where the flags come from: the flag file's path, or `flagd`. */
  get sourceLabel(): string {
    return this.source.label;
  }

  /** The definitions in force (flagd format), where the provider can show them. */
  definitions(): Record<string, unknown> {
    return this.source.definitions();
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
      this.report(await this.source.reloadIfChanged(), 'file change');
    } catch (err) {
      this.log.error({ err, file: this.settings.file }, 'feature flags not reloaded: the previous definitions stay in force');
    }
  }

  private report(changed: string[], trigger: string): void {
    if (changed.length === 0) return;
    const now = this.source.definitions();
    this.log.info({ trigger, changed: Object.fromEntries(changed.map((k) => [k, now[k] ?? null])) }, 'feature flags changed');
  }
}

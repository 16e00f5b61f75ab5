/**
 * An OpenFeature provider over a flag file in flagd's flag-definition format
 * (https://flagd.dev/reference/flag-definitions/), evaluated by flagd's own engine (`@openfeature/flagd-core`,
 * JsonLogic targeting included). The same file can be served by a flagd daemon unchanged.
 *
 * The file is read at start and again on `reload()` (the flag webhook, or a change of its mtime
 * seen by the poll); a missing file means no flags are defined (every evaluation gets its default),
 * a malformed one keeps the last good definitions and is reported.
 */
import fs from 'node:fs/promises';
import { FlagdCore } from '@openfeature/flagd-core';
import type { FlagSource } from './source.js';
import {
  OpenFeatureEventEmitter,
  ProviderEvents,
  type EvaluationContext,
  type JsonValue,
  type Provider,
  type ResolutionDetails,
} from '@openfeature/server-sdk';

export class FlagFileError extends Error {
  override name = 'FlagFileError';
}

export class FileFlagProvider implements Provider {
  readonly metadata = { name: 'dialer-flag-file' } as const;
  readonly runsOn = 'server' as const;
  readonly events = new OpenFeatureEventEmitter();
  private core = new FlagdCore();
  private mtimeMs: number | undefined = -1;
  /** The raw definitions of each flag as last loaded (to say what changed). */
  private definitions = new Map<string, string>();

  constructor(readonly path: string) {}

  async initialize(): Promise<void> {
    await this.reload();
  }

  /** Flag keys defined now. */
  keys(): string[] {
    return [...this.core.getFlags().keys()].sort();
  }

  /** The flags as defined now (flagd format), for the admin view. */
  snapshot(): Record<string, unknown> {
    return Object.fromEntries([...this.definitions].map(([k, v]) => [k, JSON.parse(v) as unknown]));
  }

  /** Re-reads the file when its modification time changed; returns the changed keys. */
  async reloadIfChanged(): Promise<string[]> {
    const mtime = await fs.stat(this.path).then((s) => s.mtimeMs, () => undefined);
    if (mtime === this.mtimeMs) return [];
    return this.reload();
  }

  /**
   * Reads the file now. Returns the keys added, removed or changed, and tells OpenFeature's
   * listeners (ConfigurationChanged) when there are any. Throws FlagFileError on a malformed file;
   * the previous definitions stay in force.
   */
  async reload(): Promise<string[]> {
    let text: string;
    let mtime: number | undefined;
    try {
      [text, mtime] = await Promise.all([fs.readFile(this.path, 'utf8'), fs.stat(this.path).then((s) => s.mtimeMs)]);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new FlagFileError(`cannot read the flag file ${this.path}: ${(err as Error).message}`);
      text = '{"flags":{}}';
      mtime = undefined;
    }
    let parsed: { flags?: Record<string, unknown> };
    try {
      parsed = JSON.parse(text) as { flags?: Record<string, unknown> };
    } catch (err) {
      throw new FlagFileError(`the flag file ${this.path} is not JSON: ${(err as Error).message}`);
    }
    if (typeof parsed !== 'object' || parsed === null || typeof parsed.flags !== 'object' || parsed.flags === null) {
      throw new FlagFileError(`the flag file ${this.path} must be an object with "flags" (flagd's flag-definition format)`);
    }
    const next = new FlagdCore();
    try {
      next.setConfigurations(text);
    } catch (err) {
      throw new FlagFileError(`the flag file ${this.path} is not a valid flag definition: ${(err as Error).message}`);
    }
    const definitions = new Map(Object.entries(parsed.flags).map(([k, v]) => [k, JSON.stringify(v)]));
    const changed = [...new Set([...definitions.keys(), ...this.definitions.keys()])].filter((k) => definitions.get(k) !== this.definitions.get(k)).sort();
    this.core = next;
    this.definitions = definitions;
    this.mtimeMs = mtime;
    if (changed.length > 0) this.events.emit(ProviderEvents.ConfigurationChanged, { flagsChanged: changed });
    return changed;
  }

  resolveBooleanEvaluation(key: string, fallback: boolean, context: EvaluationContext): Promise<ResolutionDetails<boolean>> {
    return Promise.resolve(this.core.resolveBooleanEvaluation(key, fallback, context));
  }

  resolveStringEvaluation(key: string, fallback: string, context: EvaluationContext): Promise<ResolutionDetails<string>> {
    return Promise.resolve(this.core.resolveStringEvaluation(key, fallback, context));
  }

  resolveNumberEvaluation(key: string, fallback: number, context: EvaluationContext): Promise<ResolutionDetails<number>> {
    return Promise.resolve(this.core.resolveNumberEvaluation(key, fallback, context));
  }

  resolveObjectEvaluation<T extends JsonValue>(key: string, fallback: T, context: EvaluationContext): Promise<ResolutionDetails<T>> {
    return Promise.resolve(this.core.resolveObjectEvaluation(key, fallback, context));
  }
}

/** The file provider as a flag source. */
export function fileSource(path: string): FlagSource {
  const provider = new FileFlagProvider(path);
  return {
    provider,
    label: path,
    refresh: () => provider.reload(),
    reloadIfChanged: () => provider.reloadIfChanged(),
    keys: () => provider.keys(),
    definitions: () => provider.snapshot(),
  };
}

import type { Provider } from '@openfeature/server-sdk';

/** Where the flags come from: an OpenFeature provider and what Dialer needs around it. */
export interface FlagSource {
  provider: Provider;
  /** For logs and the admin view: the file's path, or `flagd`. */
  label: string;
  /** Brings the flags up to date now; returns the keys added, removed or changed. */
  refresh(): Promise<string[]>;
  /** The poll: a refresh when the source changed (cheap when it did not). */
  reloadIfChanged(): Promise<string[]>;
  /** Flag keys known now. */
  keys(): string[];
  /** The definitions in force, where the source can show them (flagd format). */
  definitions(): Record<string, unknown>;
}

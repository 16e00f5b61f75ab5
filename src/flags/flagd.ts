/**
 * The flagd provider (`@openfeature/flagd-provider`, the OpenFeature project's own): flags served by
 * a flagd daemon over gRPC (`FLAGD_RESOLVER=rpc`, the default, or `in-process` syncing the
 * definitions), or read from a file by its offline mode (`FLAGD_OFFLINE_FLAG_SOURCE_PATH`). It
 * reads its settings from the standard FLAGD_* variables. flagd streams changes to the provider
 * itself: Dialer only listens, keeps what changed since the last refresh, and logs it.
 */
import { ProviderEvents, type Provider } from '@openfeature/server-sdk';
import type { FlagSource } from './source.js';

export async function flagdSource(): Promise<FlagSource> {
  // Loaded only when chosen: gRPC is not needed by the default file provider.
  const { FlagdProvider } = await import('@openfeature/flagd-provider');
  const provider = new FlagdProvider();
  const pending = new Set<string>();
  const seen = new Set<string>();
  provider.events.addHandler(ProviderEvents.ConfigurationChanged, (details) => {
    for (const key of (details as { flagsChanged?: string[] } | undefined)?.flagsChanged ?? []) {
      pending.add(key);
      seen.add(key);
    }
  });
  return {
    provider: provider as Provider,
    label: 'flagd',
    // flagd pushes its changes; a refresh reports those that arrived since the last one.
    refresh: async () => {
      const changed = [...pending].sort();
      pending.clear();
      return changed;
    },
    reloadIfChanged: async () => [],
    keys: () => [...seen].sort(),
    definitions: () => ({}),
  };
}

/**
 * Feature flags through OpenFeature, over a flag file in flagd's format, refreshed by
 * the flag system's signed webhook or a change of the file. The feature's only door.
 */
import type { FlagSettings } from '../config/flags.js';
import { Flags } from './service.js';

export { Flags, FLAG_KEYS, type RefreshResult } from './service.js';
export type { FlagSettings } from '../config/flags.js';
export { FlagFileError } from './provider.js';
export { registerFlagRoutes } from './routes.js';
export { signFlagWebhook, verifyFlagWebhook } from './signature.js';

export function openFlags(settings: FlagSettings, log: Parameters<typeof Flags.open>[1]): Promise<Flags> {
  return Flags.open(settings, log);
}

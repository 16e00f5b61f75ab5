export type { CallResult, DialRequest, Driver, Drivers } from './driver.js';
export { Telephony, type TelephonyDeps, type TelephonyStatus } from './service.js';
export { registerCallbackRoutes, type CallbackRouteDeps } from './routes.js';
export { attachMediaServer } from './media.js';
export { createKits } from './kits.js';
export { telephonySettings, TelephonySettingsError, type TelephonySettings } from '../config/telephony.js';
export * from './provider.js';

export type { CallResult, DialRequest, Driver, Drivers } from './driver.js';
export { Telephony, type TelephonyDeps, type TelephonyStatus, type SandboxStatus } from './service.js';
export { registerCallbackRoutes, type CallbackRouteDeps } from './routes.js';
export { attachMediaServer } from './media.js';
export { createKits } from './kits.js';
export * from './provider.js';
export { SipDriver, SIP_PROVIDER, type SipTrunk } from './sip/driver.js';

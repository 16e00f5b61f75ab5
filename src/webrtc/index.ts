/**
 * Browser voice sessions over WebRTC (execution modes WEBRTC, WEBRTC_TEST, WEBRTC_STREAM): Dialer
 * terminates WebRTC itself (libwebrtc through @roamhq/wrtc, Opus both ways), signalling over HTTP,
 * the playground page, and the retention of WebRTC recordings. The module's only door.
 */
import type { App } from '../http/index.js';
import { registerPlaygroundRoutes } from './playground.js';
import { registerWebRtcRoutes } from './routes.js';
import type { WebRtcService } from './service.js';

export { WebRtcService, type OfferAnswer, type WebRtcDeps } from './service.js';
export { RecordingRetention, expireWebRtcRecordings } from './retention.js';
export { WEBRTC_MODES, isWebRtcMode } from './repository.js';

/** Mounts the signalling routes, tts-speak, and the playground page. */
export function registerWebRtc(app: App, webrtc: WebRtcService): void {
  registerWebRtcRoutes(app, webrtc);
  registerPlaygroundRoutes(app);
}

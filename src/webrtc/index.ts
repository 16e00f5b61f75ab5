/**
 * Browser voice sessions over WebRTC (execution modes WEBRTC, WEBRTC_TEST, WEBRTC_STREAM): Dialer
 * terminates WebRTC itself (libwebrtc through @roamhq/wrtc, Opus both ways), signalling over HTTP,
 * and the retention of WebRTC recordings (the dashboard's Templates screen is the page that calls).
 * The module's only door.
 */
import type { App } from '../http/index.js';
import { registerWebRtcRoutes } from './routes.js';
import type { WebRtcService } from './service.js';

export { WebRtcService, type OfferAnswer, type WebRtcDeps } from './service.js';
export { RecordingRetention, expireWebRtcRecordings } from './retention.js';
export { WEBRTC_MODES, isWebRtcMode } from './repository.js';

/** Mounts the signalling routes and tts-speak. */
export function registerWebRtc(app: App, webrtc: WebRtcService): void {
  registerWebRtcRoutes(app, webrtc);
}

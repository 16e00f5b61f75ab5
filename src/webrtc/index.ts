/**
 * Browser voice sessions over WebRTC (spec 2.2: WEBRTC, WEBRTC_TEST, WEBRTC_STREAM): Dialer
 * terminates WebRTC itself (libwebrtc through @roamhq/wrtc, Opus both ways), signalling over HTTP,
 * and the retention of WebRTC recordings (the dashboard's Templates screen is the page that calls). The module's only door.
 */
import type { Config } from '../config.js';
import type { Db } from '../db/index.js';
import type { App } from '../http/index.js';
import type { Logger } from '../lib/logger.js';
import { StreamAgent, type CallAgent, type VoiceServices } from '../voice/index.js';
import { queueFinishNotifications } from '../webhooks/index.js';
import { registerWebRtcRoutes } from './routes.js';
import { WebRtcService } from './service.js';
import { webRtcSettings } from './settings.js';

export { WebRtcService, type OfferAnswer, type WebRtcDeps } from './service.js';
export { webRtcSettings, WebRtcSettingsError, type WebRtcSettings } from './settings.js';
export { RecordingRetention, expireWebRtcRecordings } from './retention.js';
export { WEBRTC_MODES, isWebRtcMode } from './repository.js';

export interface WebRtcOptions {
  config: Config;
  db: Db;
  log: Logger;
  /** The template agent telephony uses (shared: one VAD model, one set of clients). */
  flowAgent: CallAgent;
  /** The AI services, when configured: WEBRTC_STREAM's agent is built from their STT, TTS and VAD. */
  services: VoiceServices | undefined;
  notReady?: string;
  saveRecording(room: string, wav: Buffer): Promise<string>;
  env?: NodeJS.ProcessEnv;
}

export function createWebRtc(options: WebRtcOptions): WebRtcService {
  return new WebRtcService({
    db: options.db,
    log: options.log,
    settings: { ...webRtcSettings(options.env ?? process.env), leaseSeconds: options.config.scheduler.leaseSeconds },
    flowAgent: options.flowAgent,
    streamAgent: options.services ? new StreamAgent({ services: options.services }) : undefined,
    notReady: options.notReady,
    saveRecording: options.saveRecording,
    onFinished: queueFinishNotifications(options.config.serviceCallbackUrl),
  });
}

/** Mounts the signalling routes and tts-speak. */
export function registerWebRtc(app: App, webrtc: WebRtcService): void {
  registerWebRtcRoutes(app, webrtc);
}

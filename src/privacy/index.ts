/**
 * Privacy: a person's data on request (subject access, erasure) and by age (retention of
 * recordings and transcripts). The feature's only door. docs/compliance.md describes it.
 */
import type { Db } from '../db/index.js';
import type { App } from '../http/index.js';
import type { OnFinished } from '../lifecycle/index.js';
import type { Logger } from '../lib/logger.js';
import type { RecordingStore } from '../recordings/index.js';
import { RetentionSettings } from './retention.js';
import { registerPrivacyRoutes } from './routes.js';
import { PrivacyService } from './service.js';

export { RetentionJob, sweepRetention, type RetentionJobOptions } from './retention.js';

export function registerPrivacy(app: App, deps: { db: Db; recordings: RecordingStore; onFinished: OnFinished }): void {
  registerPrivacyRoutes(app, new PrivacyService(deps.db, deps.recordings, deps.onFinished, app.log as Logger), new RetentionSettings(deps.db));
}

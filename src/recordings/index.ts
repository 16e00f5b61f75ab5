/**
 * Call recordings: Dialer records every call itself and stores the WAV here, locally or in S3;
 * clients download it through the API (GET /leads/recording/{call_sid}). The module's only door.
 */
import { LocalRecordingStore } from './local.js';
import { S3RecordingStore } from './s3.js';
import type { RecordingsConfig } from './config.js';
import type { RecordingStore } from './store.js';

export { recordingsConfigFromEnv, RecordingsConfigError, type RecordingsCloudConfig, type RecordingsConfig } from './config.js';
export { InvalidCallSidError, isSafeCallSid, RECORDING_CONTENT_TYPE, type ByteRange, type OpenedRecording, type RecordingStore } from './store.js';
export { LocalRecordingStore } from './local.js';
export { parseRangeHeader, resolveRange, type RequestedRange } from './range.js';
export { S3RecordingStore } from './s3.js';

/**
 * The store the configuration asks for. `publicUrl` is the API's public base including its prefix
 * (config.publicUrl + API_PREFIX): recording URLs point at the API's download route.
 */
export function createRecordingStore(config: RecordingsConfig, publicUrl: string): RecordingStore {
  return config.cloud ? new S3RecordingStore(config.cloud, publicUrl) : new LocalRecordingStore(config.dir, publicUrl);
}

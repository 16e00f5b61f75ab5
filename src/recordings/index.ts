/**
 * Call recordings: Dialer records every call itself and stores the WAV here, locally or in S3;
 * clients download it through the API (GET /leads/recording/{call_sid}). The module's only door.
 */
import { LocalRecordingStore } from './local.js';
import { S3RecordingStore } from './s3.js';
import { SwitchedRecordingStore } from './switched.js';
import type { RecordingsConfig } from '../config/recordings.js';
import type { RecordingStore } from './store.js';

export { InvalidCallSidError, isSafeCallSid, RECORDING_CONTENT_TYPE, type ByteRange, type OpenedRecording, type RecordingStore } from './store.js';
export { LocalRecordingStore } from './local.js';
export { parseRangeHeader, resolveRange, type RequestedRange } from './range.js';
export { S3RecordingStore } from './s3.js';
export { SwitchedRecordingStore } from './switched.js';

/**
 * The store the configuration asks for. `publicUrl` is the API's public base including its prefix
 * (config.publicUrl + API_PREFIX): recording URLs point at the API's download route.
 */
export function createRecordingStore(config: RecordingsConfig, publicUrl: string, useCloud?: () => Promise<boolean>): RecordingStore {
  if (!config.cloud) return new LocalRecordingStore(config.dir, publicUrl);
  const cloud = new S3RecordingStore(config.cloud, publicUrl);
  // With a switch (the feature flag), each recording goes where the switch says when it is saved.
  return useCloud ? new SwitchedRecordingStore(new LocalRecordingStore(config.dir, publicUrl), cloud, useCloud) : cloud;
}

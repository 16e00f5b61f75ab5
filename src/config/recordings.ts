/**
 * Where call recordings live: a local directory, or an S3 bucket (or an S3-compatible store) when
 * UPLOAD_VOICE_AGENT_CALL_RECORDINGS_TO_CLOUD=true.
 */
import path from 'node:path';
import { ConfigError, text, type Env } from './env.js';

export interface RecordingsCloudConfig {
  bucket: string;
  region: string;
  /** An S3-compatible endpoint (MinIO, R2, …); unset for AWS S3 itself. */
  endpoint?: string;
  /** Path-style URLs (`endpoint/bucket/key`), which S3-compatible stores generally need. */
  forcePathStyle: boolean;
  /** Unset: the AWS SDK's default credential chain (environment, profile, instance role). */
  accessKeyId?: string;
  secretAccessKey?: string;
  /** Prepended to every object key, e.g. `recordings/`. */
  prefix: string;
}

export interface RecordingsConfig {
  /** Local directory of recordings (used when `cloud` is unset). */
  dir: string;
  cloud?: RecordingsCloudConfig;
}

function flag(env: Env, name: string): boolean {
  const value = text(env, name)?.toLowerCase();
  if (value === undefined || value === 'false' || value === '0' || value === 'no') return false;
  if (value === 'true' || value === '1' || value === 'yes') return true;
  throw new ConfigError(`${name} must be true or false, not "${env[name]}"`);
}

/**
 * DIALER_RECORDINGS_DIR (default `<dataDir>/recordings`); UPLOAD_VOICE_AGENT_CALL_RECORDINGS_TO_CLOUD=true
 * with RECORDINGS_S3_BUCKET (required then), RECORDINGS_S3_REGION (us-east-1), RECORDINGS_S3_ENDPOINT
 * (optional; implies path-style), RECORDINGS_S3_PREFIX (`recordings/`), AWS_ACCESS_KEY_ID and
 * AWS_SECRET_ACCESS_KEY (both or neither; neither means the SDK's default chain).
 */
export function recordingsConfigFromEnv(env: Env, dataDir: string): RecordingsConfig {
  const config: RecordingsConfig = { dir: path.resolve(text(env, 'DIALER_RECORDINGS_DIR') ?? path.join(dataDir, 'recordings')) };
  // The bucket is set up whenever it is named, so the upload-recordings-to-cloud feature flag can
  // switch uploads on at run time; UPLOAD_VOICE_AGENT_CALL_RECORDINGS_TO_CLOUD is that flag's default.
  const bucket = text(env, 'RECORDINGS_S3_BUCKET');
  if (!flag(env, 'UPLOAD_VOICE_AGENT_CALL_RECORDINGS_TO_CLOUD') && !bucket) return config;
  if (!bucket) throw new ConfigError('UPLOAD_VOICE_AGENT_CALL_RECORDINGS_TO_CLOUD=true needs RECORDINGS_S3_BUCKET');
  const endpoint = text(env, 'RECORDINGS_S3_ENDPOINT');
  if (endpoint !== undefined) {
    let url: URL;
    try {
      url = new URL(endpoint);
    } catch {
      throw new ConfigError(`RECORDINGS_S3_ENDPOINT must be a URL, not "${endpoint}"`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError('RECORDINGS_S3_ENDPOINT must be an http(s) URL');
  }
  const accessKeyId = text(env, 'AWS_ACCESS_KEY_ID');
  const secretAccessKey = text(env, 'AWS_SECRET_ACCESS_KEY');
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new ConfigError('Set both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or neither (the AWS default credential chain)');
  }
  let prefix = env.RECORDINGS_S3_PREFIX?.trim() ?? 'recordings/';
  prefix = prefix.replace(/^\/+/, '');
  if (prefix !== '' && !prefix.endsWith('/')) prefix += '/';
  config.cloud = {
    bucket,
    region: text(env, 'RECORDINGS_S3_REGION') ?? 'us-east-1',
    forcePathStyle: endpoint !== undefined,
    prefix,
    ...(endpoint !== undefined ? { endpoint } : {}),
    ...(accessKeyId !== undefined ? { accessKeyId, secretAccessKey } : {}),
  };
  return config;
}

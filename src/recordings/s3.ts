/**
 * Recordings in an S3 bucket (or an S3-compatible store): PutObject to save, GetObject (with a
 * Range) to read, HeadObject for the size when a range starts past the end.
 */
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import type { RecordingsCloudConfig } from '../config/recordings.js';
import { isSafeCallSid, recordingFileName, recordingUrl, RECORDING_CONTENT_TYPE, type ByteRange, type OpenedRecording, type RecordingStore } from './store.js';

function status(err: unknown): number | undefined {
  if (err instanceof S3ServiceException) return err.$metadata?.httpStatusCode;
  return (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
}

function missing(err: unknown): boolean {
  const name = (err as { name?: string })?.name;
  return status(err) === 404 || name === 'NoSuchKey' || name === 'NotFound';
}

/** Total size from `Content-Range: bytes 0-99/12345`. */
function totalFromContentRange(value: string | undefined): number | undefined {
  const m = /\/(\d+)\s*$/.exec(value ?? '');
  return m ? Number(m[1]) : undefined;
}

export class S3RecordingStore implements RecordingStore {
  private readonly client: S3Client;

  constructor(
    private readonly config: RecordingsCloudConfig,
    private readonly publicUrl: string,
    client?: S3Client,
  ) {
    this.client =
      client ??
      new S3Client({
        region: config.region,
        ...(config.endpoint ? { endpoint: config.endpoint } : {}),
        forcePathStyle: config.forcePathStyle,
        ...(config.accessKeyId && config.secretAccessKey ? { credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey } } : {}),
        // Checksums only where S3 requires them: S3-compatible stores often reject the newer
        // default (CRC32 trailers on every upload).
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      });
  }

  private key(callSid: string): string {
    return `${this.config.prefix}${recordingFileName(callSid)}`;
  }

  async save(callSid: string, wav: Buffer): Promise<string> {
    await this.client.send(
      new PutObjectCommand({ Bucket: this.config.bucket, Key: this.key(callSid), Body: wav, ContentType: RECORDING_CONTENT_TYPE, ContentLength: wav.length }),
    );
    return recordingUrl(this.publicUrl, callSid);
  }

  async delete(callSid: string): Promise<boolean> {
    if (!isSafeCallSid(callSid)) return false;
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.config.bucket, Key: this.key(callSid) }));
    } catch (err) {
      if (missing(err)) return false;
      throw err;
    }
    await this.client.send(new DeleteObjectCommand({ Bucket: this.config.bucket, Key: this.key(callSid) }));
    return true;
  }

  async open(callSid: string, range?: ByteRange): Promise<OpenedRecording | undefined> {
    if (!isSafeCallSid(callSid)) return undefined;
    const Key = this.key(callSid);
    try {
      const res = await this.client.send(
        new GetObjectCommand({ Bucket: this.config.bucket, Key, ...(range ? { Range: `bytes=${range.start}-${range.end ?? ''}` } : {}) }),
      );
      const size = (range ? totalFromContentRange(res.ContentRange) : undefined) ?? res.ContentLength ?? 0;
      return { size, contentType: RECORDING_CONTENT_TYPE, body: (res.Body as Readable | undefined) ?? Buffer.alloc(0) };
    } catch (err) {
      if (missing(err)) return undefined;
      // 416 InvalidRange: the range starts past the end. Report the size with an empty body.
      if (range && status(err) === 416) {
        try {
          const head = await this.client.send(new HeadObjectCommand({ Bucket: this.config.bucket, Key }));
          return { size: head.ContentLength ?? 0, contentType: RECORDING_CONTENT_TYPE, body: Buffer.alloc(0) };
        } catch (headErr) {
          if (missing(headErr)) return undefined;
          throw headErr;
        }
      }
      throw err;
    }
  }
}

/** What every recordings backend does, and the rules they share. */

/** A byte range, both ends inclusive (as in HTTP's `Range: bytes=start-end`); no end means to the end. */
export interface ByteRange {
  start: number;
  end?: number;
}

export interface OpenedRecording {
  /** Size of the whole recording in bytes (not of the range). */
  size: number;
  contentType: string;
  /** The requested bytes: all of them, or the range (its end clamped to the last byte). Empty when the range starts at or past the end. */
  body: NodeJS.ReadableStream | Buffer;
}

export interface RecordingStore {
  /** Stores a finished call's WAV; resolves with the recording_url to put on the lead. */
  save(callSid: string, wav: Buffer): Promise<string>;
  /**
   * Opens a recording, or a range of it. Undefined when there is none (or the SID is not a valid
   * name). A range starting at or past the end gives the size and an empty body, so callers can
   * answer 416 (or learn the size for a suffix range) without reading anything.
   */
  open(callSid: string, range?: ByteRange): Promise<OpenedRecording | undefined>;
  /** Deletes a recording (retention); resolves false when there was none. */
  delete(callSid: string): Promise<boolean>;
}

export const RECORDING_CONTENT_TYPE = 'audio/wav';

/** A call SID that cannot be a recording's name (path traversal, odd characters). */
export class InvalidCallSidError extends Error {
  override name = 'InvalidCallSidError';
}

const SAFE = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,199}$/;

/** Whether the SID is usable as a file name / object key: `[A-Za-z0-9_.-]`, no leading dot, at most 200 characters. */
export function isSafeCallSid(callSid: string): boolean {
  return SAFE.test(callSid);
}

export function recordingFileName(callSid: string): string {
  if (!isSafeCallSid(callSid)) throw new InvalidCallSidError(`"${callSid.slice(0, 60)}" cannot name a recording: only letters, digits, _ . - and no leading dot`);
  return `${callSid}.wav`;
}

/** The URL clients fetch a recording from: the API's download route, in every storage mode. */
export function recordingUrl(publicUrl: string, callSid: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/leads/recording/${encodeURIComponent(callSid)}`;
}

/** Recordings as files in one directory, written atomically (temporary file, then rename). */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { isSafeCallSid, recordingFileName, recordingUrl, RECORDING_CONTENT_TYPE, type ByteRange, type OpenedRecording, type RecordingStore } from './store.js';

export class LocalRecordingStore implements RecordingStore {
  constructor(
    readonly dir: string,
    private readonly publicUrl: string,
  ) {}

  async save(callSid: string, wav: Buffer): Promise<string> {
    const name = recordingFileName(callSid);
    await fsp.mkdir(this.dir, { recursive: true });
    // Temporary names start with a dot, which no recording name may: they never collide or get served.
    const tmp = path.join(this.dir, `.${name}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      await fsp.writeFile(tmp, wav, { flag: 'wx' });
      await fsp.rename(tmp, path.join(this.dir, name));
    } catch (err) {
      await fsp.rm(tmp, { force: true }).catch(() => undefined);
      throw err;
    }
    return recordingUrl(this.publicUrl, callSid);
  }

  async delete(callSid: string): Promise<boolean> {
    if (!isSafeCallSid(callSid)) return false;
    try {
      await fsp.unlink(path.join(this.dir, recordingFileName(callSid)));
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw err;
    }
  }

  async open(callSid: string, range?: ByteRange): Promise<OpenedRecording | undefined> {
    if (!isSafeCallSid(callSid)) return undefined;
    const file = path.join(this.dir, recordingFileName(callSid));
    let handle: fsp.FileHandle;
    try {
      handle = await fsp.open(file, fs.constants.O_RDONLY);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    // One handle for the size and the read, so a concurrent replace (rename) cannot mix two files.
    try {
      const stat = await handle.stat();
      if (!stat.isFile()) {
        await handle.close();
        return undefined;
      }
      const size = stat.size;
      const start = range?.start ?? 0;
      if (start >= size) {
        await handle.close();
        return { size, contentType: RECORDING_CONTENT_TYPE, body: Buffer.alloc(0) };
      }
      const end = Math.max(start, Math.min(range?.end ?? size - 1, size - 1));
      const body = handle.createReadStream({ start, end, autoClose: true });
      return { size, contentType: RECORDING_CONTENT_TYPE, body };
    } catch (err) {
      await handle.close().catch(() => undefined);
      throw err;
    }
  }
}

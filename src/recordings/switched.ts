/**
 * Local and cloud storage side by side, the cloud chosen per recording by a switch read at save
 * time (the `upload-recordings-to-cloud` feature flag), so flipping it needs no restart. Reads look
 * in the local directory first, then in the bucket: a recording is found wherever it was saved.
 */
import type { ByteRange, OpenedRecording, RecordingStore } from './store.js';

export class SwitchedRecordingStore implements RecordingStore {
  constructor(
    private readonly local: RecordingStore,
    private readonly cloud: RecordingStore,
    private readonly useCloud: () => Promise<boolean>,
  ) {}

  async save(callSid: string, wav: Buffer): Promise<string> {
    return (await this.useCloud()) ? this.cloud.save(callSid, wav) : this.local.save(callSid, wav);
  }

  async open(callSid: string, range?: ByteRange): Promise<OpenedRecording | undefined> {
    return (await this.local.open(callSid, range)) ?? this.cloud.open(callSid, range);
  }

  /** Deletes the recording wherever it is (retention); true when one was found. */
  async delete(callSid: string): Promise<boolean> {
    const [local, cloud] = await Promise.all([this.local.delete(callSid), this.cloud.delete(callSid)]);
    return local || cloud;
  }
}

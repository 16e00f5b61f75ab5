/**
 * The caller's audio against the clock: a frame handled more than one frame (plus 20 ms) behind its
 * time is late. Its time is the transport's timestamp when it gives one (relative to the first
 * frame's), else the steady pace of the audio received so far. What a call reports as
 * `media_frames` and `media_frames_late` in its trace scores, whichever agent talks.
 */
export class MediaClock {
  frames = 0;
  late = 0;
  private firstFrameAt: number | undefined;
  private firstTimestampMs: number | undefined;
  private mediaMs = 0;

  constructor(private readonly sampleRateHz: number) {}

  /** A frame of `samples` samples arrived now, stamped `timestampMs` by the transport when it stamps them. */
  arrived(samples: number, timestampMs?: number, now = performance.now()): void {
    this.firstFrameAt ??= now;
    if (timestampMs !== undefined) this.firstTimestampMs ??= timestampMs;
    const frameMs = (samples * 1000) / this.sampleRateHz;
    const dueMs = timestampMs !== undefined && this.firstTimestampMs !== undefined ? timestampMs - this.firstTimestampMs : this.mediaMs;
    if (now - (this.firstFrameAt + dueMs) > frameMs + 20) this.late++;
    this.mediaMs += frameMs;
    this.frames++;
  }
}

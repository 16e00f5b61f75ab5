/**
 * Processors in a line, frames moving both ways. Each processor handles its downstream frames one at
 * a time, in order, except system frames: those are handled at once, even while a slower frame is
 * in hand (an interruption must stop a TTS request that is still streaming). Upstream frames are
 * signals and are handled at once too. An interruption also drops the
 * data frames waiting in every queue it passes through.
 */
import { isData, isSystem, type Direction, type Frame } from './frames.js';

export abstract class FrameProcessor {
  /** Set by the pipeline. */
  next: FrameProcessor | undefined;
  prev: FrameProcessor | undefined;
  /** Where frames leaving the ends of the pipeline go. */
  sink: ((frame: Frame, direction: Direction) => void) | undefined;
  onError: ((err: unknown, processor: FrameProcessor) => void) | undefined;

  private readonly queue: Array<{ frame: Frame; direction: Direction }> = [];
  private draining = false;
  /** Aborted on interruption and end: work in hand for data frames should watch it. */
  protected turnSignal = new AbortController();

  abstract readonly name: string;

  /** Handles one frame. Push frames on with `push`. Frames a processor does not know it should pass on. */
  protected abstract process(frame: Frame, direction: Direction): void | Promise<void>;

  /** Called by the neighbour: queue the frame, or handle a system frame now. */
  receive(frame: Frame, direction: Direction): void {
    if (isSystem(frame)) {
      if (frame.kind === 'interruption' || frame.kind === 'end') {
        // Drop queued data; control frames keep their place.
        for (let i = this.queue.length - 1; i >= 0; i--) if (isData(this.queue[i]!.frame)) this.queue.splice(i, 1);
        this.turnSignal.abort();
        this.turnSignal = new AbortController();
      } else if (frame.kind === 'turn_cancel') {
        // Only the cancelled turn's data goes (a processor with work of it in hand stops that itself).
        for (let i = this.queue.length - 1; i >= 0; i--) {
          const queued = this.queue[i]!.frame;
          if (isData(queued) && 'turn' in queued && queued.turn === frame.turn) this.queue.splice(i, 1);
        }
      }
      this.handle(frame, direction);
      return;
    }
    // Upstream frames are signals (speaking started, what was heard): they never wait behind work.
    if (direction === 'up') {
      this.handle(frame, direction);
      return;
    }
    this.queue.push({ frame, direction });
    if (!this.draining) void this.drain();
  }

  private handle(frame: Frame, direction: Direction): void | Promise<void> {
    try {
      const result = this.process(frame, direction);
      if (result) return result.catch((err: unknown) => this.fail(err));
    } catch (err) {
      this.fail(err);
    }
  }

  private fail(err: unknown): void {
    if (this.onError) this.onError(err, this);
    else throw err;
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queue.length > 0) {
        const { frame, direction } = this.queue.shift()!;
        const pending = this.handle(frame, direction);
        if (pending) await pending;
      }
    } finally {
      this.draining = false;
    }
  }

  /** Sends a frame on in `direction` (downstream by default). */
  protected push(frame: Frame, direction: Direction = 'down'): void {
    const target = direction === 'down' ? this.next : this.prev;
    if (target) target.receive(frame, direction);
    else this.sink?.(frame, direction);
  }
}

/** A processor that passes everything on: handy as a base for taps and in tests. */
export class PassThrough extends FrameProcessor {
  readonly name: string = 'pass';
  protected process(frame: Frame, direction: Direction): void {
    this.push(frame, direction);
  }
}

export class Pipeline {
  constructor(
    readonly processors: FrameProcessor[],
    options: { sink?: (frame: Frame, direction: Direction) => void; onError?: (err: unknown, processor: FrameProcessor) => void } = {},
  ) {
    processors.forEach((p, i) => {
      p.prev = processors[i - 1];
      p.next = processors[i + 1];
      p.sink = options.sink;
      p.onError = options.onError;
    });
  }

  /** Feeds a frame in at the top (downstream) or at the bottom (upstream). */
  send(frame: Frame, direction: Direction = 'down'): void {
    const first = direction === 'down' ? this.processors[0] : this.processors[this.processors.length - 1];
    first?.receive(frame, direction);
  }

  /** Feeds a frame to one processor (e.g. the transport's input in the middle of the line). */
  sendTo(processor: FrameProcessor, frame: Frame, direction: Direction = 'down'): void {
    processor.receive(frame, direction);
  }
}

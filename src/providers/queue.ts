/** A one-reader queue read as an async iterator: `put` items, `end` it (with an error to throw, or none). */
export class EventQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private wake: (() => void) | undefined;
  private finished = false;
  private failure: unknown;

  put(item: T): void {
    this.items.push(item);
    this.wake?.();
  }

  end(failure?: unknown): void {
    if (this.finished) return;
    this.finished = true;
    this.failure = failure;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      while (this.items.length) yield this.items.shift()!;
      if (this.finished) {
        if (this.failure) throw this.failure;
        return;
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}

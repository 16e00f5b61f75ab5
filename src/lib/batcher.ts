/**
 * Group commit: items submitted while a batch is being written are written together by the next
 * one. A busy process writes many items per statement; a quiet one writes each at once, with no
 * added latency. `write` answers one result per item, in order; when it throws, every item of
 * that batch is rejected with the error, unless `onBatchError` handles the batch itself.
 * With `sameTurn`, the first item waits for the end of the event loop's turn, so items submitted
 * in the same turn (the calls of one claim that end together) go in one batch, not the first
 * alone and the rest in the next.
 */
export class Batcher<T, R> {
  private queue: { item: T; resolve: (r: R) => void; reject: (err: unknown) => void }[] = [];
  private flushing = false;

  constructor(
    private readonly write: (items: T[]) => Promise<R[]>,
    private readonly options: { maxBatch?: number; sameTurn?: boolean; onBatchError?: (items: T[], err: unknown) => Promise<(R | Error)[]> } = {},
  ) {}

  submit(item: T): Promise<R> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.flushing) return;
      this.flushing = true;
      if (this.options.sameTurn) setImmediate(() => void this.flush());
      else void this.flush();
    });
  }

  private async flush(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.options.maxBatch ?? 500);
        const items = batch.map((b) => b.item);
        try {
          const results = await this.write(items);
          batch.forEach((b, i) => b.resolve(results[i]!));
        } catch (err) {
          if (!this.options.onBatchError || batch.length === 1) {
            for (const b of batch) b.reject(err);
            continue;
          }
          const results = await this.options.onBatchError(items, err).catch((e: unknown) => items.map(() => e as Error));
          batch.forEach((b, i) => (results[i] instanceof Error ? b.reject(results[i]) : b.resolve(results[i] as R)));
        }
      }
    } finally {
      this.flushing = false;
    }
  }
}

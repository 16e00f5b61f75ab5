/**
 * One clock for every call's agent audio. A TTS service hands over speech much faster than it is
 * played; turned into media frames at once, a hundred calls' greetings would all be resampled and
 * sent in the same second, while the provider only plays them over the next few. Each call instead
 * keeps a little ahead of its own playout and waits on this shared clock for the rest: the work is
 * spread over the time the audio takes to play, and one timer serves every call (not one per call).
 */

/** How often the clock looks for calls whose wait is over. */
const TICK_MS = 10;

class Pacer {
  private waiting: Array<{ at: number; resolve: () => void }> = [];
  private timer: NodeJS.Timeout | undefined;

  /** Resolves at `at` (performance.now() time), or at once if `signal` is aborted then or later. */
  until(at: number, signal?: AbortSignal): Promise<void> {
    if (at <= performance.now() || signal?.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const entry = { at, resolve };
      const onAbort = () => {
        this.waiting = this.waiting.filter((w) => w !== entry);
        resolve();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      entry.resolve = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      this.waiting.push(entry);
      if (!this.timer) {
        this.timer = setInterval(() => this.tick(), TICK_MS);
      }
    });
  }

  private tick(): void {
    const now = performance.now();
    const due = this.waiting.filter((w) => w.at <= now);
    if (due.length > 0) this.waiting = this.waiting.filter((w) => w.at > now);
    if (this.waiting.length === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
    for (const w of due) w.resolve();
  }
}

export const pacer = new Pacer();

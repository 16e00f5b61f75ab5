/**
 * A call's media stream being replaced by the provider: Twilio plays keys by giving the live call
 * new instructions, which closes the stream and opens a new one that carries on the conversation.
 * While a replacement is awaited, the old stream's end is not the end of the call's media.
 */

export class StreamReplacement {
  private pending: (() => void) | undefined;

  /** Whether a replacement is awaited now. */
  get awaited(): boolean {
    return this.pending !== undefined;
  }

  /** The next stream started (or the wait is called off): the awaiting `expect` resolves. */
  settle(): void {
    const done = this.pending;
    this.pending = undefined;
    done?.();
  }

  /**
   * Runs `replace` (the request that makes the provider replace the stream) and resolves true once
   * `settle` says the next stream started, false when none came in `timeoutMs`. Throws what
   * `replace` throws (nothing is awaited then).
   */
  async expect(replace: () => Promise<void>, timeoutMs: number): Promise<boolean> {
    let came!: () => void;
    const next = new Promise<void>((r) => (came = r));
    this.pending = came;
    try {
      await replace();
    } catch (err) {
      if (this.pending === came) this.pending = undefined;
      throw err;
    }
    let timer: NodeJS.Timeout | undefined;
    const arrived = await Promise.race([next.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), timeoutMs)))]);
    clearTimeout(timer);
    if (!arrived && this.pending === came) this.pending = undefined;
    return arrived;
  }
}

/**
 * A speech-to-text with a second service behind it (STT_FALLBACK): the caller is heard through the
 * primary; when its stream fails with a retryable error (it refused the connection with a 429 or a
 * 5xx, the socket broke, the stream ended by itself mid-call) it is opened once more, and when that
 * fails too the fallback service hears the caller from then on. A failure that no other try would
 * cure (a refused key, a malformed request) ends the stream as before: it is a configuration error
 * to fix, not an outage to ride out.
 *
 * The caller's words are not lost on the way: the audio the service has not yet given words for
 * (since its last final, up to REPLAY_SECONDS) is kept and sent again to the stream that takes
 * over, with the segment's end where the VAD had put it. The switch is announced on the stream as
 * a `fallback` event (the call records it) and told to `onFallback` (the log).
 */
import { PcmRing } from '../../lib/pcm-buffers.js';
import { Resampler } from '../../lib/audio.js';
import { providerErrors } from '../../metrics/index.js';
import { ServiceError, serviceRate, type STT, type SttEvent, type SttOpenOptions, type SttStream } from '../../voice/services.js';
import { EventQueue } from '../queue.js';
import { DEFAULT_RETRY, type RetryPolicy } from '../resilience.js';

/** Audio kept for a stream that takes over: what a turn of the caller's lasts, with room. */
export const REPLAY_SECONDS = 10;

export interface SttFallbackNotice {
  from: string;
  to: string;
  reason: string;
  err: unknown;
}

export interface FallbackSttOptions {
  /** Tries of each service per failure, the first included (the backoff doubles from `baseDelayMs`). */
  retry?: RetryPolicy;
  /** Told of each switch to the fallback (to log it). */
  onFallback?: (notice: SttFallbackNotice) => void;
}

const retryable = (err: unknown) => err instanceof ServiceError && err.retryable;

export class FallbackSTT implements STT {
  readonly label: string;
  /** The primary's rates that the fallback takes too (the fallback resamples when they share none). */
  readonly sampleRatesHz: readonly number[];
  /** The primary's: the turn-taking is set up for the service a call starts with. */
  readonly interimResults: boolean;

  constructor(
    readonly primary: STT,
    readonly fallback: STT,
    private readonly options: FallbackSttOptions = {},
  ) {
    this.label = `fallback(${primary.label}, ${fallback.label})`;
    const shared = primary.sampleRatesHz.filter((r) => fallback.sampleRatesHz.includes(r));
    this.sampleRatesHz = shared.length ? shared : primary.sampleRatesHz;
    this.interimResults = primary.interimResults;
  }

  open(options: SttOpenOptions): SttStream {
    return new FallbackStream(this.primary, this.fallback, options, this.options.retry ?? DEFAULT_RETRY, this.options.onFallback);
  }
}

class FallbackStream implements SttStream {
  private readonly queue = new EventQueue<SttEvent>();
  readonly events: AsyncIterable<SttEvent> = this.queue;
  /** Every inner stream ends with this one (close() or the caller's signal). */
  private readonly inner = new AbortController();
  private readonly unheard: PcmRing;
  /** Samples written so far; `heardUpTo` and `segmentEndedAt` count in them. */
  private written = 0;
  /** Audio before this sample has its words (or was a segment the service closed). */
  private heardUpTo = 0;
  /** Where the VAD last ended a segment whose words have not come yet. */
  private segmentEndedAt: number | undefined;
  /** The stream hearing the caller now, and the reading of its events (none between tries). */
  private current: { stream: SttStream; resampler: Resampler | undefined; reading: Promise<void> } | undefined;
  private onFallback = false;
  /** Tries of the current service since it last gave words. */
  private tries = 0;
  private closing = false;

  constructor(
    private readonly primary: STT,
    private readonly fallback: STT,
    private readonly options: SttOpenOptions,
    private readonly policy: RetryPolicy,
    private readonly notify: ((notice: SttFallbackNotice) => void) | undefined,
  ) {
    this.unheard = new PcmRing(options.sampleRateHz * REPLAY_SECONDS);
    options.signal.addEventListener('abort', () => void this.close(), { once: true });
    this.start(primary);
  }

  write(pcm: Int16Array): void {
    if (this.closing) return;
    this.unheard.append(pcm);
    this.written += pcm.length;
    this.send(pcm);
  }

  endSegment(): void {
    if (this.closing) return;
    this.segmentEndedAt = this.written;
    this.current?.stream.endSegment();
  }

  /** Closes the service's stream; the words it still gives while it closes come through first. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    const c = this.current;
    if (c) {
      await c.stream.close().catch(() => undefined);
      await c.reading;
    }
    this.inner.abort();
    this.queue.end();
  }

  private send(pcm: Int16Array): void {
    const c = this.current;
    if (!c) return;
    c.stream.write(c.resampler ? c.resampler.process(pcm) : pcm);
  }

  /** Opens `stt`'s stream and gives it the audio still without words, the segment's end where it was. */
  private start(stt: STT): void {
    const rateHz = serviceRate(stt.sampleRatesHz, this.options.sampleRateHz);
    const stream = stt.open({ ...this.options, signal: this.inner.signal, sampleRateHz: rateHz });
    const current = { stream, resampler: rateHz === this.options.sampleRateHz ? undefined : new Resampler(this.options.sampleRateHz, rateHz), reading: Promise.resolve() };
    this.current = current;
    const pending = Math.min(this.written - this.heardUpTo, this.unheard.length);
    if (pending > 0) {
      const from = this.written - pending;
      const ended = this.segmentEndedAt !== undefined && this.segmentEndedAt > from ? this.segmentEndedAt : undefined;
      if (ended === undefined) this.send(this.unheard.last(pending));
      else {
        this.send(this.unheard.last(ended - from, this.written - ended));
        stream.endSegment();
        if (this.written > ended) this.send(this.unheard.last(this.written - ended));
      }
    }
    current.reading = this.read(stt, stream);
  }

  private async read(stt: STT, stream: SttStream): Promise<void> {
    let failure: unknown;
    try {
      for await (const event of stream.events) {
        if (stream !== this.current?.stream) return;
        if (event.type === 'final' || event.type === 'utterance_end') {
          // The words of the audio up to the segment's end are in; without one, a service that
          // ended the utterance by itself has heard all so far. (An utterance's end often comes
          // twice, a final then an utterance_end: the second must not take the next segment's audio.)
          if (this.segmentEndedAt !== undefined) this.heardUpTo = this.segmentEndedAt;
          else if (event.type === 'final') this.heardUpTo = this.written;
          this.segmentEndedAt = undefined;
          this.tries = 0;
        }
        if (event.type !== 'fallback') this.queue.put(event);
      }
      if (this.closing || stream !== this.current?.stream) return;
      failure = new ServiceError(stt.label, 'ended the stream mid-call', true);
    } catch (err) {
      failure = err;
    }
    if (this.closing || stream !== this.current?.stream) return;
    providerErrors.inc({ service: 'stt', provider: stt.label, retryable: String(retryable(failure)) });
    this.current = undefined;
    void stream.close().catch(() => undefined);
    if (!retryable(failure)) return this.queue.end(failure);
    this.tries++;
    if (this.tries < this.policy.attempts) {
      await pause(this.policy.baseDelayMs * 2 ** (this.tries - 1), this.inner.signal);
      if (!this.closing) this.start(stt);
      return;
    }
    if (this.onFallback) return this.queue.end(failure);
    this.onFallback = true;
    this.tries = 0;
    const reason = failure instanceof Error ? failure.message : String(failure);
    this.queue.put({ type: 'fallback', from: this.primary.label, to: this.fallback.label, reason });
    this.notify?.({ from: this.primary.label, to: this.fallback.label, reason, err: failure });
    this.start(this.fallback);
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
}

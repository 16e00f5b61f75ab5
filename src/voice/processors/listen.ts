/**
 * The caller's side: voice activity and speech-to-text (turn boundaries and barge-in: turns.ts).
 */
import { PcmRing } from '../../lib/pcm-buffers.js';
import { Resampler } from '../resampler.js';
import { frame, type Direction, type Frame } from '../frames.js';
import { FrameProcessor } from '../pipeline.js';
import { serviceRate, VAD_DEFAULTS, type STT, type SttStream, type VAD, type VadOptions, type VadStream } from '../services.js';
import { prosodyOf } from '../turns/prosody.js';

/** Audio kept for the prosody of a stretch's end (its last 400 ms, behind the silence that ended it). */
const TAIL_MS = 3000;
const PROSODY_MS = 400;

/**
 * Runs the VAD on caller audio; says when the caller starts and stops speaking, with when it really
 * started and ended (the VAD is sure of either a little later) and the prosody of the end.
 * Whether speech over the agent interrupts it is the turn-taking's decision (processors/turns.ts).
 */
export class VadProcessor extends FrameProcessor {
  readonly name = 'vad';
  private stream: VadStream | undefined;
  private resampler: Resampler | undefined;
  private userSpeaking = false;
  private chain: Promise<void> = Promise.resolve();
  /** Ms of audio given to the VAD so far (the VAD's own clock). */
  private fedMs = 0;
  private tail: PcmRing;
  /** Audio handed on with the end of each stretch of speech (an end-of-turn model's), ms; 0: none. */
  private audioMs = 0;
  private options: Partial<VadOptions>;
  /** The rate the VAD hears at, and passes the audio on at: the transport's when the VAD takes it. */
  readonly rateHz: number;

  /** `inputRateHz`: the caller audio's rate (the transport's). */
  constructor(private readonly vad: VAD, options: Partial<VadOptions> = {}, inputRateHz = vad.sampleRatesHz[0]!) {
    super();
    this.options = options;
    this.rateHz = serviceRate(vad.sampleRatesHz, inputRateHz);
    this.tail = new PcmRing((this.rateHz * TAIL_MS) / 1000);
  }

  /** Changes the VAD's durations from now on (the node's turn-taking). */
  update(options: Partial<VadOptions>): void {
    this.options = { ...this.options, ...options };
    this.stream?.update(options);
  }

  /** Hands on the last `ms` of audio (up to the end of speech) with each end of speech, for an end-of-turn model. */
  keepAudio(ms: number): void {
    this.audioMs = ms;
    if ((this.rateHz * ms) / 1000 > this.tail.capacity) this.tail = new PcmRing((this.rateHz * ms) / 1000);
  }

  /** The end-of-speech silence for the current node (undefined: the stream's default). */
  setEndOfSpeech(ms: number | undefined): void {
    this.update({ minSilenceMs: ms ?? VAD_DEFAULTS.minSilenceMs });
  }

  /** The `ms` of audio that ended `agoMs` before the newest sample kept. */
  private recent(ms: number, agoMs: number): Int16Array {
    return this.tail.last((ms * this.rateHz) / 1000, (agoMs * this.rateHz) / 1000);
  }

  protected async process(f: Frame, direction: Direction): Promise<void> {
    if (f.kind === 'start' && direction === 'down') this.stream = await this.vad.open(this.options, this.rateHz);
    if (f.kind === 'end') this.stream?.close();
    if (f.kind === 'input_audio' && this.stream) {
      if (this.resampler?.fromHz !== f.sampleRateHz) this.resampler = new Resampler(f.sampleRateHz, this.rateHz);
      const pcm = this.resampler.process(f.pcm);
      // The audio goes on at the VAD's rate, which the STT usually takes too: resampling every frame
      // was the costliest work per call.
      this.push(pcm === f.pcm ? f : { ...f, pcm, sampleRateHz: this.rateHz }, direction);
      // VAD inference is ordered per call but does not hold up the audio on its way to the STT.
      const stream = this.stream;
      this.chain = this.chain.then(async () => {
        this.tail.append(pcm);
        const fedMs = (this.fedMs += (pcm.length * 1000) / this.rateHz);
        for (const event of await stream.push(pcm)) {
          // The VAD's clock to performance.now(): its newest audio is (about) now.
          const at = performance.now() - (fedMs - event.atMs);
          if (event.type === 'speech_start' && !this.userSpeaking) {
            this.userSpeaking = true;
            this.push(frame({ kind: 'user_started_speaking' as const, startedAt: at }));
          } else if (event.type === 'speech_end' && this.userSpeaking) {
            this.userSpeaking = false;
            const prosody = prosodyOf(this.recent(Math.min(PROSODY_MS, event.durationMs), fedMs - event.atMs), this.rateHz, event.durationMs);
            const audio = this.audioMs > 0 ? { audio: { pcm: this.recent(this.audioMs, fedMs - event.atMs), sampleRateHz: this.rateHz } } : {};
            this.push(frame({ kind: 'user_stopped_speaking' as const, endedAt: at, prosody, ...audio }));
          }
        }
      });
      await this.chain;
      return;
    }
    this.push(f, direction);
  }
}

/** The language a call's speech-to-text listens in, and the ones it is to tell apart (voice/language.ts). */
export interface HearingLanguage {
  language?: string;
  detect?: readonly string[];
}

/** The call's speech-to-text went over to its second service (STT_FALLBACK): which, and why. */
export interface SttFallback {
  /** When (ISO 8601, UTC). */
  at: string;
  from: string;
  to: string;
  reason: string;
}

/** Streams caller audio to the STT and turns its results into transcription frames. */
export class SttProcessor extends FrameProcessor {
  readonly name = 'stt';
  private stream: SttStream | undefined;
  private resampler: Resampler | undefined;
  private readonly closed = new AbortController();
  /** The rate the STT hears at: the incoming audio's when the STT takes it. */
  private readonly rateHz: number;
  private started = false;
  /** The stream that names the language of its words: it hears every declared one, a switch keeps it. */
  private detecting: SttStream | undefined;

  /** `inputRateHz`: the rate of the audio coming down (the VAD's, else the transport's). */
  constructor(
    private readonly stt: STT,
    private readonly reportError: (err: unknown) => void,
    inputRateHz = stt.sampleRatesHz[0]!,
    private hearing: HearingLanguage = {},
    private readonly onFallback?: (fallback: SttFallback) => void,
  ) {
    super();
    this.rateHz = serviceRate(stt.sampleRatesHz, inputRateHz);
  }

  /**
   * The call switched language: a new stream in it (the service is told the language when a stream
   * opens), while the old one gives what it still has of the words before and closes. A stream
   * that tells the languages apart goes on as it is.
   */
  switchLanguage(language: string): void {
    if (this.hearing.language === language) return;
    this.hearing = { ...this.hearing, language };
    if (!this.started || this.closed.signal.aborted || (this.stream && this.detecting === this.stream)) return;
    const old = this.stream;
    this.open();
    void old?.close().catch(() => undefined);
  }

  private open(): void {
    const { language, detect } = this.hearing;
    const stream = this.stt.open({ signal: this.closed.signal, sampleRateHz: this.rateHz, ...(language ? { language } : {}), ...(detect?.length ? { detect } : {}) });
    this.stream = stream;
    void this.read(stream);
  }

  protected process(f: Frame, direction: Direction): void {
    if (f.kind === 'start' && direction === 'down') {
      this.started = true;
      this.open();
    } else if (f.kind === 'end') {
      this.closed.abort();
      void this.stream?.close();
    } else if (f.kind === 'input_audio') {
      if (this.resampler?.fromHz !== f.sampleRateHz) this.resampler = new Resampler(f.sampleRateHz, this.rateHz);
      this.stream?.write(this.resampler.process(f.pcm));
      return;
    } else if (f.kind === 'user_stopped_speaking') {
      this.stream?.endSegment();
    }
    this.push(f, direction);
  }

  private async read(stream: SttStream): Promise<void> {
    try {
      for await (const event of stream.events) {
        if (event.type === 'final' && event.language) this.detecting = stream;
        if (event.type === 'final') this.push(frame({ kind: 'transcription' as const, text: event.text, final: true, ...(event.language ? { language: event.language } : {}) }));
        else if (event.type === 'interim') this.push(frame({ kind: 'transcription' as const, text: event.text, final: false }));
        else if (event.type === 'fallback') this.onFallback?.({ at: new Date().toISOString(), from: event.from, to: event.to, reason: event.reason });
        // The service is done with the utterance: an empty final says "no (more) words" (a noise).
        else this.push(frame({ kind: 'transcription' as const, text: '', final: true }));
      }
    } catch (err) {
      // A stream left behind by a switch of language is not the call's any more.
      if (!this.closed.signal.aborted && stream === this.stream) this.reportError(err);
    }
  }
}

/**
 * The caller's side every agent starts with: the VAD at the line's rate when it takes it, then the
 * STT at the VAD's. A failing STT is reported as `speech-to-text failed: ...`; a switch to the
 * second speech-to-text service (STT_FALLBACK) to `onSttFallback`.
 */
export function hearing(
  services: { vad: VAD; stt: STT },
  inputRateHz: number,
  onSttError: (message: string) => void,
  vadOptions: Partial<VadOptions> = {},
  language: HearingLanguage = {},
  onSttFallback?: (fallback: SttFallback) => void,
): { vad: VadProcessor; stt: SttProcessor } {
  const vad = new VadProcessor(services.vad, vadOptions, inputRateHz);
  const stt = new SttProcessor(services.stt, (err) => onSttError(`speech-to-text failed: ${(err as Error).message}`), vad.rateHz, language, onSttFallback);
  return { vad, stt };
}

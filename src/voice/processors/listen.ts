/**
 * The caller's side: voice activity (and barge-in), speech-to-text, and turn boundaries.
 */
import { Resampler } from '../resampler.js';
import { frame, type Direction, type Frame } from '../frames.js';
import { FrameProcessor } from '../pipeline.js';
import { serviceRate, VAD_DEFAULTS, type STT, type SttStream, type VAD, type VadOptions, type VadStream } from '../services.js';

/** Runs the VAD on caller audio; says when the caller starts and stops, and interrupts the agent. */
export class VadProcessor extends FrameProcessor {
  readonly name = 'vad';
  private stream: VadStream | undefined;
  private resampler: Resampler | undefined;
  private botSpeaking = false;
  private userSpeaking = false;
  private chain: Promise<void> = Promise.resolve();
  /** The rate the VAD hears at, and passes the audio on at: the transport's when the VAD takes it. */
  readonly rateHz: number;

  /** `inputRateHz`: the caller audio's rate (the transport's). */
  constructor(private readonly vad: VAD, private readonly options: Partial<VadOptions> = {}, inputRateHz = vad.sampleRatesHz[0]!) {
    super();
    this.rateHz = serviceRate(vad.sampleRatesHz, inputRateHz);
  }

  /** The end-of-speech silence for the current node (undefined: the stream's default). */
  setEndOfSpeech(ms: number | undefined): void {
    this.stream?.update({ minSilenceMs: ms ?? this.options.minSilenceMs ?? VAD_DEFAULTS.minSilenceMs });
  }

  protected async process(f: Frame, direction: Direction): Promise<void> {
    if (f.kind === 'start' && direction === 'down') this.stream = await this.vad.open(this.options, this.rateHz);
    if (f.kind === 'end') this.stream?.close();
    if (f.kind === 'bot_started_speaking') this.botSpeaking = true;
    if (f.kind === 'bot_stopped_speaking') this.botSpeaking = false;
    if (f.kind === 'input_audio' && this.stream) {
      if (this.resampler?.fromHz !== f.sampleRateHz) this.resampler = new Resampler(f.sampleRateHz, this.rateHz);
      const pcm = this.resampler.process(f.pcm);
      // The audio goes on at the VAD's rate, which the STT usually takes too: resampling every frame
      // was the costliest work per call.
      this.push(pcm === f.pcm ? f : { ...f, pcm, sampleRateHz: this.rateHz }, direction);
      // VAD inference is ordered per call but does not hold up the audio on its way to the STT.
      const stream = this.stream;
      this.chain = this.chain.then(async () => {
        for (const event of await stream.push(pcm)) {
          if (event.type === 'speech_start' && !this.userSpeaking) {
            this.userSpeaking = true;
            if (this.botSpeaking) {
              const interruption = frame({ kind: 'interruption' as const });
              this.push(interruption, 'down');
              this.push(interruption, 'up');
            }
            this.push(frame({ kind: 'user_started_speaking' as const }));
          } else if (event.type === 'speech_end' && this.userSpeaking) {
            this.userSpeaking = false;
            this.push(frame({ kind: 'user_stopped_speaking' as const }));
          }
        }
      });
      await this.chain;
      return;
    }
    this.push(f, direction);
  }
}

/** Streams caller audio to the STT and turns its results into transcription frames. */
export class SttProcessor extends FrameProcessor {
  readonly name = 'stt';
  private stream: SttStream | undefined;
  private resampler: Resampler | undefined;
  private readonly closed = new AbortController();
  /** The rate the STT hears at: the incoming audio's when the STT takes it. */
  private readonly rateHz: number;

  /** `inputRateHz`: the rate of the audio coming down (the VAD's, else the transport's). */
  constructor(private readonly stt: STT, private readonly reportError: (err: unknown) => void, inputRateHz = stt.sampleRatesHz[0]!) {
    super();
    this.rateHz = serviceRate(stt.sampleRatesHz, inputRateHz);
  }

  protected process(f: Frame, direction: Direction): void {
    if (f.kind === 'start' && direction === 'down') {
      this.stream = this.stt.open({ signal: this.closed.signal, sampleRateHz: this.rateHz });
      void this.read(this.stream);
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
        if (event.type === 'final') this.push(frame({ kind: 'transcription' as const, text: event.text, final: true }));
        else if (event.type === 'interim') this.push(frame({ kind: 'transcription' as const, text: event.text, final: false }));
      }
    } catch (err) {
      if (!this.closed.signal.aborted) this.reportError(err);
    }
  }
}

/**
 * The caller's side every agent starts with: the VAD at the line's rate when it takes it, then the
 * STT at the VAD's. A failing STT is reported as `speech-to-text failed: ...`.
 */
export function hearing(
  services: { vad: VAD; stt: STT },
  inputRateHz: number,
  onSttError: (message: string) => void,
  vadOptions: Partial<VadOptions> = {},
): { vad: VadProcessor; stt: SttProcessor } {
  const vad = new VadProcessor(services.vad, vadOptions, inputRateHz);
  const stt = new SttProcessor(services.stt, (err) => onSttError(`speech-to-text failed: ${(err as Error).message}`), vad.rateHz);
  return { vad, stt };
}

/**
 * Decides when the caller has finished: the VAD heard them stop and the STT has given its final
 * words. A final that comes late is waited for (up to `finalWaitMs`); then the last interim words do.
 */
export class TurnProcessor extends FrameProcessor {
  readonly name = 'turns';
  private speaking = false;
  private stoppedAt: number | undefined;
  /** The first speech start since the last turn was emitted. */
  private startedAt: number | undefined;
  private finals: string[] = [];
  private interim = '';
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly finalWaitMs = 1500) {
    super();
  }

  protected process(f: Frame, direction: Direction): void {
    switch (f.kind) {
      case 'user_started_speaking':
        this.speaking = true;
        this.startedAt ??= f.at;
        this.stoppedAt = undefined;
        clearTimeout(this.timer);
        break;
      case 'user_stopped_speaking':
        this.speaking = false;
        this.stoppedAt = f.at;
        if (this.finals.length > 0) this.emit();
        else {
          clearTimeout(this.timer);
          this.timer = setTimeout(() => this.emit(true), this.finalWaitMs);
        }
        break;
      case 'transcription':
        if (f.final) {
          if (f.text.trim()) this.finals.push(f.text.trim());
          this.interim = '';
          if (!this.speaking && this.stoppedAt !== undefined) this.emit();
        } else this.interim = f.text;
        return;
      case 'end':
        clearTimeout(this.timer);
        break;
    }
    this.push(f, direction);
  }

  private emit(useInterim = false): void {
    clearTimeout(this.timer);
    const words = [...this.finals, ...(useInterim && this.interim.trim() ? [this.interim.trim()] : [])].join(' ').trim();
    this.finals = [];
    this.interim = '';
    if (!words || this.stoppedAt === undefined) {
      // Noise without words: the next words start a turn of their own.
      if (!this.speaking) this.startedAt = undefined;
      return;
    }
    const speechStartedAt = this.startedAt;
    this.push(frame({ kind: 'user_turn' as const, text: words, speechEndedAt: this.stoppedAt, ...(speechStartedAt !== undefined ? { speechStartedAt } : {}), sttWaitMs: Math.max(0, performance.now() - this.stoppedAt) }));
    this.stoppedAt = undefined;
    this.startedAt = undefined;
  }
}

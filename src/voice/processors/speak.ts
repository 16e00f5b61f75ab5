/**
 * The agent's voice: reply text grouped into sentences (so speech starts before the reply is
 * complete), and each sentence spoken by the TTS, resampled to the transport's rate.
 */
import { Resampler } from '../resampler.js';
import { frame, type Direction, type Frame } from '../frames.js';
import type { ConversationMetrics } from '../metrics.js';
import { FrameProcessor } from '../pipeline.js';
import { pacer } from '../pacer.js';
import type { TTS } from '../services.js';
import { childSpan, failSpan, type CallTrace } from '../tracing.js';

/** Where a sentence ends: . ! ? (not inside numbers like 3.5) followed by space, or a line break. */
const SENTENCE_END = /([.!?]+["')\]]?)(\s+)|\n+/;

/** Where a clause ends: , ; : or a dash, followed by space. */
const CLAUSE_END = /([,;:]|\s[-\u2013\u2014])(\s+)/;
/**
 * A first clause already complete where the LLM's stream has got to: a word and then , ; : ! or ?
 * (a streamed reply's next token brings the space, a token later). A period is left to
 * SENTENCE_END: "Mr." and "3." are not ends.
 */
const CLAUSE_END_SO_FAR = /(?<=[A-Za-z\u00C0-\u024F'")\]])([,;:!?]+)$/;
/** A first clause is spoken on its own from this many words (a lone "Well," is not worth a request). */
const CLAUSE_MIN_WORDS = 2;

export class SentenceProcessor extends FrameProcessor {
  readonly name = 'sentences';
  private buffer = '';
  private bufferTurn = 0;
  /** The language of the text in the buffer (its voice). */
  private bufferLanguage: string | undefined;
  /** Whether something of `bufferTurn` was sent to be spoken already. */
  private spokeOfTurn = false;

  /** `firstClause`: a reply's first clause goes to the TTS as soon as it is complete (the first words come sooner). */
  constructor(public firstClause = false) {
    super();
  }

  protected process(f: Frame, direction: Direction): void {
    if (f.kind === 'agent_text') {
      if (f.turn !== this.bufferTurn) {
        this.flush();
        this.spokeOfTurn = false;
      }
      // A new language starts a sentence of its own: each is said in its own voice.
      if (f.language !== this.bufferLanguage) this.flush();
      this.bufferTurn = f.turn;
      this.bufferLanguage = f.language;
      this.buffer += f.text;
      for (;;) {
        const m = SENTENCE_END.exec(this.buffer) ?? (this.firstClause && !this.spokeOfTurn ? this.firstClauseEnd() : null);
        if (!m) break;
        const end = m.index + (m[1]?.length ?? 0);
        const sentence = this.buffer.slice(0, end).trim();
        this.buffer = this.buffer.slice(m.index + m[0].length);
        if (sentence) {
          this.spokeOfTurn = true;
          this.push(frame({ kind: 'speak' as const, text: sentence, turn: f.turn, ...(f.language ? { language: f.language } : {}) }));
        }
      }
      return;
    }
    if (f.kind === 'turn_done' || f.kind === 'agent_action') this.flush();
    if (f.kind === 'interruption' || f.kind === 'end' || (f.kind === 'turn_cancel' && f.turn === this.bufferTurn)) this.buffer = '';
    this.push(f, direction);
  }

  private firstClauseEnd(): RegExpExecArray | null {
    const m = CLAUSE_END.exec(this.buffer) ?? CLAUSE_END_SO_FAR.exec(this.buffer);
    if (!m) return null;
    return this.buffer.slice(0, m.index).trim().split(/\s+/).length >= CLAUSE_MIN_WORDS ? m : null;
  }

  private flush(): void {
    const rest = this.buffer.trim();
    this.buffer = '';
    if (rest) {
      this.spokeOfTurn = true;
      this.push(frame({ kind: 'speak' as const, text: rest, turn: this.bufferTurn, ...(this.bufferLanguage ? { language: this.bufferLanguage } : {}) }));
    }
  }
}

/** Agent audio resampled in one go (two 20 ms frames). */
const SLICE_MS = 40;
/** Agent audio handed to the transport in one go, after the first slice of a sentence. */
const PIECE_MS = 200;
/** How far ahead of its playout a call's audio is made: the rest waits on the shared pacer. */
const LEAD_MS = 500;
/**
 * Agent audio of a reply that reaches the transport more than this after the audio before it has
 * finished playing is late: the caller hears a gap in the agent's speech.
 */
const OUTPUT_LATE_MS = 20;

export class TtsProcessor extends FrameProcessor {
  readonly name = 'tts';
  private resampler: Resampler;
  private firstChunkPending = new Set<number>();
  /** When the audio handed to the transport so far will have played (performance.now() time). */
  private playoutEndsAt = 0;
  /** The agent turn whose audio was handed over last (undefined after a barge-in cleared the playout). */
  private playingTurn: number | undefined;
  /** Speculative turns whose audio is kept until their verdict. */
  private readonly held = new Map<number, { released: Promise<boolean>; release: (play: boolean) => void }>();
  private readonly cancelled = new Set<number>();
  /** The sentence being made now. */
  private speaking: { turn: number; stop: AbortController } | undefined;
  /** Sentences received and not yet begun, in order; the first of them is made ahead (see `receive`). */
  private upcoming: Frame[] = [];
  private readonly ahead = new Map<Frame, { source: AsyncIterable<Int16Array>; stop: AbortController; turn: number }>();

  constructor(
    private readonly tts: TTS,
    private readonly outputRateHz: number,
    private readonly metrics: ConversationMetrics,
    private readonly reportError: (err: unknown, text: string) => void,
    /** The call's spans: a `tts` span per sentence, in its turn. */
    private readonly trace?: CallTrace,
    /** The voice of a sentence in `language` (a call that switches language); default `tts` for all. */
    private readonly voiceOf: (language: string | undefined) => TTS = () => tts,
  ) {
    super();
    this.resampler = new Resampler(tts.sampleRateHz, outputRateHz);
  }

  /**
   * A sentence that arrives while another is being spoken is made at once, not when its turn in the
   * queue comes: the sentence before it is paced to its playout, so waiting would leave only
   * LEAD_MS for the next one's synthesis, and a slower synthesis would be a gap in the agent's speech.
   */
  override receive(f: Frame, direction: Direction): void {
    if (f.kind === 'speak' && direction === 'down') {
      this.upcoming.push(f);
      if (this.speaking && this.upcoming.length === 1) this.makeAhead(f);
    } else if (f.kind === 'interruption' || f.kind === 'end') this.dropAhead(() => true);
    else if (f.kind === 'turn_cancel') this.dropAhead((turn) => turn === f.turn);
    super.receive(f, direction);
  }

  private makeAhead(f: Frame): void {
    if (f.kind !== 'speak' || this.ahead.has(f) || this.cancelled.has(f.turn)) return;
    const stop = new AbortController();
    this.ahead.set(f, { source: eager(this.voiceOf(f.language).synthesize(f.text, { signal: stop.signal })), stop, turn: f.turn });
  }

  private dropAhead(which: (turn: number) => boolean): void {
    for (const [f, a] of this.ahead) {
      if (!which(a.turn)) continue;
      a.stop.abort();
      this.ahead.delete(f);
    }
    this.upcoming = this.upcoming.filter((f) => !('turn' in f) || !which(f.turn));
  }

  protected async process(f: Frame, direction: Direction): Promise<void> {
    if (f.kind !== 'speak') {
      if (f.kind === 'interruption') {
        this.resampler = new Resampler(this.tts.sampleRateHz, this.outputRateHz);
        this.playoutEndsAt = 0; // the transport drops what it had not played
        this.playingTurn = undefined;
      } else if (f.kind === 'turn_hold') {
        let release!: (play: boolean) => void;
        const released = new Promise<boolean>((resolve) => (release = resolve));
        this.held.set(f.turn, { released, release });
      } else if (f.kind === 'turn_release' || f.kind === 'turn_cancel') {
        this.held.get(f.turn)?.release(f.kind === 'turn_release');
        this.held.delete(f.turn);
        if (f.kind === 'turn_cancel') {
          this.cancelled.add(f.turn);
          if (this.speaking?.turn === f.turn) this.speaking.stop.abort();
        }
      }
      this.push(f, direction);
      return;
    }
    this.upcoming = this.upcoming.filter((u) => u !== f);
    const ahead = this.ahead.get(f);
    this.ahead.delete(f);
    if (this.cancelled.has(f.turn)) return ahead?.stop.abort();
    const stop = ahead?.stop ?? new AbortController();
    this.speaking = { turn: f.turn, stop };
    const signal = AbortSignal.any([this.turnSignal.signal, stop.signal]);
    let started = performance.now();
    const tts = this.voiceOf(f.language);
    if (this.resampler.fromHz !== tts.sampleRateHz) this.resampler = new Resampler(tts.sampleRateHz, this.outputRateHz);
    let source: AsyncIterable<Int16Array> = ahead?.source ?? tts.synthesize(f.text, { signal });
    // The next sentence is made while this one plays.
    if (this.upcoming[0]) this.makeAhead(this.upcoming[0]);
    const hold = this.held.get(f.turn);
    if (hold) {
      // A speculative reply: its first words are made now and played once the turn is confirmed;
      // what the TTS has not yet sent by then streams on as it comes.
      const held = heldSource(source, signal, started);
      const aborted = new Promise<boolean>((resolve) => signal.addEventListener('abort', () => resolve(false), { once: true }));
      if (!(await Promise.race([hold.released, aborted])) || signal.aborted) return;
      source = held.source;
      // Its service time is the TTS's own, not the wait for the verdict.
      if (held.firstMs() !== undefined) started = performance.now() - held.firstMs()!;
    }
    // Resampled audio not yet pushed.
    let held: Int16Array[] = [];
    let heldSamples = 0;
    let sentAny = false;
    let pieces = 0;
    /** The TTS's time to the first audio of this sentence: the service's share of a gap before it. */
    let serviceMs = 0;
    const piece = (this.outputRateHz * PIECE_MS) / 1000;
    const take = (): Int16Array => {
      const pcm = held.length === 1 ? held[0]! : new Int16Array(heldSamples);
      if (held.length > 1) held.reduce((at, p) => (pcm.set(p, at), at + p.length), 0);
      held = [];
      heldSamples = 0;
      const now = performance.now();
      // Within a reply (not its first audio, which the turn latency measures), audio that comes after
      // the caller's playout ran dry is heard late: a gap in the agent's speech. Before a sentence's
      // first audio the TTS's own time to answer is the service's, not the engine's.
      const gap = now - this.playoutEndsAt - (pieces === 0 ? serviceMs : 0);
      this.metrics.output(Math.ceil((pcm.length * 50) / this.outputRateHz), this.playingTurn === f.turn && gap > OUTPUT_LATE_MS);
      this.playingTurn = f.turn;
      pieces++;
      this.playoutEndsAt = Math.max(now, this.playoutEndsAt) + (pcm.length * 1000) / this.outputRateHz;
      return pcm;
    };
    let first = true;
    let samples = 0;
    // The reply's first sound is not kept waiting behind the TTS's leading silence.
    const lead = this.playingTurn === f.turn ? undefined : new LeadingSilence(tts.sampleRateHz);
    const span = childSpan(this.trace?.context(f.turn), 'tts', {
      'dialer.tts.service': this.trace?.services.tts ?? tts.label,
      'dialer.tts.characters': f.text.length,
      'langfuse.observation.input': f.text,
    });
    try {
      for await (const made of source) {
        if (signal.aborted) return;
        const chunk = lead ? lead.trim(made) : made;
        if (chunk.length === 0) continue;
        if (first) {
          first = false;
          const ms = performance.now() - started;
          serviceMs = ms;
          this.metrics.addServiceTime(f.turn, ms);
          span?.setAttribute('dialer.tts.time_to_first_audio_ms', Math.round(ms * 10) / 10);
        }
        samples += chunk.length;
        // A network read can hold seconds of speech (a local server writes it all at once): a hundred
        // calls resampling theirs in one turn of the event loop would hold up every call's media.
        // So: SLICE_MS at a time, other calls' media let through between slices, no more than
        // LEAD_MS ahead of the playout (the shared pacer spreads the rest over the time it plays);
        // the first slice goes out at once (the turn's latency), the rest in pieces of about
        // PIECE_MS (each piece played costs the transport a mark and its echo). A call with less than
        // a piece queued does not yield between slices: on a busy event loop (a turn of tens of
        // milliseconds) a slice a turn makes audio slower than it plays, and the caller hears gaps.
        const slice = Math.max(1, Math.round((tts.sampleRateHz * SLICE_MS) / 1000));
        for (let at = 0; at < chunk.length; at += slice) {
          if (this.playoutEndsAt - performance.now() > LEAD_MS) await pacer.until(this.playoutEndsAt - LEAD_MS, signal);
          if (signal.aborted) return;
          const pcm = this.resampler.process(chunk.subarray(at, at + slice));
          held.push(pcm);
          heldSamples += pcm.length;
          if (!sentAny || heldSamples >= piece) {
            sentAny = true;
            this.push(frame({ kind: 'output_audio' as const, pcm: take(), sampleRateHz: this.outputRateHz, text: f.text, turn: f.turn, last: false }));
          }
          if (this.playoutEndsAt - performance.now() > PIECE_MS) await new Promise((resolve) => setImmediate(resolve));
        }
      }
      if (!signal.aborted) this.push(frame({ kind: 'output_audio' as const, pcm: take(), sampleRateHz: this.outputRateHz, text: f.text, turn: f.turn, last: true }));
    } catch (err) {
      if (!signal.aborted) {
        failSpan(span, err);
        this.reportError(err, f.text);
      }
    } finally {
      if (span) {
        span.setAttributes({
          'dialer.tts.audio_ms': Math.round((samples * 1000) / tts.sampleRateHz),
          'dialer.duration_ms': Math.round(performance.now() - started),
          'dialer.aborted': signal.aborted,
        });
        span.end();
      }
    }
  }
}

/** Reads `source` to its end at once, keeping what it yields for the reader, whenever it reads. */
function eager(source: AsyncIterable<Int16Array>): AsyncIterable<Int16Array> {
  const chunks: Int16Array[] = [];
  let done = false;
  let failure: { err: unknown } | undefined;
  let wake: (() => void) | undefined;
  void (async () => {
    try {
      for await (const chunk of source) (chunks.push(chunk), wake?.());
    } catch (err) {
      failure = { err };
    } finally {
      done = true;
      wake?.();
    }
  })();
  return (async function* () {
    for (let i = 0; ; ) {
      if (i < chunks.length) yield chunks[i++]!;
      else if (failure) throw failure.err;
      else if (done) return;
      else await new Promise<void>((resolve) => (wake = resolve));
    }
  })();
}

/**
 * A held reply's audio, read from the TTS while the turn's verdict is awaited: `source` yields what
 * was made so far, then the rest as it comes; `firstMs` is the TTS's time to its first audio.
 */
function heldSource(source: AsyncIterable<Int16Array>, signal: AbortSignal, started: number): { source: AsyncIterable<Int16Array>; firstMs: () => number | undefined } {
  const made: Int16Array[] = [];
  let firstMs: number | undefined;
  let done = false;
  let failed: { err: unknown } | undefined;
  let wake: (() => void) | undefined;
  void (async () => {
    try {
      for await (const chunk of source) {
        if (signal.aborted) return;
        firstMs ??= performance.now() - started;
        made.push(chunk);
        wake?.();
      }
    } catch (err) {
      failed = { err };
    } finally {
      done = true;
      wake?.();
    }
  })();
  return {
    firstMs: () => firstMs,
    source: (async function* () {
      for (;;) {
        const next = made.shift();
        if (next) yield next;
        else if (failed) throw failed.err;
        else if (done) return;
        else await new Promise<void>((resolve) => (wake = resolve));
      }
    })(),
  };
}

/** Below this (about -40 dBFS) a sample at the start of a reply is the TTS's leading silence. */
const LEAD_SILENCE_LEVEL = 300;
/** Kept before the first sound, so a soft onset ("th", "h") is not clipped. */
const LEAD_KEEP_MS = 15;
/** At most this much leading silence is skipped: past it, quiet audio is what the TTS meant. */
const LEAD_MAX_MS = 400;

/** Skips the leading silence of a reply's first audio (TTS services start theirs with 50-250 ms of it). */
export class LeadingSilence {
  private skipped = 0;
  private done = false;
  private readonly keep: number;
  private readonly max: number;

  constructor(sampleRateHz: number) {
    this.keep = Math.round((sampleRateHz * LEAD_KEEP_MS) / 1000);
    this.max = Math.round((sampleRateHz * LEAD_MAX_MS) / 1000);
  }

  /** The chunk less its leading silence; an empty one while only silence came. */
  trim(chunk: Int16Array): Int16Array {
    if (this.done) return chunk;
    let at = 0;
    while (at < chunk.length && Math.abs(chunk[at]!) < LEAD_SILENCE_LEVEL && this.skipped + at < this.max) at++;
    if (at === chunk.length) {
      this.skipped += at;
      return chunk.subarray(chunk.length);
    }
    this.done = true;
    // At the first sound, a little before it; at the limit, from there.
    return chunk.subarray(Math.abs(chunk[at]!) >= LEAD_SILENCE_LEVEL ? Math.max(0, at - this.keep) : at);
  }
}

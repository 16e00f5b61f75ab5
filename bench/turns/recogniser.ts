/**
 * The speech-to-text stand-in of `npm run bench:turns`: it knows the corpus (a stand-in may), finds
 * each clip in a stream's audio by its first samples as a phone line delivers them (mu-law and
 * back), and answers as a streaming service does, timed from when the clip's sound arrived:
 * - an interim result as each word ends, `resultDelayMs` later (the words so far);
 * - the final result `resultDelayMs` after the clip's sound ends (`speech_final`), ending in
 *   punctuation as a formatting service writes it (a period unless the words end otherwise);
 * - on `Finalize`, at once, a final of the words heard to their end so far.
 * A noise (a clip without words) gets no result at all.
 */
import { decodeMulaw, encodeMulaw } from '../../src/lib/audio.js';
import { results, type StreamTranscriber } from '../../test/helpers/deepgram-server.js';
import type { Clip } from './corpus.js';

const PRINT = 24;
/** Zero samples (the line's silence) before a sound counts as a new clip. */
const QUIET_SAMPLES = 80;

const key = (pcm: Int16Array) => Array.from(pcm.subarray(0, PRINT)).join(',');

export class ClipBook {
  private readonly byPrint = new Map<string, Clip>();

  constructor(clips: Clip[]) {
    for (const clip of clips) this.byPrint.set(key(decodeMulaw(encodeMulaw(clip.pcm.subarray(0, PRINT)))), clip);
  }

  find(head: Int16Array): Clip | undefined {
    return this.byPrint.get(key(head));
  }

  /** A transcriber for one stream. */
  transcriber(send: (message: string) => void, resultDelayMs: number, sampleRateHz = 8000): StreamTranscriber {
    return new ClipTranscriber(this, send, resultDelayMs, sampleRateHz);
  }
}

const terminal = (text: string) => (/[.?!]$/.test(text) ? text : `${text.replace(/[,;:]$/, '')}.`);

class ClipTranscriber implements StreamTranscriber {
  private zeros = QUIET_SAMPLES;
  /** Samples of a possible clip start, collected until there are enough to look it up. */
  private head: number[] | undefined;
  private headStartedAt = 0;
  private active: { clip: Clip; startedAt: number; samplesLeft: number; finalised: number; timers: NodeJS.Timeout[] } | undefined;
  private closed = false;

  constructor(
    private readonly book: ClipBook,
    private readonly send: (message: string) => void,
    private readonly delayMs: number,
    private readonly rateHz: number,
  ) {}

  audio(pcm: Int16Array): void {
    const arrivedAt = Date.now();
    for (let i = 0; i < pcm.length; i++) {
      const sample = pcm[i]!;
      if (this.active) {
        if (--this.active.samplesLeft <= 0) {
          this.active = undefined;
          this.zeros = 0;
        }
        continue;
      }
      if (this.head) {
        this.head.push(sample);
        if (this.head.length === PRINT) this.lookUp();
        continue;
      }
      if (sample === 0) {
        this.zeros++;
        continue;
      }
      if (this.zeros >= QUIET_SAMPLES) {
        this.head = [sample];
        // The sound began this many samples before the message's end, which arrived now.
        this.headStartedAt = arrivedAt - ((pcm.length - i) * 1000) / this.rateHz;
      }
      this.zeros = 0;
    }
  }

  private lookUp(): void {
    const clip = this.book.find(Int16Array.from(this.head!));
    const startedAt = this.headStartedAt;
    this.head = undefined;
    if (!clip) return;
    const active = { clip, startedAt, samplesLeft: clip.pcm.length - PRINT, finalised: 0, timers: [] as NodeJS.Timeout[] };
    this.active = active;
    const at = (ms: number, fn: () => void) => {
      const timer = setTimeout(() => !this.closed && fn(), Math.max(0, startedAt + ms - Date.now()));
      active.timers.push(timer);
    };
    clip.words.forEach((w, i) =>
      at(w.endMs + this.delayMs, () => {
        if (active.finalised > i) return;
        this.send(results(clip.words.slice(active.finalised, i + 1).map((x) => x.word).join(' '), false, { start: active.finalised }));
      }),
    );
    if (clip.words.length > 0) {
      at(clip.durationMs + this.delayMs, () => {
        const rest = clip.words.slice(active.finalised).map((x) => x.word).join(' ');
        active.finalised = clip.words.length;
        if (rest) this.send(results(terminal(rest), true));
      });
      at(clip.durationMs + 1000, () => this.send(JSON.stringify({ type: 'UtteranceEnd', channel: [0, 1], last_word_end: clip.durationMs / 1000 })));
    }
    this.last = active;
  }

  /** The clip heard most recently (a Finalize may come after its sound ended). */
  private last: ClipTranscriber['active'];

  finalize(): void {
    const a = this.active ?? this.last;
    if (!a) return;
    const heardMs = Date.now() - a.startedAt;
    const upTo = a.clip.words.filter((w) => w.endMs <= heardMs).length;
    if (upTo <= a.finalised) return;
    const words = a.clip.words.slice(a.finalised, upTo).map((x) => x.word).join(' ');
    a.finalised = upTo;
    this.send(results(upTo === a.clip.words.length ? terminal(words) : words, true, { from_finalize: true }));
  }

  close(): void {
    this.closed = true;
    for (const t of this.active?.timers ?? []) clearTimeout(t);
    for (const t of this.last?.timers ?? []) clearTimeout(t);
  }
}

/**
 * Caller clips for turn-taking tests and `npm run bench:turns`: speech made by the repository's
 * synthesiser (one function, `speak`), trimmed to its sound, with the time each word ends; and a
 * speech-to-text stand-in (`ClipBook`, for the local Deepgram-protocol server) that knows the clips
 * (a stand-in may), finds each in a stream's audio by its samples as a phone line delivers them
 * (mu-law and back), and answers as a streaming service does, timed from when the clip's sound arrived:
 * - an interim result as each word ends, `resultDelayMs` later (the words so far);
 * - the final result `resultDelayMs` after the clip's sound ends (`speech_final`), ending in
 *   punctuation as a formatting service writes it (a period unless the words end otherwise);
 * - on `Finalize`, at once, a final of the words heard to their end so far.
 * A noise (a clip without words) gets no result at all.
 */
import { decodeMulaw, encodeMulaw, rms } from '../../src/lib/audio.js';
import { synthesize } from '../../src/lib/speech.js';
import { results, type StreamTranscriber } from './deepgram-server.js';

export const RATE_HZ = 8000;

export interface Clip {
  id: string;
  /** The words as a speech-to-text service would give them ('' for a noise). */
  text: string;
  pcm: Int16Array;
  /** When each word ends, ms from the clip's start. */
  words: Array<{ word: string; endMs: number }>;
  durationMs: number;
}

/** The one speech synthesiser of the clips: 8 kHz speech of `text` (the repository's voice), trimmed to its sound. */
async function speak(text: string): Promise<Int16Array> {
  return trim(await synthesize(text, { sampleRateHz: RATE_HZ }));
}

/** Cuts leading and trailing quiet (10 ms windows below RMS 150). */
function trim(pcm: Int16Array): Int16Array {
  const win = RATE_HZ / 100;
  let from = 0;
  while (from + win < pcm.length && rms(pcm.subarray(from, from + win)) < 150) from += win;
  let to = pcm.length;
  while (to - win > from && rms(pcm.subarray(to - win, to)) < 150) to -= win;
  // Start and end on a sample that is not silent on a phone line (mu-law keeps |x| >= 64 apart from 0).
  while (from < to && Math.abs(pcm[from]!) < 64) from++;
  while (to > from && Math.abs(pcm[to - 1]!) < 64) to--;
  return pcm.slice(from, to);
}

/** Word end times spread over the clip by the words' lengths (a stand-in for a recogniser's word timings). */
function wordTimes(text: string, durationMs: number): Clip['words'] {
  const words = text.split(/\s+/).filter(Boolean);
  const weight = (w: string) => w.replace(/[^a-z0-9]/gi, '').length + 2;
  const total = words.reduce((n, w) => n + weight(w), 0);
  let at = 0;
  return words.map((word) => {
    at += weight(word);
    return { word, endMs: Math.round((at / total) * durationMs) };
  });
}

export async function speechClip(id: string, text: string): Promise<Clip> {
  const pcm = await speak(text);
  const durationMs = (pcm.length * 1000) / RATE_HZ;
  return { id, text, pcm, words: wordTimes(text, durationMs), durationMs };
}

/** Zero samples (the line's silence) before a sound counts as a new clip. */
const QUIET_SAMPLES = 80;

/** A clip as a phone line delivers it: mu-law and back. */
interface Heard {
  clip: Clip;
  line: Int16Array;
}

export class ClipBook {
  /** One entry per distinct sound (the same line said in two behaviours is one clip). */
  readonly clips: Heard[] = [];

  constructor(clips: Clip[]) {
    const seen = new Set<string>();
    for (const clip of clips) {
      const line = decodeMulaw(encodeMulaw(clip.pcm));
      const key = Buffer.from(line.buffer, line.byteOffset, line.byteLength).toString('base64');
      if (seen.has(key)) continue;
      seen.add(key);
      this.clips.push({ clip, line });
    }
  }

  /** A transcriber for one stream; `languageOf`: a multilingual stream's, the language each clip's results name. */
  transcriber(send: (message: string) => void, resultDelayMs: number, sampleRateHz = 8000, languageOf?: (clip: Clip) => string): StreamTranscriber {
    return new ClipTranscriber(this, send, resultDelayMs, sampleRateHz, languageOf);
  }
}

const terminal = (text: string) => (/[.?!]$/.test(text) ? text : `${text.replace(/[,;:]$/, '')}.`);

/**
 * Follows one stream: after silence, a sound is matched sample by sample against the clips that
 * start alike, until one is left (clips that start with the same word part ways within it).
 */
class ClipTranscriber implements StreamTranscriber {
  private zeros = QUIET_SAMPLES;
  /** The clips the sound so far matches, and how far into them it is. */
  private matching: { candidates: Heard[]; at: number; startedAt: number } | undefined;
  private active: { clip: Clip; startedAt: number; samplesLeft: number; finalised: number; timers: NodeJS.Timeout[] } | undefined;
  private closed = false;

  constructor(
    private readonly book: ClipBook,
    private readonly send: (message: string) => void,
    private readonly delayMs: number,
    private readonly rateHz: number,
    private readonly languageOf?: (clip: Clip) => string,
  ) {}

  private languages(clip: Clip): string[] | undefined {
    return this.languageOf ? [this.languageOf(clip)] : undefined;
  }

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
      const m = this.matching;
      if (m) {
        m.candidates = m.candidates.filter((c) => c.line[m.at] === sample);
        m.at++;
        if (m.candidates.length === 1) {
          this.matching = undefined;
          this.follow(m.candidates[0]!.clip, m.startedAt, m.candidates[0]!.line.length - m.at);
        } else if (m.candidates.length === 0) {
          this.matching = undefined;
          this.zeros = 0;
        }
        continue;
      }
      if (sample === 0) {
        this.zeros++;
        continue;
      }
      if (this.zeros >= QUIET_SAMPLES) {
        // The sound began this many samples before the message's end, which arrived now.
        const startedAt = arrivedAt - ((pcm.length - i) * 1000) / this.rateHz;
        this.matching = { candidates: this.book.clips.filter((c) => c.line[0] === sample), at: 1, startedAt };
        if (this.matching.candidates.length === 1) {
          const only = this.matching.candidates[0]!;
          this.matching = undefined;
          this.follow(only.clip, startedAt, only.line.length - 1);
        }
      }
      this.zeros = 0;
    }
  }

  private follow(clip: Clip, startedAt: number, samplesLeft: number): void {
    const active = { clip, startedAt, samplesLeft, finalised: 0, timers: [] as NodeJS.Timeout[] };
    this.active = active;
    const at = (ms: number, fn: () => void) => {
      const timer = setTimeout(() => !this.closed && fn(), Math.max(0, startedAt + ms - Date.now()));
      active.timers.push(timer);
    };
    clip.words.forEach((w, i) =>
      at(w.endMs + this.delayMs, () => {
        if (active.finalised > i) return;
        this.send(results(clip.words.slice(active.finalised, i + 1).map((x) => x.word).join(' '), false, { start: active.finalised }, this.languages(clip)));
      }),
    );
    if (clip.words.length > 0) {
      at(clip.durationMs + this.delayMs, () => {
        const rest = clip.words.slice(active.finalised).map((x) => x.word).join(' ');
        active.finalised = clip.words.length;
        if (rest) this.send(results(terminal(rest), true, {}, this.languages(clip)));
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
    this.send(results(upTo === a.clip.words.length ? terminal(words) : words, true, { from_finalize: true }, this.languages(a.clip)));
  }

  close(): void {
    this.closed = true;
    for (const t of this.active?.timers ?? []) clearTimeout(t);
    for (const t of this.last?.timers ?? []) clearTimeout(t);
  }
}

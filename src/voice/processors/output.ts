/**
 * The transport's output: plays the agent's audio on the call, knows what was actually heard,
 * pauses or ducks it while speech over it is judged (and resumes where it was), clears it on a
 * barge-in, and carries out the flow's end and transfer once the words before them have been heard.
 *
 * Where the playout is: each piece handed to the transport is echoed back when played (a mark); the
 * piece playing now started when the one before it was echoed (or when it was sent, if the line was
 * idle). A pause clears the transport and keeps what was not played yet; a duck plays it on quieter.
 */
import type { CallIO, PlayResult } from '../agent.js';
import { frame, type Direction, type Frame } from '../frames.js';
import type { ConversationMetrics } from '../metrics.js';
import { FrameProcessor } from '../pipeline.js';

export interface OutputEvents {
  /** A sentence the caller heard in full (or, when interrupted, the part before the cut). */
  spoke(turn: number, text: string): void;
  /** The flow ended the conversation (after its last words were heard). */
  ended(outcome: string | undefined): void;
  /** The flow transferred the call. */
  transferred(to: string): void;
  /** Agent turn `turn` is over for the caller: its reply was heard (or cut: `interrupted`). */
  turnOver?(turn: number, interrupted: boolean): void;
}

interface Sentence {
  turn: number;
  text: string;
  /** Pieces sent (or held) and not yet played. */
  outstanding: number;
  /** Its last piece has arrived. */
  complete: boolean;
  heard: (yes: boolean) => void;
  done: Promise<boolean>;
  settled: boolean;
}

interface Piece {
  pcm: Int16Array;
  sentence: Sentence;
  /** Estimated start of its playout (performance.now()). */
  startAt: number;
  /** Taken back by a pause or duck (its echo, 'cleared', means nothing then). */
  taken: boolean;
}

export class OutputProcessor extends FrameProcessor {
  readonly name = 'output';
  private speaking = false;
  /** Pieces at the transport, in playout order. */
  private playing: Piece[] = [];
  /** Pieces kept back while paused. */
  private held: Array<{ pcm: Int16Array; sentence: Sentence }> = [];
  /** The sentence whose pieces arrive now. */
  private current: Sentence | undefined;
  private sentences: Sentence[] = [];
  /** undefined: playing normally; 0: paused; between 0 and 1: ducked to that gain. */
  private level: number | undefined;
  /** When the audio at the transport will have played out (estimated). */
  private playoutEndsAt = 0;
  private turnsWithAudio = new Set<number>();
  /** Sentences heard in full, by turn. */
  private readonly heardOfTurn = new Map<number, string[]>();

  constructor(
    private readonly io: CallIO,
    private readonly metrics: ConversationMetrics,
    private readonly events: OutputEvents,
  ) {
    super();
  }

  protected async process(f: Frame, direction: Direction): Promise<void> {
    switch (f.kind) {
      case 'output_audio': {
        if (!this.turnsWithAudio.has(f.turn)) {
          this.turnsWithAudio.add(f.turn);
          this.metrics.firstAudio(f.turn, performance.now());
        }
        if (!this.speaking) {
          this.speaking = true;
          this.push(frame({ kind: 'bot_started_speaking' as const }), 'up');
        }
        const sentence = this.sentenceFor(f.turn, f.text);
        if (f.pcm.length > 0) this.send(f.pcm, sentence);
        if (f.last) {
          sentence.complete = true;
          this.current = undefined;
          this.settle(sentence);
          this.maybeStopped();
        }
        return;
      }
      case 'output_pause':
        this.takeBack(f.level);
        break;
      case 'output_resume':
        if (this.level === 0) {
          this.level = undefined;
          for (const h of this.held.splice(0)) this.send(h.pcm, h.sentence, true);
        } else if (this.level !== undefined) this.takeBack(undefined);
        this.maybeStopped();
        break;
      case 'interruption': {
        this.io.clear();
        this.level = undefined;
        this.held = [];
        this.playing = [];
        this.current = undefined;
        // The reply being played was cut: the caller heard its sentences played in full before it.
        const cut = this.sentences.filter((s) => !s.settled);
        this.sentences = [];
        for (const s of cut) {
          s.settled = true;
          s.heard(false);
        }
        const turn = cut[cut.length - 1]?.turn;
        if (turn !== undefined) {
          const heard = this.heardOfTurn.get(turn) ?? [];
          this.push(frame({ kind: 'agent_interrupted' as const, turn, spoken: heard.join(' ') }), 'up');
        }
        for (const t of new Set(cut.map((s) => s.turn))) this.events.turnOver?.(t, true);
        this.setStopped();
        return;
      }
      case 'agent_action': {
        // Let the words before it be heard first.
        await Promise.all(this.sentences.map((s) => s.done));
        if (f.action.type === 'end') this.events.ended(f.action.outcome);
        else if (f.action.bridged) this.events.transferred(f.action.to);
        else await this.transfer(f.action.to);
        return;
      }
      case 'turn_done': {
        // Every sentence of the turn is in `sentences` by now (frames arrive in order): it is over once they are.
        const events = this.events;
        if (events.turnOver) {
          const turn = f.turn;
          void Promise.all(this.sentences.filter((s) => s.turn === turn).map((s) => s.done)).then(() => events.turnOver!(turn, false));
        }
        break;
      }
    }
    this.push(f, direction);
  }

  private sentenceFor(turn: number, text: string): Sentence {
    if (this.current && this.current.turn === turn && this.current.text === text) return this.current;
    let heard!: (yes: boolean) => void;
    const done = new Promise<boolean>((resolve) => (heard = resolve));
    const sentence: Sentence = { turn, text, outstanding: 0, complete: false, heard, done, settled: false };
    this.current = sentence;
    this.sentences.push(sentence);
    return sentence;
  }

  /** Hands a piece to the transport (or keeps it, while paused), ducked when ducking. */
  private send(pcm: Int16Array, sentence: Sentence, counted = false): void {
    if (!counted) sentence.outstanding++;
    if (this.level === 0) {
      this.held.push({ pcm, sentence });
      return;
    }
    const now = performance.now();
    const startAt = Math.max(now, this.playoutEndsAt);
    this.playoutEndsAt = startAt + this.ms(pcm);
    const piece: Piece = { pcm, sentence, startAt, taken: false };
    this.playing.push(piece);
    const level = this.level;
    void this.io.play(level === undefined ? pcm : scaled(pcm, level)).then((result) => this.played(piece, result));
  }

  private played(piece: Piece, result: PlayResult): void {
    if (piece.taken) return;
    const at = this.playing.indexOf(piece);
    if (at >= 0) this.playing.splice(at, 1);
    if (result === 'ended' && !piece.sentence.settled) {
      piece.sentence.settled = true;
      piece.sentence.heard(false);
    } else if (result === 'played') {
      // The echo says where the playout is: the pieces after it start from now.
      let t = performance.now();
      for (const p of this.playing) {
        p.startAt = Math.max(p.startAt, t);
        t = p.startAt + this.ms(p.pcm);
      }
      piece.sentence.outstanding--;
      this.settle(piece.sentence);
    }
    this.maybeStopped();
  }

  /**
   * Takes back what the transport has not played yet (clearing it) and plays it again from where
   * it was: kept (level 0: a pause), quieter (a duck), or as it was (undefined: the end of a duck).
   */
  private takeBack(level: number | undefined): void {
    if (level === this.level) return;
    const now = performance.now();
    const rest: Array<{ pcm: Int16Array; sentence: Sentence }> = [];
    for (const p of this.playing) {
      p.taken = true;
      p.sentence.outstanding--;
      const playedSamples = Math.max(0, Math.round(((now - p.startAt) * this.io.sampleRateHz) / 1000));
      if (playedSamples < p.pcm.length) rest.push({ pcm: p.pcm.subarray(playedSamples), sentence: p.sentence });
      else this.settle(p.sentence);
    }
    this.playing = [];
    if (rest.length > 0) this.io.clear();
    this.playoutEndsAt = now;
    this.level = level;
    for (const r of rest) this.send(r.pcm, r.sentence);
  }

  /** A sentence whose pieces have all arrived and been played was heard. */
  private settle(sentence: Sentence): void {
    if (sentence.settled || !sentence.complete || sentence.outstanding > 0) return;
    sentence.settled = true;
    this.sentences = this.sentences.filter((s) => s !== sentence);
    this.events.spoke(sentence.turn, sentence.text);
    this.heardOfTurn.set(sentence.turn, [...(this.heardOfTurn.get(sentence.turn) ?? []), sentence.text]);
    sentence.heard(true);
  }

  private ms(pcm: Int16Array): number {
    return (pcm.length * 1000) / this.io.sampleRateHz;
  }

  private async transfer(to: string): Promise<void> {
    try {
      await this.io.transfer(to);
      this.events.transferred(to);
    } catch {
      this.events.ended(undefined);
    }
  }

  private maybeStopped(): void {
    if (this.playing.length === 0 && this.held.length === 0 && this.level !== 0 && !this.current) this.setStopped();
  }

  private setStopped(): void {
    if (!this.speaking) return;
    this.speaking = false;
    this.push(frame({ kind: 'bot_stopped_speaking' as const }), 'up');
  }
}

function scaled(pcm: Int16Array, gain: number): Int16Array {
  const out = new Int16Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = Math.round(pcm[i]! * gain);
  return out;
}

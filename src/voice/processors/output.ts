/**
 * The transport's output: plays the agent's audio on the call, knows what was actually heard,
 * clears the playout on a barge-in, and carries out the flow's end and transfer once the words
 * before them have been heard.
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

export class OutputProcessor extends FrameProcessor {
  readonly name = 'output';
  private pending: Array<Promise<PlayResult>> = [];
  private speaking = false;
  /** Sentences of the current turn that were sent to be played, with whether each was fully played. */
  private sentences: Array<{ turn: number; text: string; done: Promise<boolean> }> = [];
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
        const played = this.io.play(f.pcm);
        this.pending.push(played);
        if (f.last) {
          const chunks = [...this.pending];
          const text = f.text;
          const turn = f.turn;
          const done = Promise.all(chunks).then((results) => results.every((r) => r === 'played'));
          const sentence = { turn, text, done };
          this.sentences.push(sentence);
          void done.then((heard) => {
            if (heard) {
              this.events.spoke(turn, text);
              this.heardOfTurn.set(turn, [...(this.heardOfTurn.get(turn) ?? []), text]);
            }
            // Heard (or cut) sentences are settled; an interruption later only concerns the rest.
            if (heard) this.sentences = this.sentences.filter((s) => s !== sentence);
          });
          this.pending = [];
          void Promise.all(chunks).then(() => this.maybeStopped());
        }
        return;
      }
      case 'interruption': {
        this.io.clear();
        // The reply being played was cut: the caller heard its sentences played in full before it.
        const cut = this.sentences;
        this.sentences = [];
        this.pending = [];
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
        await Promise.all(this.pending);
        if (f.action.type === 'end') this.events.ended(f.action.outcome);
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

  private async transfer(to: string): Promise<void> {
    try {
      await this.io.transfer(to);
      this.events.transferred(to);
    } catch {
      this.events.ended(undefined);
    }
  }

  private maybeStopped(): void {
    if (this.pending.length === 0) this.setStopped();
  }

  private setStopped(): void {
    if (!this.speaking) return;
    this.speaking = false;
    this.push(frame({ kind: 'bot_stopped_speaking' as const }), 'up');
  }
}

/**
 * The agent's mind: runs the flow engine on each caller turn (and keypress, and silence) and sends
 * its words downstream as text, its decisions (end, transfer) as actions.
 */
import type { AgentAction, FlowSession } from '../flow/types.js';
import { frame, type Direction, type Frame } from '../frames.js';
import type { ConversationMetrics } from '../metrics.js';
import { FrameProcessor } from '../pipeline.js';
import type { CallTrace, TurnKind } from '../tracing.js';

export interface ConverseOptions {
  /** Silence (after the agent stopped talking) before the idle prompt. */
  idleMs: number;
  /** Idle prompts before the agent gives up and hangs up (`call_ended_by: timeout`). */
  maxIdlePrompts: number;
  /** The first caller words that mean an answering machine picked up; undefined: no voicemail check. */
  voicemail: RegExp | undefined;
  /** Called when the conversation should end without a flow action (timeout, voicemail). */
  onGiveUp(reason: 'timeout' | 'voicemail'): void;
  /** Called after each turn with the (possibly new) node's settings. */
  onNodeSettings?(settings: FlowSession['nodeSettings']): void;
  /** The call's spans: a `turn` span per agent turn (with the caller's `stt` span in it). */
  trace?: CallTrace;
}

/** What started an agent turn, for its span. */
interface TurnStart {
  kind: TurnKind;
  /** When it started (performance.now()): the caller's first words, a keypress, the prompt. */
  at: number;
  /** A speculative turn's: aborted when the caller goes on. */
  controller?: AbortController;
  /** The caller's speech end, for the turn's latency. */
  speechEndedAt?: number;
  input?: string;
}

/** A keypress as the flow hears it: a line of the caller's. */
export const keypressText = (digit: string): string => `(The caller pressed ${digit} on the keypad.)`;

export const VOICEMAIL_PATTERN =
  /\b(leave (me |us )?a (message|voicemail)|after the (tone|beep)|not available|can'?t (come to|take) the phone|voice ?mail|mailbox)\b/i;

/** A reply started on a likely end of the caller's turn, waiting for the verdict. */
interface Speculation {
  turn: number;
  controller: AbortController;
  confirm: (confirmed: boolean) => void;
  confirmed: Promise<boolean>;
}

export class ConverseProcessor extends FrameProcessor {
  readonly name = 'converse';
  private turn = 0;
  private speculation: Speculation | undefined;
  /** Turns run one after another, in the background, so frames keep flowing past this processor. */
  private work: Promise<void> = Promise.resolve();
  private running: AbortController | undefined;
  private runningTurn: number | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private idlePrompts = 0;
  /** The caller's turns taken as over (a speculative one once confirmed). */
  private userTurns = 0;
  private ended = false;

  constructor(
    private readonly flow: FlowSession,
    private readonly metrics: ConversationMetrics,
    private readonly options: ConverseOptions,
  ) {
    super();
  }

  /** The agent turn being run now (its LLM requests and hooks belong to it). */
  get currentTurn(): number | undefined {
    return this.runningTurn;
  }

  protected process(f: Frame, direction: Direction): void {
    switch (f.kind) {
      case 'start':
        if (direction === 'down') this.run((signal) => this.flow.start(signal), { kind: 'greeting', at: f.at });
        break;
      case 'user_turn': {
        this.idlePrompts = 0;
        // Until a turn of the caller's is over (a speculative one may be taken back), the words may be a machine's.
        const first = this.userTurns === 0;
        if (!f.speculative) this.userTurns++;
        if (first && this.options.voicemail?.test(f.text)) {
          this.ended = true;
          this.options.onGiveUp('voicemail');
          return;
        }
        const text = f.text;
        const startedAt = f.speechStartedAt ?? f.speechEndedAt;
        let speculation: Speculation | undefined;
        if (f.speculative) {
          let confirm!: (confirmed: boolean) => void;
          const confirmed = new Promise<boolean>((resolve) => (confirm = resolve));
          speculation = { turn: this.turn + 1, controller: new AbortController(), confirm, confirmed };
          this.speculation = speculation;
          // Before its first words: everything of this turn is held until the verdict.
          this.push(frame({ kind: 'turn_hold' as const, turn: speculation.turn }));
        }
        const language = f.language;
        const turn = this.run((signal) => this.flow.userTurn(text, signal, { ...(speculation ? { confirmed: speculation.confirmed } : {}), startedMsAgo: performance.now() - startedAt, ...(language ? { language } : {}) }), {
          kind: 'user',
          at: startedAt,
          speechEndedAt: f.speechEndedAt,
          input: text,
          ...(speculation ? { controller: speculation.controller } : {}),
        });
        if (turn !== undefined) {
          this.metrics.addServiceTime(turn, f.sttWaitMs);
          this.options.trace?.stt(turn, { startedAt, endedAt: f.speechEndedAt, finalWaitMs: f.sttWaitMs, text });
          if (!f.speculative && f.endReason) this.options.trace?.endReason(turn, f.endReason);
        }
        return;
      }
      case 'user_turn_verdict': {
        const s = this.speculation;
        this.speculation = undefined;
        if (!s) return;
        if (f.confirmed) {
          this.userTurns++;
          this.push(frame({ kind: 'turn_release' as const, turn: s.turn }));
          this.options.trace?.endReason(s.turn, 'speculative_hit');
        } else {
          // The caller went on: the reply is dropped everywhere, its words taken back from the flow.
          this.options.trace?.endReason(s.turn, 'speculative_cancel');
          this.options.trace?.endTurn(s.turn, { interrupted: false, node: this.flow.currentNode });
          this.metrics.dropTurn(s.turn);
          s.controller.abort();
          this.push(frame({ kind: 'turn_cancel' as const, turn: s.turn }));
          // Once its run has stopped, as if the turn had never been taken (before any later turn runs).
          this.work = this.work.then(() => this.flow.retract());
        }
        s.confirm(f.confirmed);
        return;
      }
      case 'dtmf': {
        const digit = f.digit;
        this.run((signal) => this.flow.userTurn(keypressText(digit), signal), { kind: 'dtmf', at: f.at, speechEndedAt: f.at, input: digit });
        break;
      }
      case 'interruption':
        this.metrics.interruptions++;
        // A reply still being written is cut: its turn is over (one being heard is ended by the output).
        if (this.runningTurn !== undefined) this.options.trace?.endTurn(this.runningTurn, { interrupted: true, node: this.flow.currentNode });
        this.running?.abort();
        this.stopIdle();
        break;
      case 'agent_interrupted':
        this.flow.interrupted(f.spoken);
        break;
      case 'user_started_speaking':
        this.stopIdle();
        break;
      case 'bot_stopped_speaking':
        this.armIdle();
        break;
      case 'bot_started_speaking':
        this.stopIdle();
        break;
      case 'end':
        this.ended = true;
        this.speculation?.confirm(false);
        this.running?.abort();
        this.stopIdle();
        break;
    }
    this.push(f, direction);
  }

  private run(actions: (signal: AbortSignal) => AsyncIterable<AgentAction>, start: TurnStart): number | undefined {
    if (this.ended) return undefined;
    const turn = ++this.turn;
    if (start.speechEndedAt !== undefined) this.metrics.turnStarted(turn, start.speechEndedAt);
    this.options.trace?.startTurn(turn, start.kind, start.at, start.input);
    this.work = this.work.then(async () => {
      if (this.ended) return;
      const controller = start.controller ?? new AbortController();
      if (controller.signal.aborted) return;
      this.running = controller;
      this.runningTurn = turn;
      const asked = performance.now();
      let firstText = true;
      try {
        for await (const action of actions(controller.signal)) {
          if (controller.signal.aborted) break;
          if (action.type === 'say') {
            if (firstText) {
              firstText = false;
              // The LLM's time to its first words counts as service time, not engine overhead.
              this.metrics.addServiceTime(turn, performance.now() - asked);
            }
            const language = this.flow.languages?.current;
            this.push(frame({ kind: 'agent_text' as const, text: action.text, turn, ...(language ? { language } : {}) }));
          }
          else {
            this.ended = true;
            this.push(frame({ kind: 'agent_action' as const, action, turn }));
          }
        }
      } finally {
        this.options.onNodeSettings?.(this.flow.nodeSettings);
        if (this.running === controller) {
          this.running = undefined;
          this.runningTurn = undefined;
        }
        if (!controller.signal.aborted) this.push(frame({ kind: 'turn_done' as const, turn }));
      }
    });
    return turn;
  }

  private armIdle(): void {
    this.stopIdle();
    if (this.ended) return;
    this.idleTimer = setTimeout(() => {
      // A turn still at work (a warm transfer briefing the human) is not the caller's silence.
      if (this.running) return this.armIdle();
      if (this.idlePrompts >= this.options.maxIdlePrompts) {
        this.ended = true;
        this.options.onGiveUp('timeout');
        return;
      }
      this.idlePrompts++;
      this.run((signal) => this.flow.idle(signal), { kind: 'idle', at: performance.now() });
    }, this.flow.nodeSettings.idleMs ?? this.options.idleMs);
    this.idleTimer.unref?.();
  }

  private stopIdle(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }
}

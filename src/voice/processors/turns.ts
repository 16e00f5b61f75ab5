/**
 * Turn-taking (docs/turn-taking.md): when the caller's turn is over, and whether speech over the
 * agent interrupts it. vad mode: any speech over the agent interrupts; a fixed VAD silence and the
 * STT's final words end a turn. adaptive mode: speech over the agent pauses (or ducks) it at once and
 * interrupts only when its words claim the turn (or it lasts); when the caller falls silent the
 * `EndOfTurn` judges what was heard and gives a wait; a likely end starts the reply at once (a
 * speculative `user_turn`, held downstream) and the wait's silence confirms it (`user_turn_verdict`).
 */
import { frame, type Direction, type Frame, type TurnEndReason, type UserStartedSpeakingFrame, type UserStoppedSpeakingFrame } from '../frames.js';
import { FrameProcessor } from '../pipeline.js';
import { BackchannelFilter, words } from '../turns/backchannel.js';
import { expectationOf, RuleBasedEndOfTurn, SPECULATE_AT, type EndOfTurn, type EndOfTurnDecision, type Prosody } from '../turns/end-of-turn.js';
import type { BargeInKind, TurnDecisionRecord, TurnTakingOptions } from '../turns/records.js';
import { TURN_TAKING_DEFAULTS, type TurnTakingSettings } from '../turns/settings.js';

/** After speech over the agent ends, how long its words may take to arrive before it is taken as a backchannel or noise. */
const BARGE_IN_WORDS_MS = 200;
/** ... and words of a sound let pass as a noise that come this late still judge it (a slow STT). */
const LATE_WORDS_MS = 1000;
/** Speech that interrupts this soon after words let pass as a backchannel carries them on ("Yes, ... that works"). */
const PASSED_KEEP_MS = 1500;

interface BargeIn {
  startedAt: number;
  finals: string[];
  interim: string;
  timer: NodeJS.Timeout | undefined;
  check: NodeJS.Timeout | undefined;
  paused: boolean;
}

export class TurnTakingProcessor extends FrameProcessor {
  readonly name = 'turns';
  private settings: TurnTakingSettings;
  private filter: BackchannelFilter;
  private endOfTurn: EndOfTurn;
  private botSpeaking = false;
  private speaking = false;
  /** The words of the caller's turn so far. */
  private finals: string[] = [];
  private interim = '';
  private lastFinalAt: number | undefined;
  /** When the turn's speech began and (last) ended. */
  private startedAt: number | undefined;
  private endedAt: number | undefined;
  private prosody: Prosody | undefined;
  private audio: { pcm: Int16Array; sampleRateHz: number } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private bargeIn: BargeIn | undefined;
  /** The speculative turn sent downstream and not yet judged. */
  private speculative: { text: string; decision: EndOfTurnDecision } | undefined;
  /** Bumped by anything that makes a decision in flight stale. */
  private generation = 0;
  /** Words last let pass as a backchannel: they begin the caller's turn if more follows at once ("Yes, ... that works"). */
  private passed: { text: string; at: number } | undefined;
  /** The last sound over the agent let pass as a noise, until its words could no longer come. */
  private noise: { startedAt: number; until: number } | undefined;
  /** The language the STT last said it heard (when it detects it): the turn's. */ private heardLanguage: string | undefined;

  constructor(private readonly options: TurnTakingOptions = {}) {
    super();
    this.settings = options.settings ?? TURN_TAKING_DEFAULTS;
    this.filter = new BackchannelFilter(this.settings.language, this.settings.backchannels, this.settings.minWords);
    this.endOfTurn = options.endOfTurn ?? new RuleBasedEndOfTurn(this.settings);
  }

  /** The settings of the node the conversation is in now. */
  update(settings: TurnTakingSettings): void {
    this.settings = settings;
    this.filter = new BackchannelFilter(settings.language, settings.backchannels, settings.minWords);
    if (!this.options.endOfTurn) this.endOfTurn = new RuleBasedEndOfTurn(settings);
  }

  private get adaptive(): boolean {
    return this.settings.mode === 'adaptive';
  }

  protected process(f: Frame, direction: Direction): void {
    switch (f.kind) {
      case 'bot_started_speaking':
        this.botSpeaking = true;
        // The reply starts while the caller speaks: judged as speech over the agent.
        if (this.speaking && this.adaptive && !this.bargeIn) this.startBargeIn(performance.now());
        break;
      case 'bot_stopped_speaking':
        this.botSpeaking = false;
        this.passed = undefined;
        if (this.bargeIn) this.takeOver();
        break;
      case 'user_started_speaking':
        this.onStarted(f);
        break;
      case 'user_stopped_speaking':
        this.onStopped(f);
        break;
      case 'transcription':
        if (f.language) this.heardLanguage = f.language;
        this.onWords(f.text, f.final);
        return;
      case 'end':
        clearTimeout(this.timer);
        this.clearBargeIn();
        break;
    }
    this.push(f, direction);
  }

  // -------------------------------------------------------------------------------------------
  // Speech and words

  private onStarted(f: UserStartedSpeakingFrame): void {
    const at = f.startedAt ?? f.at;
    this.speaking = true;
    this.options.onSpeech?.();
    if (this.botSpeaking) {
      if (!this.adaptive) this.interrupt('speech', at);
      else if (!this.bargeIn) this.startBargeIn(at);
      else clearTimeout(this.bargeIn.check);
      return;
    }
    if (this.bargeIn) return;
    this.startedAt ??= at;
    // The caller goes on: no end of turn yet.
    clearTimeout(this.timer);
    this.generation++;
    if (this.speculative) this.verdict(false);
  }

  private onStopped(f: UserStoppedSpeakingFrame): void {
    this.speaking = false;
    if (this.bargeIn) {
      this.judgeBargeInEnd();
      return;
    }
    this.endedAt = f.endedAt ?? f.at;
    this.prosody = f.prosody;
    this.audio = f.audio;
    if (this.adaptive) void this.evaluate();
    else if (this.finals.length > 0) this.emit('silence');
    else {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.emit('silence', true), this.options.finalWaitMs ?? 1500);
    }
  }

  private onWords(text: string, final: boolean): void {
    const b = this.bargeIn;
    if (!text.trim()) {
      // "No words": speech over the agent that ended without any was a noise.
      if (final && b && !this.speaking && !this.bargeInText(b)) this.ignore();
      return;
    }
    if (!b && this.noise && this.botSpeaking && performance.now() < this.noise.until) {
      // Words of a sound let pass as a noise, late: it is judged as speech over the agent after all.
      this.startBargeIn(this.noise.startedAt);
      return this.onWords(text, final);
    }
    if (b) {
      if (final) {
        if (text.trim()) b.finals.push(text.trim());
        b.interim = '';
      } else b.interim = text;
      this.judgeBargeIn();
      return;
    }
    if (final) {
      if (text.trim()) this.finals.push(text.trim());
      this.interim = '';
      this.lastFinalAt = performance.now();
    } else this.interim = text;
    if (this.speaking || this.endedAt === undefined) return;
    if (!this.adaptive) {
      if (final) this.emit('silence');
      return;
    }
    void this.evaluate();
  }

  private get text(): string {
    return [...this.finals, this.interim.trim()].filter(Boolean).join(' ').trim();
  }

  // -------------------------------------------------------------------------------------------
  // End of turn (adaptive)

  private async evaluate(): Promise<void> {
    clearTimeout(this.timer);
    const generation = ++this.generation;
    const text = this.text;
    const endedAt = this.endedAt!;
    if (!text) {
      // Words may follow; a sound without any is forgotten.
      this.timer = setTimeout(() => {
        if (!this.text && !this.speaking) this.reset();
      }, this.options.finalWaitMs ?? 1500);
      return;
    }
    const s = this.settings;
    const said = this.options.agentSaid?.();
    const decision = await this.endOfTurn.decide({
      text,
      final: this.interim.trim() === '',
      expectation: s.expect === 'auto' ? expectationOf(said) : s.expect,
      ...(this.prosody ? { prosody: this.prosody } : {}),
      ...(this.audio ? { audio: this.audio } : {}),
      ...(this.endOfTurn.wants?.context && this.options.conversation ? { context: this.options.conversation() } : {}),
      language: s.language,
    });
    if (generation !== this.generation || this.speaking) return;
    if (s.speculative && decision.probability >= SPECULATE_AT && this.interim.trim() === '' && this.speculative?.text !== text) {
      if (this.speculative) this.verdict(false);
      this.speculative = { text, decision };
      this.push(this.turnFrame(text, { speculative: true, endReason: 'speculative_hit', decision }));
    }
    const reason: TurnEndReason = decision.probability >= SPECULATE_AT ? 'transcript' : 'silence';
    this.timer = setTimeout(() => this.confirm(reason, decision), Math.max(0, endedAt + decision.waitMs - performance.now()));
  }

  private confirm(reason: TurnEndReason, decision: EndOfTurnDecision): void {
    if (this.speaking) return;
    // Words still being recognised: their final (due soon after the end of speech) decides, not an interim.
    if (this.interim.trim() && (this.lastFinalAt ?? 0) < (this.endedAt ?? 0) && performance.now() - (this.endedAt ?? 0) < (this.options.finalWaitMs ?? 1500)) {
      this.timer = setTimeout(() => this.confirm(reason, decision), 50);
      return;
    }
    const text = this.text;
    if (this.speculative && this.speculative.text === text) {
      this.push(frame({ kind: 'user_turn_verdict' as const, confirmed: true }));
      this.record('speculative_hit', decision);
      this.speculative = undefined;
      this.reset();
      return;
    }
    if (this.speculative) this.verdict(false);
    this.emit(reason, false, decision);
  }

  /** The speculative turn is not over after all: its reply is dropped. */
  private verdict(confirmed: false): void {
    const s = this.speculative!;
    this.speculative = undefined;
    this.push(frame({ kind: 'user_turn_verdict' as const, confirmed }));
    this.record('speculative_cancel', s.decision);
  }

  private turnFrame(text: string, extra: { speculative?: boolean; endReason: TurnEndReason; decision?: EndOfTurnDecision }) {
    const endedAt = this.endedAt ?? performance.now();
    return frame({
      kind: 'user_turn' as const,
      text,
      ...extra,
      speechEndedAt: endedAt,
      ...(this.startedAt !== undefined ? { speechStartedAt: this.startedAt } : {}), ...(this.heardLanguage ? { language: this.heardLanguage } : {}),
      sttWaitMs: this.lastFinalAt !== undefined ? Math.max(0, this.lastFinalAt - endedAt) : Math.max(0, performance.now() - endedAt),
    });
  }

  /** The turn is over: its words go to the agent (non-speculatively). */
  private emit(reason: TurnEndReason, useInterim = false, decision?: EndOfTurnDecision): void {
    clearTimeout(this.timer);
    const text = (useInterim ? this.text : this.finals.join(' ')).trim() || (this.adaptive ? this.text : '');
    if (!text || this.endedAt === undefined) {
      // Noise without words: the next words start a turn of their own.
      if (!this.speaking) this.reset();
      return;
    }
    this.push(this.turnFrame(text, { endReason: reason, ...(decision ? { decision } : {}) }));
    this.record(reason, decision, text);
    this.reset();
  }

  private record(reason: TurnEndReason, decision: EndOfTurnDecision | undefined, text = this.text): void {
    this.options.onTurn?.({
      end_reason: reason,
      words: words(text).length,
      ...(decision ? { wait_ms: decision.waitMs, eot_probability: decision.probability, eot_reason: decision.reason } : {}),
    });
  }

  private reset(): void {
    clearTimeout(this.timer);
    this.finals = [];
    this.interim = '';
    this.startedAt = undefined;
    this.endedAt = undefined;
    this.prosody = undefined;
    this.audio = undefined;
    this.lastFinalAt = undefined;
  }

  // -------------------------------------------------------------------------------------------
  // Barge-in

  private startBargeIn(at: number): void {
    const s = this.settings;
    const paused = s.onSpeech !== 'none';
    this.noise = undefined;
    if (paused) this.push(frame({ kind: 'output_pause' as const, level: s.onSpeech === 'duck' ? s.duckLevel : 0 }));
    const timer = setTimeout(() => this.judgeDuration(at), Math.max(0, at + s.maxSpeechMs - performance.now()));
    this.bargeIn = { startedAt: at, finals: [], interim: '', timer, check: undefined, paused };
  }

  private bargeInText(b: BargeIn): string {
    return [...b.finals, b.interim.trim()].filter(Boolean).join(' ').trim();
  }

  /** Whether the words over the agent claim the turn: final words that are not a backchannel, interim ones that cannot become one. */
  private claims(b: BargeIn): boolean {
    const text = this.bargeInText(b);
    if (!text) return false;
    return b.interim.trim() === '' ? !this.filter.isBackchannel(text) : !this.filter.mayBecomeBackchannel(text);
  }

  private judgeBargeIn(): void {
    const b = this.bargeIn!;
    const text = this.bargeInText(b);
    if (this.claims(b)) this.interrupt('words', b.startedAt);
    else if (!this.speaking && text && b.interim.trim() === '') this.ignore();
  }

  /** Speech over the agent lasted `maxSpeechMs`: it interrupts, unless its words are a backchannel's
   * (a drawn-out "mm-hmm", a late VAD): its end or next words decide (interim ones within a second). */
  private judgeDuration(at: number): void {
    const b = this.bargeIn;
    const text = b ? this.bargeInText(b) : '';
    const done = b !== undefined && b.interim.trim() === '' && this.filter.isBackchannel(text);
    const late = performance.now() - at;
    if (b && text && !this.claims(b) && (done || late < this.settings.maxSpeechMs + 1000)) b.timer = setTimeout(() => this.judgeDuration(at), 100);
    else this.interrupt('duration', at);
  }

  /** The speech over the agent ended: a backchannel or a noise, unless words that are not come soon. */
  private judgeBargeInEnd(): void {
    const b = this.bargeIn!;
    const text = this.bargeInText(b);
    if (text && b.interim.trim() === '' && this.filter.isBackchannel(text)) return this.ignore();
    clearTimeout(b.check);
    b.check = setTimeout(() => {
      if (this.bargeIn !== b || this.speaking) return;
      // Its words will not grow now: judged as they are.
      const text = this.bargeInText(b);
      if (text && !this.filter.isBackchannel(text)) this.interrupt('words', b.startedAt);
      else this.ignore();
    }, this.options.interimResults === false ? (this.options.finalWaitMs ?? 1500) : BARGE_IN_WORDS_MS);
  }

  /** Only a backchannel (or a noise): the agent goes on; the words are not a turn. */
  private ignore(): void {
    const b = this.bargeIn!;
    const text = this.bargeInText(b);
    this.clearBargeIn();
    if (text) this.passed = { text, at: performance.now() };
    this.noise = text ? undefined : { startedAt: b.startedAt, until: performance.now() + LATE_WORDS_MS };
    if (b.paused) this.push(frame({ kind: 'output_resume' as const }));
    this.options.onBargeIn?.({ kind: text ? 'ignored_backchannel' : 'ignored_noise', text, after_ms: Math.round(performance.now() - b.startedAt) });
  }

  /** Speech over the agent interrupts it: its words start the caller's turn. */
  private interrupt(kind: BargeInKind, startedAt: number): void {
    const b = this.bargeIn;
    this.clearBargeIn();
    const interruption = frame({ kind: 'interruption' as const });
    this.push(interruption, 'down');
    this.push(interruption, 'up');
    this.options.onBargeIn?.({ kind, text: b ? this.bargeInText(b) : '', after_ms: Math.round(performance.now() - startedAt) });
    this.reset();
    this.startedAt = startedAt;
    const passed = this.passed && startedAt - this.passed.at < PASSED_KEEP_MS ? [this.passed.text] : [];
    this.passed = undefined;
    if (b) {
      this.finals = [...passed, ...b.finals];
      this.interim = b.interim;
    }
    if (!this.speaking) {
      this.endedAt = performance.now();
      if (this.adaptive) void this.evaluate();
    }
  }

  /** The agent finished while speech over it was being judged: that speech is simply the caller's turn. */
  private takeOver(): void {
    const b = this.bargeIn!;
    this.clearBargeIn();
    this.startedAt = b.startedAt;
    this.finals = [...b.finals];
    this.interim = b.interim;
    if (!this.speaking) {
      this.endedAt = performance.now();
      void this.evaluate();
    }
  }

  private clearBargeIn(): void {
    if (!this.bargeIn) return;
    clearTimeout(this.bargeIn.timer);
    clearTimeout(this.bargeIn.check);
    this.bargeIn = undefined;
  }
}

/**
 * A call's turn-taking settings: the template's `turn_taking` (flow-wide, then the current node's
 * over it, key by key) over the defaults. The shape templates write is documented in
 * docs/turn-taking.md and checked when a template is saved.
 */
import type { TurnTaking } from '../flow/turn-taking.js';
import type { VadOptions } from '../services.js';
import type { Expectation } from './end-of-turn.js';

/** The template's shape (snake_case), at the flow's level or a node's (its schema: voice/flow/turn-taking.ts). */
export type TurnTakingConfig = TurnTaking;

export interface TurnTakingSettings {
  /** adaptive: barge-in confirmed by words, the end of turn from what was heard; vad: the plain VAD pipeline (any speech interrupts, a fixed silence ends the turn). */
  mode: 'adaptive' | 'vad';
  /** The backchannel lexicon's language (e.g. en, es, hi; a region such as en-US is fine). */
  language: string;
  /** Phrases added to the language's backchannel lexicon. */
  backchannels: string[];
  /** Speech over the agent interrupts once its words are not a backchannel, or reach this many words. */
  minWords: number;
  /** ... or once it has lasted this long, words or not. */
  maxSpeechMs: number;
  /** What the agent's audio does while speech over it is being judged. */
  onSpeech: 'pause' | 'duck' | 'none';
  /** The gain of ducked audio (0 to 1). */
  duckLevel: number;
  /** The silence after a surely complete turn, from the end of speech. */
  minWaitMs: number;
  /** The silence after a surely incomplete one (a trailing "and", a filler). */
  maxWaitMs: number;
  /** Start the reply on a likely end of turn, play it once the silence confirms it. */
  speculative: boolean;
  /** What the caller is expected to say; auto: from the agent's last question. */
  expect: 'auto' | Expectation;
  /** The TTS gets the first clause of a reply as soon as it is complete, not the first sentence. */
  firstClause: boolean;
  /** vad mode: the silence that ends a turn (the node's `vad.stop_secs`, else 600 ms). */
  silenceMs: number;
}

export const TURN_TAKING_DEFAULTS: TurnTakingSettings = {
  mode: 'adaptive',
  language: 'en',
  backchannels: [],
  minWords: 3,
  maxSpeechMs: 1500,
  onSpeech: 'pause',
  duckLevel: 0.25,
  minWaitMs: 600,
  maxWaitMs: 1600,
  speculative: true,
  expect: 'auto',
  firstClause: true,
  silenceMs: 600,
};

const defined = <T extends object>(o: T): Partial<T> => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;

function flatten(c: TurnTakingConfig | undefined): Partial<TurnTakingSettings> {
  if (!c) return {};
  return defined({
    mode: c.mode,
    language: c.language,
    backchannels: c.backchannels,
    minWords: c.barge_in?.min_words,
    maxSpeechMs: c.barge_in?.max_speech_ms,
    onSpeech: c.barge_in?.on_speech,
    duckLevel: c.barge_in?.duck_level,
    minWaitMs: c.end_of_turn?.min_wait_ms,
    maxWaitMs: c.end_of_turn?.max_wait_ms,
    speculative: c.end_of_turn?.speculative,
    expect: c.end_of_turn?.expect,
    firstClause: c.first_clause,
  });
}

/**
 * The settings in force in a node. `stopSecs` is the node's `vad.stop_secs`: the silence of the vad
 * mode, and in adaptive mode the longest wait unless `end_of_turn.max_wait_ms` says otherwise.
 */
export function resolveTurnTaking(flow: TurnTakingConfig | undefined, node: TurnTakingConfig | undefined, stopSecs?: number): TurnTakingSettings {
  const merged: TurnTakingSettings = { ...TURN_TAKING_DEFAULTS, ...flatten(flow), ...flatten(node) };
  merged.backchannels = [...(flow?.backchannels ?? []), ...(node?.backchannels ?? [])];
  // The plain VAD pipeline is today's engine as it was: no speculation, sentences to the TTS.
  if (merged.mode === 'vad') {
    merged.speculative = false;
    merged.firstClause = false;
  }
  if (stopSecs) {
    merged.silenceMs = stopSecs * 1000;
    if (node?.end_of_turn?.max_wait_ms === undefined && flow?.end_of_turn?.max_wait_ms === undefined) merged.maxWaitMs = Math.max(merged.minWaitMs, stopSecs * 1000);
  }
  return merged;
}

/**
 * What the VAD is asked for: in vad mode its silence ends the turn; in adaptive mode it only marks
 * where speech stopped (the end of turn decides the rest) and says early that speech started (to
 * pause the agent, or to see the caller go on).
 */
export function vadOptionsFor(settings: TurnTakingSettings): Partial<VadOptions> {
  return settings.mode === 'vad' ? { minSilenceMs: settings.silenceMs, minSpeechMs: 200 } : { minSilenceMs: 128, minSpeechMs: 128 };
}

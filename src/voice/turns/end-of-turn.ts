/**
 * End of turn: when the caller has stopped speaking, how sure is it that they have finished, and
 * how long to wait for more before the agent answers.
 *
 * Terminology
 * - evidence: what is known when the caller falls silent: the words so far (the speech-to-text's),
 *   whether they are final, the prosody the VAD saw, what the agent asked, the recent audio;
 * - decision: a probability that the turn is complete and the wait (from the end of speech) after
 *   which silence confirms it. A likely end (probability >= SPECULATE_AT) lets the agent start its
 *   reply at once (held until the wait is over: a speculative reply).
 *
 * `EndOfTurn` is the seam for a learned model: Smart Turn (audio in, probability out) or LiveKit's
 * turn detector (the conversation's text in, probability out), run on ONNX Runtime where its weights
 * are available, can implement `decide` from `audio` or `context` and map its probability to a wait
 * with `waitFor`. The rule-based implementation below needs no model.
 */
import { words } from './backchannel.js';

/** What the agent's last words asked for. */
export type Expectation = 'yes_no' | 'digits' | 'open';

export interface Prosody {
  /** Length of the last stretch of speech. */
  segmentMs: number;
  /** Level of the last 150 ms of speech against the whole stretch's, in dB (negative: it faded out). */
  finalLevelDb?: number;
  /** Pitch over the last 300 ms of voiced speech: falling (a statement's end), rising or level (more may come). */
  pitch?: 'falling' | 'rising' | 'level';
}

export interface TurnEvidence {
  /** The caller's words of this turn so far. */
  text: string;
  /** Whether the speech-to-text has finalised them (an interim may still change). */
  final: boolean;
  expectation: Expectation;
  prosody?: Prosody;
  language: string;
  /** The conversation so far, oldest first (for a text model). */
  context?: Array<{ role: 'user' | 'assistant'; content: string }>;
  /** The caller's most recent audio (up to 8 s) and its rate (for an audio model). */
  audio?: { pcm: Int16Array; sampleRateHz: number };
}

export type EndOfTurnReason = 'no_words' | 'filler' | 'trailing_word' | 'digits' | 'question' | 'answer' | 'short' | 'complete';

export interface EndOfTurnDecision {
  /** How likely the turn is complete, 0 to 1. */
  probability: number;
  /** Silence after the end of speech that confirms the end of the turn. */
  waitMs: number;
  reason: EndOfTurnReason | string;
}

export interface EndOfTurn {
  readonly label: string;
  decide(evidence: TurnEvidence): EndOfTurnDecision | Promise<EndOfTurnDecision>;
}

export interface EndOfTurnWaits {
  /** The wait after a turn that is surely complete (a question, a full sentence). */
  minWaitMs: number;
  /** The wait after a turn that is surely not (a trailing "and", a filler). */
  maxWaitMs: number;
}

/** From this probability on, a reply may start before the wait is over. */
export const SPECULATE_AT = 0.5;

/** A learned model's probability as a wait: certain ends wait the least, doubtful ones the most. */
export function waitFor(probability: number, waits: EndOfTurnWaits): number {
  const p = Math.min(1, Math.max(0, probability));
  return Math.round(waits.maxWaitMs - (waits.maxWaitMs - waits.minWaitMs) * p);
}

// ---------------------------------------------------------------------------------------------
// Rules (English words; other languages fall back to punctuation, prosody and length)

const FILLERS = new Set(['um', 'umm', 'uh', 'uhh', 'er', 'erm', 'hmm', 'mm', 'ah', 'eh', 'like', 'well']);
const FILLER_PHRASES = [['let', 'me', 'see'], ['let', 'me', 'think'], ['you', 'know'], ['i', 'mean'], ['kind', 'of'], ['sort', 'of']];
/** Words a finished sentence seldom ends on: conjunctions, prepositions, articles, auxiliaries, subjects. */
const TRAILING = new Set([
  'and', 'but', 'or', 'so', 'because', 'cause', 'then', 'if', 'that', 'which', 'who', 'when', 'where', 'while', 'although', 'though', 'unless', 'than',
  'to', 'of', 'for', 'with', 'at', 'in', 'on', 'from', 'about', 'by', 'into', 'onto', 'after', 'before', 'until', 'like', 'as', 'per', 'via',
  'a', 'an', 'the', 'my', 'your', 'our', 'their', 'his', 'her', 'its', 'this', 'these', 'those', 'some', 'any', 'every',
  'is', 'are', 'was', 'were', 'am', 'be', 'been', 'will', 'would', 'can', 'could', 'should', 'shall', 'may', 'might', 'must', 'do', 'does', 'did', 'have', 'has', 'had',
  'i', 'we', "i'm", "we're", "it's", "there's", "that's", "what's", "here's", "let's", "i'll", "we'll", "i'd", "we'd", "i've", "you're", "they're",
  'also', 'just', 'really', 'very', 'more', 'maybe', 'perhaps',
]);
/** A subject and one of these at the end wants a complement ("I think", "we want"). */
const OPEN_VERBS = new Set(['think', 'guess', 'wonder', 'want', 'need', 'mean', 'believe', 'hope', 'wish', 'suppose', 'prefer', 'said', 'feel', 'thought', 'wanted']);
const SUBJECTS = new Set(['i', 'we', 'you', 'they', 'he', 'she']);
const ANSWERS = new Set(['yes', 'yeah', 'yep', 'yup', 'no', 'nope', 'nah', 'sure', 'okay', 'ok', 'right', 'correct', 'exactly', 'absolutely', 'definitely', 'fine', 'alright', 'please', 'thanks']);
const DIGIT_WORDS = new Set(['zero', 'oh', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'double', 'triple', 'hundred']);
const AUXILIARIES = /^(do|does|did|is|are|was|were|am|can|could|will|would|shall|should|may|might|have|has|had|are|isn't|aren't|don't|doesn't|didn't|won't|wouldn't|can't|couldn't|shouldn't)\b/i;

/** What the agent's last words ask for: a yes or no, a number, or anything. */
export function expectationOf(agentText: string | undefined): Expectation {
  if (!agentText) return 'open';
  const sentences = agentText.trim().split(/(?<=[.!?])\s+/);
  const last = sentences[sentences.length - 1] ?? '';
  if (/\b(number|digits|code|pin|zip|postcode|postal code|account|phone|reference)\b/i.test(last) && /\?\s*$/.test(last)) return 'digits';
  if (/\?\s*$/.test(last) && (AUXILIARIES.test(last) || /\b(right|correct|okay|ok)\?\s*$/i.test(last))) return 'yes_no';
  return 'open';
}

const isDigit = (w: string) => /^\d+$/.test(w) || DIGIT_WORDS.has(w);

export class RuleBasedEndOfTurn implements EndOfTurn {
  readonly label = 'rules';

  constructor(private readonly waits: EndOfTurnWaits) {}

  decide(e: TurnEvidence): EndOfTurnDecision {
    const { minWaitMs: min, maxWaitMs: max } = this.waits;
    // A bare answer waits a little longer than a full sentence (callers often go on after one).
    const answer = Math.min(max, min + 200);
    const short = Math.min(max, min + 300);
    const w = words(e.text);
    const last = w[w.length - 1];
    const english = e.language.toLowerCase().startsWith('en');
    if (!last) return { probability: 0, waitMs: max, reason: 'no_words' };
    let d: EndOfTurnDecision;
    if (english && (FILLERS.has(last) || FILLER_PHRASES.some((p) => p.every((x, i) => w[w.length - p.length + i] === x)))) d = { probability: 0.1, waitMs: max, reason: 'filler' };
    else if (english && (TRAILING.has(last) || (OPEN_VERBS.has(last) && SUBJECTS.has(w[w.length - 2] ?? '')))) d = { probability: 0.15, waitMs: max, reason: 'trailing_word' };
    else if (e.expectation === 'digits' && isDigit(last) && w.filter(isDigit).length < 10) d = { probability: 0.3, waitMs: max, reason: 'digits' };
    else if (/\?\s*$/.test(e.text)) d = { probability: 0.9, waitMs: min, reason: 'question' };
    else if (ANSWERS.has(w[0]!) && w.every((x) => ANSWERS.has(x))) {
      // A bare answer word: complete after a yes/no question, but also how callers start a longer
      // reply ("Yes. And ..."): the agent's reply starts at once and plays after a longer wait.
      d = e.expectation === 'yes_no' ? { probability: 0.8, waitMs: answer, reason: 'answer' } : { probability: 0.6, waitMs: short, reason: 'short' };
    } else if (w.length <= 2) d = { probability: 0.6, waitMs: short, reason: 'short' };
    else d = { probability: 0.8, waitMs: min, reason: 'complete' };
    return adjust(d, e, this.waits);
  }
}

/** Prosody and a not-yet-final transcript move the probability a little; a doubtful end waits longer. */
function adjust(d: EndOfTurnDecision, e: TurnEvidence, waits: EndOfTurnWaits): EndOfTurnDecision {
  let p = d.probability;
  if (e.prosody?.pitch === 'falling') p += 0.1;
  else if (e.prosody?.pitch === 'rising' && d.reason !== 'question') p -= 0.1;
  if (e.prosody?.finalLevelDb !== undefined && e.prosody.finalLevelDb > -2 && d.reason !== 'question') p -= 0.05; // cut off, not faded out
  if (!e.final) p -= 0.1;
  p = Math.round(Math.min(1, Math.max(0, p)) * 100) / 100;
  const waitMs = p < SPECULATE_AT && d.waitMs < waits.maxWaitMs ? Math.max(d.waitMs, waitFor(p, waits)) : d.waitMs;
  return { probability: p, waitMs, reason: d.reason };
}

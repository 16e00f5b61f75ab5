/**
 * A template's `turn_taking` settings (at the flow's level, and per node over it): their schema for
 * the OpenAPI document, and the check of a written value, every problem with its JSON pointer.
 * What each setting does: docs/turn-taking.md.
 */
import { Type, type Static } from 'typebox';
import type { FieldError } from '../../lib/errors.js';

export const TURN_TAKING_LIMITS = {
  minWords: [1, 20],
  maxSpeechMs: [200, 10_000],
  waitMs: [0, 10_000],
} as const;

const open = { additionalProperties: true } as const;

export const TurnTakingSchema = Type.Object(
  {
    mode: Type.Optional(Type.Union([Type.Literal('adaptive'), Type.Literal('vad')], { description: 'adaptive (default) or vad: the plain VAD pipeline (any speech over the agent stops it; a fixed silence, vad.stop_secs, ends a turn)' })),
    language: Type.Optional(Type.String({ description: 'Language of the backchannel lexicon, e.g. en, es, fr, de, pt, hi (en-US is fine); default en' })),
    backchannels: Type.Optional(Type.Array(Type.String(), { description: 'Phrases added to the lexicon: said over the agent, they do not stop it' })),
    barge_in: Type.Optional(
      Type.Object(
        {
          min_words: Type.Optional(Type.Integer({ description: `Speech over the agent of this many words interrupts, backchannel or not (${TURN_TAKING_LIMITS.minWords.join('-')}, default 3)` })),
          max_speech_ms: Type.Optional(Type.Integer({ description: `Speech over the agent this long interrupts, words or not (${TURN_TAKING_LIMITS.maxSpeechMs.join('-')}, default 1500)` })),
          on_speech: Type.Optional(Type.Union([Type.Literal('pause'), Type.Literal('duck'), Type.Literal('none')], { description: 'What the agent does the moment speech starts over it, until it is judged (default pause)' })),
          duck_level: Type.Optional(Type.Number({ description: 'Gain of ducked audio, 0 to 1 (default 0.25)' })),
        },
        open,
      ),
    ),
    end_of_turn: Type.Optional(
      Type.Object(
        {
          min_wait_ms: Type.Optional(Type.Integer({ description: 'Silence that ends a surely complete turn, from the end of speech (default 600: about when a reply started at the end of speech is ready)' })),
          max_wait_ms: Type.Optional(Type.Integer({ description: 'Silence that ends a surely incomplete one, e.g. after a trailing "and" (default 1600; at least min_wait_ms)' })),
          speculative: Type.Optional(Type.Boolean({ description: 'Start the reply on a likely end of turn and play it once the silence confirms it (default true)' })),
          expect: Type.Optional(Type.Union([Type.Literal('auto'), Type.Literal('yes_no'), Type.Literal('digits'), Type.Literal('open')], { description: "What the caller is expected to say (default auto: from the agent's last question)" })),
        },
        open,
      ),
    ),
    first_clause: Type.Optional(Type.Boolean({ description: "Speak a reply's first clause as soon as it is complete, not its first sentence (default true)" })),
  },
  { ...open, description: 'Turn-taking: barge-in, end of turn, speculative replies (docs/turn-taking.md)' },
);

export type TurnTaking = Static<typeof TurnTakingSchema>;

const KEYS = ['mode', 'language', 'backchannels', 'barge_in', 'end_of_turn', 'first_clause'];
const BARGE_IN_KEYS = ['min_words', 'max_speech_ms', 'on_speech', 'duck_level'];
const END_OF_TURN_KEYS = ['min_wait_ms', 'max_wait_ms', 'speculative', 'expect'];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const show = (v: unknown) => {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
};

/** Checks one `turn_taking` value at `path` (e.g. `/flow/nodes/0/turn_taking`). */
export function validateTurnTaking(path: string, value: unknown): FieldError[] {
  const errors: FieldError[] = [];
  const add = (at: string, message: string) => errors.push({ path: at, message });
  if (!isObject(value)) {
    add(path, `must be an object, got ${show(value)}`);
    return errors;
  }
  const known = (at: string, o: Record<string, unknown>, keys: string[]) => {
    for (const k of Object.keys(o)) if (!keys.includes(k)) add(`${at}/${k}`, `is not a known field (known: ${keys.join(', ')})`);
  };
  const oneOf = (at: string, v: unknown, options: string[]) => {
    if (v !== undefined && !(typeof v === 'string' && options.includes(v))) add(at, `must be one of ${options.join(', ')}, got ${show(v)}`);
  };
  const integer = (at: string, v: unknown, [min, max]: readonly [number, number]) => {
    if (v !== undefined && !(Number.isInteger(v) && (v as number) >= min && (v as number) <= max)) add(at, `must be a whole number from ${min} to ${max}, got ${show(v)}`);
  };
  const boolean = (at: string, v: unknown) => {
    if (v !== undefined && typeof v !== 'boolean') add(at, `must be true or false, got ${show(v)}`);
  };
  known(path, value, KEYS);
  oneOf(`${path}/mode`, value.mode, ['adaptive', 'vad']);
  if (value.language !== undefined && !(typeof value.language === 'string' && /^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$/.test(value.language))) {
    add(`${path}/language`, `must be a language code such as en or en-US, got ${show(value.language)}`);
  }
  if (value.backchannels !== undefined) {
    if (!Array.isArray(value.backchannels)) add(`${path}/backchannels`, `must be an array of phrases, got ${show(value.backchannels)}`);
    else
      value.backchannels.forEach((p, i) => {
        if (typeof p !== 'string' || !p.trim() || p.length > 60) add(`${path}/backchannels/${i}`, `must be a phrase of 1 to 60 characters, got ${show(p)}`);
      });
  }
  boolean(`${path}/first_clause`, value.first_clause);
  if (value.barge_in !== undefined) {
    const at = `${path}/barge_in`;
    if (!isObject(value.barge_in)) add(at, `must be an object, got ${show(value.barge_in)}`);
    else {
      const b = value.barge_in;
      known(at, b, BARGE_IN_KEYS);
      integer(`${at}/min_words`, b.min_words, TURN_TAKING_LIMITS.minWords);
      integer(`${at}/max_speech_ms`, b.max_speech_ms, TURN_TAKING_LIMITS.maxSpeechMs);
      oneOf(`${at}/on_speech`, b.on_speech, ['pause', 'duck', 'none']);
      if (b.duck_level !== undefined && !(typeof b.duck_level === 'number' && b.duck_level >= 0 && b.duck_level <= 1)) add(`${at}/duck_level`, `must be a number from 0 to 1, got ${show(b.duck_level)}`);
    }
  }
  if (value.end_of_turn !== undefined) {
    const at = `${path}/end_of_turn`;
    if (!isObject(value.end_of_turn)) add(at, `must be an object, got ${show(value.end_of_turn)}`);
    else {
      const e = value.end_of_turn;
      known(at, e, END_OF_TURN_KEYS);
      integer(`${at}/min_wait_ms`, e.min_wait_ms, TURN_TAKING_LIMITS.waitMs);
      integer(`${at}/max_wait_ms`, e.max_wait_ms, TURN_TAKING_LIMITS.waitMs);
      if (Number.isInteger(e.min_wait_ms) && Number.isInteger(e.max_wait_ms) && (e.max_wait_ms as number) < (e.min_wait_ms as number)) {
        add(`${at}/max_wait_ms`, `must be at least min_wait_ms (${String(e.min_wait_ms)}), got ${show(e.max_wait_ms)}`);
      }
      boolean(`${at}/speculative`, e.speculative);
      oneOf(`${at}/expect`, e.expect, ['auto', 'yes_no', 'digits', 'open']);
    }
  }
  return errors;
}

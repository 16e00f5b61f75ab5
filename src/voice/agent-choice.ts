/**
 * Terminology
 * - agent choice: what a template chooses of its calls' AI services (a voice, an LLM model and its
 *   temperature, the speech-to-text language). Every field is optional; one left out, or a choice
 *   of null, keeps the service's default.
 * - agent options: what this Dialer offers to choose from, built from its configuration
 *   (src/providers/choices.ts): the voices of the configured speech service and of the local voice,
 *   the LLM models, the speech-to-text languages, and the defaults.
 *
 * - languages: the languages a template's calls may speak (BCP-47 tags), the first the one a call
 *   starts in. A call switches between them when the speech-to-text hears another of them
 *   (`detect_language`) or the flow calls the built-in `switch_language`; its speech-to-text, its
 *   voice (`language_voices`) and the LLM's instruction follow (voice/language.ts).
 *
 * A voice is named `provider:voice` (`openai:nova`, `elevenlabs:<voice id>`, `local:kal`), so one
 * list holds the voices of every speech service a call may use.
 */
import { Type, type Static } from 'typebox';
import type { FieldError } from '../lib/errors.js';

/** A BCP-47 language tag: a primary language subtag, then optional subtags (en, en-US, es-419, zh-Hant-TW). */
export const LANGUAGE_TAG = '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$';

export const AgentChoiceSchema = Type.Object(
  {
    voice: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'A voice of GET /agent-options, e.g. openai:nova or local:kal; default the configured speech service\'s voice' })),
    llm_model: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'An LLM model of GET /agent-options; default LLM_MODEL' })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2, description: 'Sampling temperature of the conversation\'s replies, 0 to 2; default LLM_TEMPERATURE, else the model\'s own' })),
    stt_language: Type.Optional(Type.String({ pattern: LANGUAGE_TAG, maxLength: 35, description: 'The callers\' language as a BCP-47 tag the speech-to-text accepts (GET /agent-options); default STT_LANGUAGE' })),
    languages: Type.Optional(
      Type.Array(Type.String({ pattern: LANGUAGE_TAG, maxLength: 35 }), {
        minItems: 1,
        maxItems: 10,
        uniqueItems: true,
        description: 'The languages its calls speak, as BCP-47 tags the speech-to-text takes; the first is the one a call starts in. A call switches between them mid-call (detect_language, or the built-in function switch_language)',
      }),
    ),
    language_voices: Type.Optional(
      Type.Record(Type.String({ pattern: LANGUAGE_TAG, maxLength: 35 }), Type.String({ minLength: 1, maxLength: 200 }), {
        description: 'The voice (of GET /agent-options) of each declared language, e.g. {"es-ES": "openai:nova"}; a language left out speaks with `voice` (the local espeak-ng voice: its voice of that language)',
      }),
    ),
    detect_language: Type.Optional(
      Type.Boolean({
        description: 'The speech-to-text reports the language each turn was spoken in and the call switches to it when it is one of `languages` (Deepgram nova-3 multilingual, AssemblyAI multilingual, OpenAI whisper-1); default false: only switch_language switches. On a realtime model (its transcription reports no language) switch_language, which the model is told to call, switches',
      }),
    ),
  },
  { additionalProperties: false, description: 'The voice, LLM and speech-to-text of this template\'s calls; a field left out (or null for the whole) keeps the service default' },
);
export type AgentChoice = Static<typeof AgentChoiceSchema>;

const Option = Type.Object({ id: Type.String(), label: Type.String(), default: Type.Boolean({ description: 'The one a template that chooses nothing gets' }) });
export const AgentOptionsSchema = Type.Object({
  voices: Type.Array(Type.Intersect([Option, Type.Object({ provider: Type.String({ description: 'openai, elevenlabs, cartesia, azure, google or local' }) })])),
  llm_models: Type.Array(Option, { description: 'Empty when no LLM is configured' }),
  stt_languages: Type.Array(Option, { description: 'Empty when no speech-to-text is configured' }),
  stt_language_match: Type.Union([Type.Literal('exact'), Type.Literal('language')], {
    description: 'exact: a listed tag; language: any tag of a listed language (the region is not sent: en-GB is heard as en)',
  }),
  temperature: Type.Union([Type.Number(), Type.Null()], { description: 'The default temperature (LLM_TEMPERATURE); null: the model\'s own' }),
  note: Type.Optional(Type.String({ description: 'Why some lists are empty' })),
});
export type AgentOptions = Static<typeof AgentOptionsSchema>;

/**
 * What is wrong with a template's choice on this Dialer (its shape is the schema's): a voice or a
 * model it does not offer, a language its speech-to-text does not take. Paths are under `base`.
 */
export function agentChoiceErrors(choice: AgentChoice | null | undefined, options: AgentOptions, base = '/agent'): FieldError[] {
  if (!choice) return [];
  const errors: FieldError[] = [];
  const offered = (list: Array<{ id: string }>) => (list.length ? list.map((o) => o.id).join(', ') : 'none');
  const why = options.note ? ` (${options.note})` : '';
  if (choice.voice !== undefined && !options.voices.some((v) => v.id === choice.voice)) {
    errors.push({ path: `${base}/voice`, message: `${JSON.stringify(choice.voice)} is not a voice this service offers; choose one of ${offered(options.voices)}` });
  }
  if (choice.llm_model !== undefined && !options.llm_models.some((m) => m.id === choice.llm_model)) {
    errors.push({ path: `${base}/llm_model`, message: `${JSON.stringify(choice.llm_model)} is not an LLM model this service offers; choose one of ${offered(options.llm_models)}${why}` });
  }
  if (choice.stt_language !== undefined && !sttTakes(options, choice.stt_language)) {
    errors.push({ path: `${base}/stt_language`, message: `${JSON.stringify(choice.stt_language)} is not a language the speech-to-text takes; choose one of ${offered(options.stt_languages)}${why}` });
  }
  errors.push(...languageErrors(choice, options, base));
  return errors;
}

/** The declared languages: each taken by the speech-to-text; the voices and the starting language among them. */
function languageErrors(choice: AgentChoice, options: AgentOptions, base: string): FieldError[] {
  const errors: FieldError[] = [];
  const why = options.note ? ` (${options.note})` : '';
  const declared = choice.languages ?? [];
  declared.forEach((tag, i) => {
    if (!sttTakes(options, tag)) errors.push({ path: `${base}/languages/${i}`, message: `${JSON.stringify(tag)} is not a language the speech-to-text takes${why}` });
  });
  const undeclared = (tag: string) => !declared.some((d) => d.toLowerCase() === tag.toLowerCase());
  if (choice.stt_language !== undefined && declared.length && undeclared(choice.stt_language)) {
    errors.push({ path: `${base}/stt_language`, message: `${JSON.stringify(choice.stt_language)} is not one of the template's languages (${declared.join(', ')}); a call starts in the first of them` });
  }
  for (const [tag, voice] of Object.entries(choice.language_voices ?? {})) {
    if (undeclared(tag)) errors.push({ path: `${base}/language_voices/${tag}`, message: `${JSON.stringify(tag)} is not one of the template's languages (${declared.join(', ') || 'none declared'})` });
    else if (!options.voices.some((v) => v.id === voice)) errors.push({ path: `${base}/language_voices/${tag}`, message: `${JSON.stringify(voice)} is not a voice this service offers` });
  }
  if (choice.detect_language && declared.length < 2) errors.push({ path: `${base}/detect_language`, message: 'needs at least two languages to switch between' });
  return errors;
}

function sttTakes(options: AgentOptions, tag: string): boolean {
  const wanted = tag.toLowerCase();
  const primary = wanted.split('-')[0]!;
  return options.stt_languages.some((l) => l.id.toLowerCase() === wanted || (options.stt_language_match === 'language' && l.id.toLowerCase() === primary));
}

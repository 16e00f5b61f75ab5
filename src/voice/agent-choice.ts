/**
 * Terminology
 * - agent choice: what a template chooses of its calls' AI services (a voice, an LLM model and its
 *   temperature, the speech-to-text language). Every field is optional; one left out, or a choice
 *   of null, keeps the service's default.
 * - agent options: what this Dialer offers to choose from, built from its configuration
 *   (src/providers/choices.ts): the voices of the configured speech service and of the local voice,
 *   the LLM models, the speech-to-text languages, and the defaults.
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
  return errors;
}

function sttTakes(options: AgentOptions, tag: string): boolean {
  const wanted = tag.toLowerCase();
  const primary = wanted.split('-')[0]!;
  return options.stt_languages.some((l) => l.id.toLowerCase() === wanted || (options.stt_language_match === 'language' && l.id.toLowerCase() === primary));
}

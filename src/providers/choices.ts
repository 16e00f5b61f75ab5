/**
 * A template's choices of voice, model, temperature and language, against what the configured
 * services offer: the options a template may choose from (`agentOptions`, GET /agent-options), and
 * the services of a call that chose (`chooser`). The one home of the rule "a template's
 * setting overrides the service default; a setting it leaves out keeps it".
 */
import type { LlmSettings, SttSettings, VoiceSettings } from '../config/voice.js';
import { FLITE_VOICES } from '../lib/speech.js';
import type { AgentChoice, AgentOptions } from '../voice/agent-choice.js';
import type { VoiceServices } from '../voice/conversation.js';
import type { LLM, STT, TTS } from '../voice/services.js';
import { createLlm } from './llm/index.js';
import { FallbackLLM, FallbackTTS } from './resilience.js';
import { SARVAM_STT_LANGUAGES } from './stt/sarvam.js';
import { createHearing, sttInLanguage } from './stt/index.js';
import type { SttFallbackNotice } from './stt/fallback.js';
import { AzureTTS } from './tts/azure.js';
import { CartesiaTTS } from './tts/cartesia.js';
import { GoogleTTS } from './tts/google.js';
import { ElevenLabsTTS } from './tts/elevenlabs.js';
import { LocalTTS } from './tts/espeak.js';
import { OpenAITTS } from './tts/openai.js';
import { SARVAM_SPEAKERS, SarvamTTS } from './tts/sarvam.js';

/** OpenAI's speech voices (`/audio/speech`); a compatible server with other names lists them in TTS_VOICES. */
export const OPENAI_VOICES = ['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer', 'verse'] as const;

/** The languages OpenAI's transcription (Whisper) takes, as ISO 639-1 codes. */
export const WHISPER_LANGUAGES = (
  'af ar az be bg bs ca cs cy da de el en es et fa fi fr gl he hi hr hu hy id is it ja kk kn ko lt lv mi mk mr ms ne nl no pl pt ro ru sk sl sr sv sw ta th tl tr uk ur vi zh'
).split(' ');

/** The languages of AssemblyAI's streaming models: English, and those of its multilingual model. */
export const ASSEMBLYAI_LANGUAGES = ['en', 'es', 'fr', 'de', 'it', 'pt'];

/** The languages and regional tags Deepgram's nova-2 streaming model takes. */
export const DEEPGRAM_LANGUAGES = (
  'bg ca zh zh-CN zh-TW zh-HK cs da da-DK nl nl-BE en en-US en-AU en-GB en-NZ en-IN et fi fr fr-CA de de-CH el hi hu id it ja ko ko-KR lv lt ms no pl pt pt-BR pt-PT ro ru sk es es-419 sv sv-SE th th-TH tr uk vi'
).split(' ');

/** Azure Speech's neural voices offered besides AZURE_SPEECH_VOICE and TTS_VOICES: its common ones, by locale. */
export const AZURE_VOICES = [
  'en-US-JennyNeural', 'en-US-GuyNeural', 'en-US-AriaNeural', 'en-US-DavisNeural', 'en-US-AvaMultilingualNeural', 'en-US-AndrewMultilingualNeural',
  'en-GB-SoniaNeural', 'en-GB-RyanNeural', 'en-IN-NeerjaNeural', 'en-IN-PrabhatNeural', 'es-ES-ElviraNeural', 'es-MX-DaliaNeural',
  'fr-FR-DeniseNeural', 'de-DE-KatjaNeural', 'it-IT-ElsaNeural', 'pt-BR-FranciscaNeural', 'hi-IN-SwaraNeural', 'hi-IN-MadhurNeural',
] as const;

/** Google Cloud Text-to-Speech voices offered besides GOOGLE_TTS_VOICE and TTS_VOICES. */
export const GOOGLE_VOICES = [
  'en-US-Neural2-F', 'en-US-Neural2-J', 'en-US-Neural2-C', 'en-US-Standard-C', 'en-GB-Neural2-A', 'en-GB-Neural2-B', 'en-IN-Neural2-A',
  'es-ES-Neural2-A', 'es-US-Neural2-A', 'fr-FR-Neural2-A', 'de-DE-Neural2-B', 'it-IT-Neural2-A', 'pt-BR-Neural2-A', 'hi-IN-Neural2-A', 'hi-IN-Neural2-B',
] as const;

/** The locales Azure's and Google's speech-to-text take that are offered to templates (both take many more; STT_LANGUAGE may name any). */
export const CLOUD_STT_LANGUAGES = (
  'en-US en-GB en-AU en-CA en-IN es-ES es-MX es-US fr-FR fr-CA de-DE it-IT pt-BR pt-PT nl-NL sv-SE da-DK nb-NO fi-FI pl-PL ru-RU tr-TR ar-SA hi-IN bn-IN ta-IN te-IN mr-IN ja-JP ko-KR zh-CN'
).split(' ');

type Configured = Exclude<VoiceSettings['services'], { missing: string }>;

/** The voices a call may speak with: the configured speech service's, then the local voice's. */
function voices(settings: VoiceSettings): AgentOptions['voices'] {
  const out: AgentOptions['voices'] = [];
  const tts = 'missing' in settings.services ? undefined : settings.services.tts;
  const add = (provider: string, names: readonly string[], byDefault: string | undefined, label: (name: string) => string) => {
    for (const name of new Set(names)) out.push({ id: `${provider}:${name}`, provider, label: label(name), default: name === byDefault });
  };
  if (tts?.provider === 'openai') {
    const names = settings.choices.ttsVoices.length ? settings.choices.ttsVoices : OPENAI_VOICES;
    add('openai', [tts.openai.voice, ...names], tts.openai.voice, (n) => `${n} (OpenAI speech)`);
  } else if (tts?.provider === 'elevenlabs') {
    add('elevenlabs', [tts.elevenlabs.voiceId, ...settings.choices.ttsVoices], tts.elevenlabs.voiceId, (n) => `${n} (ElevenLabs)`);
  } else if (tts?.provider === 'cartesia') {
    add('cartesia', [tts.cartesia.voiceId, ...settings.choices.ttsVoices], tts.cartesia.voiceId, (n) => `${n} (Cartesia)`);
  } else if (tts?.provider === 'sarvam') {
    const s = tts.sarvam;
    add('sarvam', [s.speaker, ...settings.choices.ttsVoices, ...(SARVAM_SPEAKERS[s.model] ?? [])], s.speaker, (n) => `${n} (Sarvam ${s.model}, ${s.language})`);
  } else if (tts?.provider === 'azure') {
    add('azure', [tts.azure.voice, ...settings.choices.ttsVoices, ...AZURE_VOICES], tts.azure.voice, (n) => `${n} (Azure Speech)`);
  } else if (tts?.provider === 'google') {
    add('google', [tts.google.voice, ...settings.choices.ttsVoices, ...GOOGLE_VOICES], tts.google.voice, (n) => `${n} (Google Cloud)`);
  }
  const local = settings.localVoice;
  const localDefault = !tts || tts.provider === 'local' ? local.voice : undefined;
  add('local', local.engine === 'flite' ? [local.voice, ...FLITE_VOICES] : [local.voice], localDefault, (n) => `${n} (local voice, ${local.engine})`);
  return out;
}

const languageNames = new Intl.DisplayNames(['en'], { type: 'language' });
/** "Spanish (es)", "English (United Kingdom) (en-GB)": the tag with its name, as a person picks it. */
function languageLabel(tag: string): string {
  try {
    const name = languageNames.of(tag);
    return name && name !== tag ? `${name} (${tag})` : tag;
  } catch {
    return tag;
  }
}

function sttLanguages(stt: SttSettings): { list: AgentOptions['stt_languages']; match: AgentOptions['stt_language_match'] } {
  if (stt.provider === 'deepgram') {
    const byDefault = stt.deepgram.language;
    return { list: [...new Set([byDefault, ...DEEPGRAM_LANGUAGES])].map((id) => ({ id, label: languageLabel(id), default: id === byDefault })), match: 'exact' };
  }
  if (stt.provider === 'sarvam') {
    const byDefault = stt.sarvam.language;
    return { list: [...new Set([byDefault, ...SARVAM_STT_LANGUAGES])].map((id) => ({ id, label: languageLabel(id), default: id === byDefault })), match: 'exact' };
  }
  if (stt.provider === 'assemblyai') {
    // English on its own model; the multilingual model's languages (it detects which is spoken).
    const byDefault = stt.assemblyai.language?.split('-')[0] ?? 'en';
    return { list: ASSEMBLYAI_LANGUAGES.map((id) => ({ id, label: languageLabel(id), default: id === byDefault })), match: 'language' };
  }
  if (stt.provider === 'azure' || stt.provider === 'google') {
    const byDefault = stt.provider === 'azure' ? stt.azure.language : stt.google.language;
    return { list: [...new Set([byDefault, ...CLOUD_STT_LANGUAGES])].map((id) => ({ id, label: languageLabel(id), default: id === byDefault })), match: 'exact' };
  }
  const byDefault = stt.openai.language;
  return { list: WHISPER_LANGUAGES.map((id) => ({ id, label: languageLabel(id), default: id === byDefault?.split('-')[0] })), match: 'language' };
}

/** What a template may choose on this Dialer, and the defaults. */
export function agentOptions(settings: VoiceSettings): AgentOptions {
  const configured = settings.services;
  if ('missing' in configured) {
    return { voices: voices(settings), llm_models: [], stt_languages: [], stt_language_match: 'exact', temperature: null, note: configured.missing };
  }
  const primary = configured.llm[0]!;
  const models = [...new Set([primary.model, ...settings.choices.llmModels])].map((id) => ({ id, label: id, default: id === primary.model }));
  const stt = sttLanguages(configured.stt);
  return { voices: voices(settings), llm_models: models, stt_languages: stt.list, stt_language_match: stt.match, temperature: primary.temperature ?? null };
}

/** The primary LLM with the template's model and temperature (the fallbacks keep theirs: they may be another provider). */
function chosenLlm(llms: LlmSettings[], fallbacks: LLM[], choice: AgentChoice): LLM | undefined {
  if (choice.llm_model === undefined && choice.temperature === undefined) return undefined;
  const primary = llms[0]!;
  const chosen = createLlm({ ...primary, model: choice.llm_model ?? primary.model, temperature: choice.temperature ?? primary.temperature });
  return new FallbackLLM([chosen, ...fallbacks]);
}

function chosenStt(configured: Configured, language: string | undefined, onSttFallback: ((notice: SttFallbackNotice) => void) | undefined): STT | undefined {
  if (language === undefined) return undefined;
  const fallback = configured.sttFallback && sttInLanguage(configured.sttFallback, language);
  return createHearing(sttInLanguage(configured.stt, language), fallback, onSttFallback);
}

/**
 * A voice with its retries (resilience.ts), and after it the local voice when TTS_FALLBACK=local:
 * a sentence the service keeps failing on before its first audio (429, 5xx, a broken connection,
 * a timeout) is then spoken locally rather than lost. Only for a voice at the local voice's rate
 * (the engine resamples one rate per stream).
 */
export function speaking(settings: VoiceSettings, voice: TTS): TTS {
  const local = settings.ttsFallback === 'local' && !(voice instanceof LocalTTS) && voice.sampleRateHz === LocalTTS.RATE_HZ ? new LocalTTS(settings.localVoice) : undefined;
  return new FallbackTTS(local ? [voice, local] : [voice]);
}

/** The speech service that speaks with `voice` (`provider:name`); undefined when no such service is configured now. */
function chosenTts(settings: VoiceSettings, configured: Configured, voice: string | undefined): TTS | undefined {
  if (voice === undefined) return undefined;
  const at = voice.indexOf(':');
  const provider = voice.slice(0, at);
  const name = voice.slice(at + 1);
  const t = configured.tts;
  if (provider === 'local') {
    const local = settings.localVoice;
    if (local.engine === 'flite' && !(FLITE_VOICES as readonly string[]).includes(name)) return undefined;
    return new FallbackTTS([new LocalTTS({ ...local, voice: name } as typeof local)]);
  }
  if (provider === 'openai' && t.provider === 'openai') return speaking(settings, new OpenAITTS({ ...t.openai, voice: name }));
  if (provider === 'elevenlabs' && t.provider === 'elevenlabs') return speaking(settings, new ElevenLabsTTS({ ...t.elevenlabs, voiceId: name }));
  if (provider === 'cartesia' && t.provider === 'cartesia') return speaking(settings, new CartesiaTTS({ ...t.cartesia, voiceId: name }));
  if (provider === 'azure' && t.provider === 'azure') return speaking(settings, new AzureTTS({ ...t.azure, voice: name }));
  if (provider === 'google' && t.provider === 'google') return speaking(settings, new GoogleTTS({ ...t.google, voice: name }));
  if (provider === 'sarvam' && t.provider === 'sarvam') return speaking(settings, new SarvamTTS({ ...t.sarvam, speaker: name }));
  return undefined;
}

/**
 * The voice of each of a template's languages that does not speak with its `voice`: the one
 * `language_voices` names, else (the local voice being espeak-ng) espeak-ng's voice of that
 * language. Hosted voices speak the languages of their models with the same voice; Flite's voices
 * are English.
 */
function languageVoices(settings: VoiceSettings, configured: Configured, choice: AgentChoice, tts: TTS): Record<string, TTS> {
  const out: Record<string, TTS> = {};
  const first = choice.languages?.[0];
  for (const language of choice.languages ?? []) {
    const named = choice.language_voices?.[language];
    const chosen = named ? chosenTts(settings, configured, named) : undefined;
    if (chosen) out[language] = chosen;
    else if (settings.localVoice.engine === 'espeak-ng' && tts.label === 'espeak-ng' && language !== first) {
      out[language] = new FallbackTTS([new LocalTTS({ ...settings.localVoice, voice: espeakVoice(language) })]);
    }
  }
  return out;
}

/** espeak-ng's voice of a language: its own tag for the few regional ones it has (en-us, es-419, pt-br), else the language (es, hi). */
function espeakVoice(tag: string): string {
  const lower = tag.toLowerCase();
  return ['en-us', 'en-gb', 'es-419', 'pt-br', 'fr-be', 'zh-yue'].includes(lower) ? lower : lower.split('-')[0]!;
}

/**
 * The services of a call, by its template's choice: what it chose over each default, the
 * default's own client where it chose nothing. A voice whose service is no longer configured (the
 * configuration changed since the template was saved) falls back to the default voice.
 */
export function chooser(settings: VoiceSettings, base: VoiceServices, fallbacks: LLM[], onSttFallback?: (notice: SttFallbackNotice) => void): (choice: AgentChoice) => VoiceServices {
  const configured = settings.services;
  // The clients of each choice are made once (a local voice warms its engine when made); templates' choices are few.
  const made = new Map<string, VoiceServices>();
  return (choice) => {
    if ('missing' in configured) return base;
    const key = JSON.stringify([choice.voice, choice.llm_model, choice.temperature, choice.stt_language, choice.languages, choice.language_voices]);
    let services = made.get(key);
    if (!services) {
      if (made.size >= 64) made.clear();
      const tts = chosenTts(settings, configured, choice.voice) ?? base.tts;
      const voices = languageVoices(settings, configured, choice, tts);
      services = {
        ...base,
        llm: chosenLlm(configured.llm, fallbacks, choice) ?? base.llm,
        stt: chosenStt(configured, choice.stt_language, onSttFallback) ?? base.stt,
        tts,
        ...(Object.keys(voices).length ? { voices } : {}),
      };
      made.set(key, services);
    }
    return services;
  };
}

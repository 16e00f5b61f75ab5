/**
 * The voice settings: which agent talks on calls, its AI services (an LLM and a speech-to-text
 * service need configuring: an API key, or the base URL of a local OpenAI-compatible server;
 * speech falls back to the local voice), the local voice, the VAD's runtime and call prices.
 *
 * A service that is not configured does not stop the start: the settings say what is missing
 * (`services.missing`), /health reports it and leads wait until it is configured. A value that is
 * set but wrong (a malformed URL, a temperature out of range) is a ConfigError.
 */
import { FLITE_VOICES, type LocalVoice } from '../lib/speech.js';
import { azureSpeech, googleCloud, type AzureSttSettings, type AzureTtsSettings, type GoogleSttSettings, type GoogleTtsSettings } from './cloud-speech.js';
import { ConfigError, either, httpUrl, oneOf, text, type Env } from './env.js';
import { realtimeSettings, type RealtimeSettings } from './realtime.js';

export type { AzureSttSettings, AzureTtsSettings, GoogleSttSettings, GoogleTtsSettings } from './cloud-speech.js';
export { GEMINI_LIVE, REALTIME_APPEND_MS, realtimeVoice, type RealtimeSettings } from './realtime.js';

const OPENAI = 'https://api.openai.com/v1';
const ANTHROPIC = 'https://api.anthropic.com/v1';

export interface LlmSettings {
  /** The wire protocol: OpenAI-compatible chat completions (default) or Anthropic's Messages API. */
  provider?: 'openai' | 'anthropic';
  /** e.g. https://api.openai.com/v1 (no trailing slash). */
  baseUrl: string;
  apiKey?: string | undefined;
  model: string;
  temperature?: number | undefined;
  /** Time allowed until the response headers arrive. */
  timeoutMs: number;
  /** Azure OpenAI: `api-key` header and `api-version` query instead of a bearer token. */
  azure?: { apiVersion: string };
}

export interface OpenAISttSettings {
  baseUrl: string;
  apiKey?: string | undefined;
  model: string;
  language?: string | undefined;
  timeoutMs: number;
}

export interface DeepgramSettings {
  apiKey: string;
  /** wss://api.deepgram.com */
  url: string;
  model: string;
  language: string;
}

export interface AssemblyAiSettings {
  apiKey: string;
  /** wss://streaming.assemblyai.com */
  url: string;
  /** The English model (another language takes the multilingual one). */
  model: string;
  language?: string | undefined;
}

export interface OpenAITtsSettings {
  baseUrl: string;
  apiKey?: string | undefined;
  model: string;
  voice: string;
  timeoutMs: number;
}

export interface ElevenLabsSettings {
  apiKey: string;
  voiceId: string;
  model: string;
  /** wss://api.elevenlabs.io */
  url: string;
}

export interface CartesiaSettings {
  apiKey: string;
  voiceId: string;
  model: string;
  /** The language of the speech (`en`, `es`, `hi` …). */
  language?: string | undefined;
  /** wss://api.cartesia.ai */
  url: string;
  timeoutMs: number;
}

/** Sarvam AI's Bulbul voice (REST `POST /text-to-speech`). */
export interface SarvamTtsSettings {
  apiKey: string;
  /** https://api.sarvam.ai */
  url: string;
  /** bulbul:v2 or bulbul:v3. */
  model: string;
  speaker: string;
  /** The language of the speech, as Sarvam names it (`hi-IN`, `ta-IN`, `en-IN` …). */
  language: string;
  timeoutMs: number;
}

/** Sarvam AI's streaming speech-to-text (WebSocket `/speech-to-text/ws`). */
export interface SarvamSttSettings {
  apiKey: string;
  /** https://api.sarvam.ai (the stream's socket is its ws:// or wss:// twin). */
  url: string;
  /** saarika:v2.5, or a saaras model. */
  model: string;
  /** The caller's language (`hi-IN` …), or `unknown` for Sarvam to detect it. */
  language: string;
}

/**
 * The voice Dialer speaks with when no speech service is configured (and the built-in agent and
 * the emulator's callees always): flite, compiled to WebAssembly and installed with Dialer from
 * npm; or the espeak-ng program at `espeakPath` (ESPEAK_NG_PATH).
 */
export type LocalVoiceSettings = LocalVoice;

export type SttSettings =
  | { provider: 'openai'; openai: OpenAISttSettings }
  | { provider: 'deepgram'; deepgram: DeepgramSettings }
  | { provider: 'assemblyai'; assemblyai: AssemblyAiSettings }
  | { provider: 'azure'; azure: AzureSttSettings }
  | { provider: 'google'; google: GoogleSttSettings }
  | { provider: 'sarvam'; sarvam: SarvamSttSettings };
export type TtsSettings =
  | { provider: 'openai'; openai: OpenAITtsSettings }
  | { provider: 'elevenlabs'; elevenlabs: ElevenLabsSettings }
  | { provider: 'cartesia'; cartesia: CartesiaSettings }
  | { provider: 'sarvam'; sarvam: SarvamTtsSettings }
  | { provider: 'azure'; azure: AzureTtsSettings }
  | { provider: 'google'; google: GoogleTtsSettings }
  | { provider: 'local' };

/** Prices, per unit, in one currency (USD by default). */
export interface Pricing {
  telephonyPerMinute: number;
  llmInputPerMillionTokens: number;
  llmOutputPerMillionTokens: number;
  sttPerMinute: number;
  ttsPerMillionCharacters: number;
  /** A realtime speech-to-speech model's tokens (audio and text), in and out. */
  realtimeInputPerMillionTokens: number;
  realtimeOutputPerMillionTokens: number;
}

export const DEFAULT_PRICING: Pricing = {
  telephonyPerMinute: 0.014,
  llmInputPerMillionTokens: 0.15,
  llmOutputPerMillionTokens: 0.6,
  sttPerMinute: 0.0043,
  ttsPerMillionCharacters: 15,
  realtimeInputPerMillionTokens: 32,
  realtimeOutputPerMillionTokens: 64,
};

export interface VoiceSettings {
  /** `flow` runs each lead's template with the AI services; `greeter` is the built-in demo agent that needs none. */
  agent: 'flow' | 'greeter';
  /** The AI services, or what is missing for them. `llm` lists the primary model and its fallback (LLM_FALLBACK_*). */
  services: { llm: LlmSettings[]; stt: SttSettings; /** STT_FALLBACK: hears the caller when `stt` fails mid-call. */ sttFallback?: SttSettings; tts: TtsSettings } | { missing: string };
  /** Set (DIALER_REALTIME_PROVIDER, DIALER_REALTIME_URL or DIALER_REALTIME_MODEL): flows run on this speech-to-speech model. */
  realtime?: RealtimeSettings | undefined;
  localVoice: LocalVoiceSettings;
  /** Which ONNX Runtime build runs the Silero VAD: native, wasm, or auto (native when it loads). */
  sileroRuntime: 'native' | 'wasm' | 'auto';
  pricing: Pricing;
  /**
   * What a template may choose besides the defaults (GET /agent-options): more models of the
   * primary LLM (LLM_MODELS) and more voices of the configured speech service (TTS_VOICES).
   */
  choices: { llmModels: string[]; ttsVoices: string[] };
  /** TTS_FALLBACK=local: the local voice speaks a sentence the speech service keeps failing on. */
  ttsFallback?: 'local' | undefined;
}

/** A comma-separated list, without blanks or repeats. */
const list = (env: Env, name: string): string[] => [...new Set((text(env, name) ?? '').split(',').map((s) => s.trim()).filter(Boolean))];

/** A service that is not configured (soft: reported, not fatal). */
class Missing extends Error {}

/**
 * An LLM: OpenAI-compatible (default) or Anthropic's Messages API (`LLM_PROVIDER`, for the fallback
 * `LLM_FALLBACK_PROVIDER`); `names` are the variables of its provider, base URL, key and model (the
 * primary's or the fallback's).
 */
function llm(env: Env, names: { provider: string; base: string; key: string; model: string }, primary: boolean): LlmSettings {
  const provider = choice(env, names.provider, ['openai', 'anthropic'], 'openai');
  const anthropic = provider === 'anthropic';
  const home = anthropic ? ANTHROPIC : OPENAI;
  const baseUrl = httpUrl(names.base, text(env, names.base) ?? home);
  const apiKey = text(env, names.key) ?? (primary || anthropic ? text(env, anthropic ? 'ANTHROPIC_API_KEY' : 'OPENAI_API_KEY') : undefined);
  if (baseUrl === home && !apiKey) {
    throw new Missing(
      anthropic
        ? `no LLM is configured: ${names.provider}=anthropic needs ${names.key} (or ANTHROPIC_API_KEY), or ${names.base} for a local server`
        : 'no LLM is configured: set LLM_API_KEY (or OPENAI_API_KEY), or LLM_BASE_URL for a local OpenAI-compatible server',
    );
  }
  const rawTemperature = primary ? text(env, 'LLM_TEMPERATURE') : undefined;
  const temperature = rawTemperature === undefined ? undefined : Number(rawTemperature);
  if (temperature !== undefined && !(temperature >= 0 && temperature <= 2)) throw new Missing(`LLM_TEMPERATURE must be between 0 and 2, got ${rawTemperature}`);
  const azureVersion = primary && !anthropic ? text(env, 'LLM_AZURE_API_VERSION') : undefined;
  // A fallback of the primary's provider takes its model unless it names one; another provider's has its own default.
  const sameAsPrimary = primary || provider === choice(env, 'LLM_PROVIDER', ['openai', 'anthropic'], 'openai');
  return {
    provider,
    baseUrl,
    apiKey,
    model: text(env, names.model) ?? (sameAsPrimary ? text(env, 'LLM_MODEL') : undefined) ?? (anthropic ? 'claude-sonnet-4-5' : 'gpt-4o-mini'),
    temperature,
    timeoutMs: 15_000,
    ...(azureVersion ? { azure: { apiVersion: azureVersion } } : {}),
  };
}

/** One of `choices`, or what is wrong (a soft problem: the agent is not ready). */
function choice<T extends string>(env: Env, name: string, choices: readonly T[], fallback: T): T {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!(choices as readonly string[]).includes(raw)) throw new Missing(`${name} must be ${either(choices)}, got "${raw}"`);
  return raw as T;
}

const SARVAM = 'https://api.sarvam.ai';

/** Sarvam's key and base URL (SARVAM_URL: a local server's), for its voice and its speech-to-text alike. */
function sarvam(env: Env, what: string): { apiKey: string; url: string } {
  const apiKey = text(env, 'SARVAM_API_KEY');
  if (!apiKey) throw new Missing(`Sarvam's ${what} needs SARVAM_API_KEY`);
  return { apiKey, url: httpUrl('SARVAM_URL', text(env, 'SARVAM_URL') ?? SARVAM) };
}

/** A cloud account's key and endpoint, or what is missing for it (a soft problem). */
function account<T extends object>(found: T | { missing: string }): T {
  if ('missing' in found) throw new Missing(found.missing);
  return found;
}

const STT_PROVIDERS = ['deepgram', 'assemblyai', 'azure', 'google', 'sarvam', 'openai'] as const;
type SttProvider = (typeof STT_PROVIDERS)[number];

function stt(env: Env): SttSettings {
  return sttOf(env, choice(env, 'STT_PROVIDER', STT_PROVIDERS, text(env, 'DEEPGRAM_API_KEY') ? 'deepgram' : text(env, 'ASSEMBLYAI_API_KEY') ? 'assemblyai' : 'openai'));
}

/**
 * STT_FALLBACK (`name`): the speech-to-text that hears the caller when the primary fails mid-call
 * (providers/stt/fallback.ts), configured by its own variables. Unlike a missing primary, a
 * fallback that is unknown, the primary itself, or missing its keys stops the start.
 */
function sttFallback(env: Env, name: SttProvider | 'none', primary: SttSettings): SttSettings | undefined {
  if (name === 'none') return undefined;
  if (name === primary.provider) throw new ConfigError(`STT_FALLBACK=${name} is the primary speech-to-text (STT_PROVIDER) itself: name another service`);
  try {
    return sttOf(env, name);
  } catch (err) {
    throw err instanceof Missing ? new ConfigError(`STT_FALLBACK=${name}: ${err.message}`) : err;
  }
}

function sttOf(env: Env, provider: SttProvider): SttSettings {
  if (provider === 'sarvam') {
    const language = text(env, 'STT_LANGUAGE') ?? text(env, 'SARVAM_LANGUAGE') ?? 'hi-IN';
    return { provider, sarvam: { ...sarvam(env, 'speech-to-text'), model: text(env, 'SARVAM_STT_MODEL') ?? 'saarika:v2.5', language } };
  }
  if (provider === 'azure') return { provider, azure: { ...account(azureSpeech(env, 'stt')), language: text(env, 'STT_LANGUAGE') ?? 'en-US', timeoutMs: 10_000 } };
  if (provider === 'google') {
    return { provider, google: { ...account(googleCloud(env, 'stt')), language: text(env, 'STT_LANGUAGE') ?? 'en-US', model: text(env, 'GOOGLE_STT_MODEL'), timeoutMs: 15_000 } };
  }
  if (provider === 'assemblyai') {
    const apiKey = text(env, 'ASSEMBLYAI_API_KEY');
    if (!apiKey) throw new Missing('AssemblyAI needs ASSEMBLYAI_API_KEY');
    const url = (text(env, 'ASSEMBLYAI_URL') ?? 'wss://streaming.assemblyai.com').replace(/\/+$/, '');
    if (!/^wss?:\/\/[^/]+/.test(url)) throw new ConfigError(`ASSEMBLYAI_URL must be a ws:// or wss:// URL, got "${url}"`);
    return { provider, assemblyai: { apiKey, url, model: text(env, 'ASSEMBLYAI_MODEL') ?? 'universal-streaming-english', language: text(env, 'STT_LANGUAGE') } };
  }
  if (provider === 'deepgram') {
    const apiKey = text(env, 'DEEPGRAM_API_KEY');
    if (!apiKey) throw new Missing('Deepgram needs DEEPGRAM_API_KEY');
    return {
      provider,
      deepgram: {
        apiKey,
        url: (text(env, 'DEEPGRAM_URL') ?? 'wss://api.deepgram.com').replace(/\/+$/, ''),
        model: text(env, 'DEEPGRAM_MODEL') ?? 'nova-2',
        language: text(env, 'STT_LANGUAGE') ?? 'en-US',
      },
    };
  }
  const baseUrl = httpUrl('STT_BASE_URL', text(env, 'STT_BASE_URL') ?? OPENAI);
  const apiKey = text(env, 'STT_API_KEY') ?? text(env, 'OPENAI_API_KEY');
  if (baseUrl === OPENAI && !apiKey) throw new Missing('no speech-to-text is configured: set STT_API_KEY (or OPENAI_API_KEY), or STT_BASE_URL for a local server');
  return { provider, openai: { baseUrl, apiKey, model: text(env, 'STT_MODEL') ?? 'whisper-1', language: text(env, 'STT_LANGUAGE'), timeoutMs: 20_000 } };
}

function tts(env: Env): TtsSettings {
  const guess = text(env, 'ELEVENLABS_API_KEY') ? 'elevenlabs' : text(env, 'CARTESIA_API_KEY') ? 'cartesia' : text(env, 'TTS_BASE_URL') || text(env, 'TTS_API_KEY') ? 'openai' : 'local';
  // `espeak` is the older name of the local voice.
  const provider = choice(env, 'TTS_PROVIDER', ['openai', 'elevenlabs', 'cartesia', 'azure', 'google', 'sarvam', 'local', 'espeak'], guess);
  if (provider === 'sarvam') {
    const model = text(env, 'SARVAM_TTS_MODEL') ?? 'bulbul:v2';
    const speaker = text(env, 'SARVAM_SPEAKER') ?? (model.startsWith('bulbul:v2') ? 'anushka' : 'shubh');
    return { provider, sarvam: { ...sarvam(env, 'voice'), model, speaker, language: text(env, 'SARVAM_LANGUAGE') ?? 'hi-IN', timeoutMs: 15_000 } };
  }
  if (provider === 'azure') return { provider, azure: { ...account(azureSpeech(env, 'tts')), voice: text(env, 'AZURE_SPEECH_VOICE') ?? 'en-US-JennyNeural', timeoutMs: 10_000 } };
  if (provider === 'google') return { provider, google: { ...account(googleCloud(env, 'tts')), voice: text(env, 'GOOGLE_TTS_VOICE') ?? 'en-US-Neural2-F', timeoutMs: 10_000 } };
  if (provider === 'cartesia') {
    const apiKey = text(env, 'CARTESIA_API_KEY');
    const voiceId = text(env, 'CARTESIA_VOICE_ID');
    if (!apiKey || !voiceId) throw new Missing('Cartesia needs CARTESIA_API_KEY and CARTESIA_VOICE_ID');
    const url = (text(env, 'CARTESIA_URL') ?? 'wss://api.cartesia.ai').replace(/\/+$/, '');
    if (!/^wss?:\/\/[^/]+/.test(url)) throw new ConfigError(`CARTESIA_URL must be a ws:// or wss:// URL, got "${url}"`);
    return { provider, cartesia: { apiKey, voiceId, model: text(env, 'CARTESIA_MODEL') ?? 'sonic-2', language: text(env, 'CARTESIA_LANGUAGE') ?? 'en', url, timeoutMs: 10_000 } };
  }
  if (provider === 'openai') {
    const baseUrl = httpUrl('TTS_BASE_URL', text(env, 'TTS_BASE_URL') ?? OPENAI);
    const apiKey = text(env, 'TTS_API_KEY') ?? text(env, 'OPENAI_API_KEY');
    if (baseUrl === OPENAI && !apiKey) throw new Missing('OpenAI speech needs TTS_API_KEY (or OPENAI_API_KEY), or TTS_BASE_URL for a local server');
    return { provider, openai: { baseUrl, apiKey, model: text(env, 'TTS_MODEL') ?? 'tts-1', voice: text(env, 'TTS_VOICE') ?? 'alloy', timeoutMs: 15_000 } };
  }
  if (provider === 'elevenlabs') {
    const apiKey = text(env, 'ELEVENLABS_API_KEY');
    const voiceId = text(env, 'ELEVENLABS_VOICE_ID');
    if (!apiKey || !voiceId) throw new Missing('ElevenLabs needs ELEVENLABS_API_KEY and ELEVENLABS_VOICE_ID');
    return {
      provider,
      elevenlabs: { apiKey, voiceId, model: text(env, 'ELEVENLABS_MODEL') ?? 'eleven_turbo_v2_5', url: (text(env, 'ELEVENLABS_URL') ?? 'wss://api.elevenlabs.io').replace(/\/+$/, '') },
    };
  }
  return { provider: 'local' };
}

/** DIALER_PRICING: JSON with any of the Pricing keys, e.g. {"telephonyPerMinute":0.0085}; the rest keep their defaults. */
function pricing(env: Env): Pricing {
  const raw = text(env, 'DIALER_PRICING');
  if (!raw) return DEFAULT_PRICING;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError('DIALER_PRICING must be a JSON object');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new ConfigError('DIALER_PRICING must be a JSON object');
  const prices: Pricing = { ...DEFAULT_PRICING };
  for (const [key, value] of Object.entries(parsed)) {
    if (!(key in DEFAULT_PRICING)) throw new ConfigError(`DIALER_PRICING: unknown price "${key}" (known: ${Object.keys(DEFAULT_PRICING).join(', ')})`);
    if (typeof value !== 'number' || !(value >= 0)) throw new ConfigError(`DIALER_PRICING: ${key} must be a number >= 0`);
    prices[key as keyof Pricing] = value;
  }
  return prices;
}

/** The local voice: flite (default voice `slt`), or espeak-ng (voice `en-us`) when ESPEAK_NG_PATH names the program. */
export function localVoiceSettings(env: Env): LocalVoiceSettings {
  const espeakPath = text(env, 'ESPEAK_NG_PATH');
  if (espeakPath) return { engine: 'espeak-ng', voice: text(env, 'ESPEAK_VOICE') ?? 'en-us', espeakPath };
  return { engine: 'flite', voice: oneOf(env, 'FLITE_VOICE', FLITE_VOICES, 'slt') };
}

export function voiceSettings(env: Env): VoiceSettings {
  const agent = oneOf(env, 'DIALER_AGENT', ['flow', 'greeter'], 'flow');
  let services: VoiceSettings['services'];
  let realtimeModel: RealtimeSettings | undefined;
  const sttFallbackName = oneOf(env, 'STT_FALLBACK', ['none', ...STT_PROVIDERS], 'none');
  try {
    const chosen = realtimeSettings(env);
    realtimeModel = chosen && account(chosen);
    const llms = [llm(env, { provider: 'LLM_PROVIDER', base: 'LLM_BASE_URL', key: 'LLM_API_KEY', model: 'LLM_MODEL' }, true)];
    // A second LLM takes over when the first keeps failing before it answers.
    if (text(env, 'LLM_FALLBACK_BASE_URL') || text(env, 'LLM_FALLBACK_PROVIDER')) {
      llms.push(llm(env, { provider: 'LLM_FALLBACK_PROVIDER', base: 'LLM_FALLBACK_BASE_URL', key: 'LLM_FALLBACK_API_KEY', model: 'LLM_FALLBACK_MODEL' }, false));
    }
    const hearing = stt(env);
    const fallback = sttFallback(env, sttFallbackName, hearing);
    services = { llm: llms, stt: hearing, ...(fallback ? { sttFallback: fallback } : {}), tts: tts(env) };
  } catch (err) {
    if (!(err instanceof Missing)) throw err;
    services = { missing: err.message };
  }
  return {
    agent,
    services,
    ...(realtimeModel ? { realtime: realtimeModel } : {}),
    localVoice: localVoiceSettings(env),
    sileroRuntime: oneOf(env, 'SILERO_RUNTIME', ['native', 'wasm', 'auto'], 'auto'),
    pricing: pricing(env),
    choices: { llmModels: list(env, 'LLM_MODELS'), ttsVoices: list(env, 'TTS_VOICES') },
    ...(oneOf(env, 'TTS_FALLBACK', ['none', 'local'], 'none') === 'local' ? { ttsFallback: 'local' as const } : {}),
  };
}

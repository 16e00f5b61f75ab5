/**
 * The realtime speech-to-speech model that runs the templates' flows instead of the chat pipeline,
 * when one is chosen (DIALER_REALTIME_URL, DIALER_REALTIME_MODEL or DIALER_REALTIME_PROVIDER): the
 * OpenAI Realtime API or Google's Gemini Live API. A malformed value is a ConfigError; a missing key
 * is returned, for the voice settings to report.
 */
import { ConfigError, list, oneOf, text, wholeNumber, type Env } from './env.js';

/** A realtime speech-to-speech model that runs the templates' flows instead of the chat pipeline. */
export interface RealtimeSettings {
  /** The wire protocol: the OpenAI Realtime API (default) or Google's Gemini Live API. */
  provider?: 'openai' | 'gemini';
  /**
   * wss://api.openai.com/v1/realtime (the model goes in its `model` query parameter), or Gemini
   * Live's BidiGenerateContent endpoint (the key goes in its `key` query parameter).
   */
  url: string;
  apiKey?: string | undefined;
  model: string;
  voice: string;
  /**
   * The voice of a call's language where it is not `voice` (DIALER_REALTIME_LANGUAGE_VOICES), keyed
   * by a template's declared tag (`es-ES`) or a primary language (`es`).
   */
  languageVoices?: Record<string, string>;
  /** The model that transcribes the caller's turns for the record (OpenAI; Gemini Live transcribes with its own). */
  transcriptionModel?: string;
  connectTimeoutMs: number;
  /** The caller's audio goes to the model in pieces this long (ms; default REALTIME_APPEND_MS): fewer, larger messages than one per 20 ms frame. */
  appendMs?: number;
}

/** How much of the caller's audio goes to the model in one message, unless DIALER_REALTIME_APPEND_MS says otherwise. */
export const REALTIME_APPEND_MS = 60;

const OPENAI_REALTIME = 'wss://api.openai.com/v1/realtime';
export const GEMINI_LIVE = 'wss://generativelanguage.googleapis.com/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent';

/** The realtime model, when one is chosen; a wrong URL is a ConfigError, a missing key is returned (a soft problem). */
export function realtimeSettings(env: Env): RealtimeSettings | { missing: string } | undefined {
  const rawUrl = text(env, 'DIALER_REALTIME_URL');
  const model = text(env, 'DIALER_REALTIME_MODEL');
  const chosen = text(env, 'DIALER_REALTIME_PROVIDER');
  if (!rawUrl && !model && !chosen) return undefined;
  const provider = oneOf(env, 'DIALER_REALTIME_PROVIDER', ['openai', 'gemini'], 'openai');
  const appendMs = wholeNumber(env, 'DIALER_REALTIME_APPEND_MS', REALTIME_APPEND_MS, 20, 500);
  const vendorUrl = provider === 'gemini' ? GEMINI_LIVE : OPENAI_REALTIME;
  const url = (rawUrl ?? vendorUrl).replace(/\/+$/, '');
  if (!/^wss?:\/\/[^/]+/.test(url)) throw new ConfigError(`DIALER_REALTIME_URL must be a ws:// or wss:// URL, got "${rawUrl}"`);
  const voices = languageVoices(env);
  if (provider === 'gemini') {
    const apiKey = text(env, 'DIALER_REALTIME_API_KEY') ?? text(env, 'GEMINI_API_KEY');
    if (url === GEMINI_LIVE && !apiKey) return { missing: 'the Gemini Live API needs DIALER_REALTIME_API_KEY (or GEMINI_API_KEY), or DIALER_REALTIME_URL for a local server' };
    return { provider, url, apiKey, model: model ?? 'gemini-3.8-live', voice: text(env, 'DIALER_REALTIME_VOICE') ?? 'Puck', ...voices, connectTimeoutMs: 10_000, appendMs };
  }
  const apiKey = text(env, 'DIALER_REALTIME_API_KEY') ?? text(env, 'OPENAI_API_KEY');
  if (url === OPENAI_REALTIME && !apiKey) return { missing: 'the OpenAI Realtime API needs DIALER_REALTIME_API_KEY (or OPENAI_API_KEY), or DIALER_REALTIME_URL for a local server' };
  return {
    provider,
    url,
    apiKey,
    model: model ?? 'gpt-4o-realtime-preview',
    voice: text(env, 'DIALER_REALTIME_VOICE') ?? 'alloy',
    ...voices,
    transcriptionModel: 'whisper-1',
    connectTimeoutMs: 10_000,
    appendMs,
  };
}

/** DIALER_REALTIME_LANGUAGE_VOICES: `es-ES=Kore,hi-IN=Charon`, a voice per language. */
function languageVoices(env: Env): { languageVoices?: Record<string, string> } {
  const pairs = list(env, 'DIALER_REALTIME_LANGUAGE_VOICES');
  if (!pairs.length) return {};
  const voices: Record<string, string> = {};
  for (const pair of pairs) {
    const m = /^([A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*)\s*=\s*(\S+)$/.exec(pair);
    if (!m) throw new ConfigError(`DIALER_REALTIME_LANGUAGE_VOICES must be language=voice pairs separated by commas (es-ES=Kore,hi-IN=Charon), got "${pair}"`);
    voices[m[1]!] = m[2]!;
  }
  return { languageVoices: voices };
}

/** The model's voice for a call speaking `language` (its own voice, else the primary language's, else the default). */
export function realtimeVoice(settings: Pick<RealtimeSettings, 'voice' | 'languageVoices'>, language: string | undefined): string {
  const voices = settings.languageVoices;
  if (!language || !voices) return settings.voice;
  const wanted = language.toLowerCase();
  const primary = wanted.split('-')[0]!;
  const entries = Object.entries(voices);
  return (entries.find(([tag]) => tag.toLowerCase() === wanted) ?? entries.find(([tag]) => tag.toLowerCase() === primary) ?? entries.find(([tag]) => tag.toLowerCase().split('-')[0] === primary))?.[1] ?? settings.voice;
}

/**
 * The settings of the cloud speech services reached with one account key for both directions:
 * Azure Speech (a Speech resource's key and region) and Google Cloud (an API key). What is missing
 * is returned, for the voice settings to report; a malformed value is a ConfigError.
 */
import { ConfigError, httpUrl, text, type Env } from './env.js';

/** Azure Speech's voice: SSML posted to its text-to-speech REST endpoint, PCM streamed back. */
export interface AzureTtsSettings {
  apiKey: string;
  /** https://{region}.tts.speech.microsoft.com/cognitiveservices/v1 */
  url: string;
  /** A neural voice's name, e.g. en-US-JennyNeural (its locale is the SSML's language). */
  voice: string;
  timeoutMs: number;
}

/** Azure Speech's speech-to-text over its streaming WebSocket. */
export interface AzureSttSettings {
  apiKey: string;
  /** wss://{region}.stt.speech.microsoft.com/speech/recognition/conversation/cognitiveservices/v1 */
  url: string;
  /** A locale, e.g. en-US. */
  language: string;
  /** For the WebSocket to open. */
  timeoutMs: number;
}

/** Google Cloud Text-to-Speech (`text:synthesize`, REST with an API key). */
export interface GoogleTtsSettings {
  apiKey: string;
  /** https://texttospeech.googleapis.com/v1 */
  url: string;
  /** A voice's name, e.g. en-US-Neural2-F (its first two parts are its languageCode). */
  voice: string;
  timeoutMs: number;
}

/** Google Cloud Speech-to-Text v1 (`speech:recognize`, REST with an API key), one request per spoken segment. */
export interface GoogleSttSettings {
  apiKey: string;
  /** https://speech.googleapis.com/v1 */
  url: string;
  /** A BCP-47 tag, e.g. en-US. */
  language: string;
  /** The recognition model (`phone_call`, `latest_short` …); unset: the service's default for the language. */
  model?: string | undefined;
  timeoutMs: number;
}

/**
 * Azure Speech's key and the endpoint of `kind`: AZURE_SPEECH_TTS_URL / AZURE_SPEECH_STT_URL, else
 * the region's (AZURE_SPEECH_REGION). Chosen explicitly (TTS_PROVIDER / STT_PROVIDER=azure).
 * What is missing when the key or the endpoint is.
 */
export function azureSpeech(env: Env, kind: 'tts' | 'stt'): { apiKey: string; url: string } | { missing: string } {
  const apiKey = text(env, 'AZURE_SPEECH_KEY');
  const region = text(env, 'AZURE_SPEECH_REGION');
  if (region !== undefined && !/^[a-z0-9]+$/.test(region)) throw new ConfigError(`AZURE_SPEECH_REGION must be a region name such as eastus, got "${region}"`);
  const name = kind === 'tts' ? 'AZURE_SPEECH_TTS_URL' : 'AZURE_SPEECH_STT_URL';
  const raw = text(env, name);
  const url = (
    raw ??
    (region === undefined
      ? undefined
      : kind === 'tts'
        ? `https://${region}.tts.speech.microsoft.com/cognitiveservices/v1`
        : `wss://${region}.stt.speech.microsoft.com/speech/recognition/conversation/cognitiveservices/v1`)
  )?.replace(/\/+$/, '');
  if (!apiKey || !url) return { missing: `Azure Speech needs AZURE_SPEECH_KEY and AZURE_SPEECH_REGION (or ${name})` };
  const scheme = kind === 'tts' ? /^https?:\/\/[^/]+/ : /^wss?:\/\/[^/]+/;
  if (!scheme.test(url)) throw new ConfigError(`${name} must be ${kind === 'tts' ? 'an http(s)' : 'a ws:// or wss://'} URL, got "${url}"`);
  return { apiKey, url };
}

/** Google Cloud's API key and the base URL of its Text-to-Speech or Speech-to-Text API (GOOGLE_TTS_URL / GOOGLE_STT_URL for a local server). */
export function googleCloud(env: Env, kind: 'tts' | 'stt'): { apiKey: string; url: string } | { missing: string } {
  const apiKey = text(env, 'GOOGLE_API_KEY');
  if (!apiKey) return { missing: `Google Cloud ${kind === 'tts' ? 'Text-to-Speech' : 'Speech-to-Text'} needs GOOGLE_API_KEY` };
  const name = kind === 'tts' ? 'GOOGLE_TTS_URL' : 'GOOGLE_STT_URL';
  const url = httpUrl(name, text(env, name) ?? (kind === 'tts' ? 'https://texttospeech.googleapis.com/v1' : 'https://speech.googleapis.com/v1'));
  return { apiKey, url };
}

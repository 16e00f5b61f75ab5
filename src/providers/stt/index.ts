import type { SttSettings } from '../../config/voice.js';
import type { STT } from '../../voice/services.js';
import { AssemblyAiSTT } from './assemblyai.js';
import { AzureSTT } from './azure.js';
import { DeepgramSTT } from './deepgram.js';
import { FallbackSTT, type SttFallbackNotice } from './fallback.js';
import { GoogleSTT } from './google.js';
import { OpenAITranscriptionSTT } from './openai.js';
import { SarvamSTT } from './sarvam.js';

/** The speech-to-text client of its settings. */
export function createStt(s: SttSettings): STT {
  switch (s.provider) {
    case 'deepgram':
      return new DeepgramSTT(s.deepgram);
    case 'assemblyai':
      return new AssemblyAiSTT(s.assemblyai);
    case 'azure':
      return new AzureSTT(s.azure);
    case 'google':
      return new GoogleSTT(s.google);
    case 'sarvam':
      return new SarvamSTT(s.sarvam);
    default:
      return new OpenAITranscriptionSTT(s.openai);
  }
}

/** The settings with the callers' language set to `language`. */
export function sttInLanguage(s: SttSettings, language: string): SttSettings {
  switch (s.provider) {
    case 'assemblyai':
      return { ...s, assemblyai: { ...s.assemblyai, language } };
    case 'deepgram':
      return { ...s, deepgram: { ...s.deepgram, language } };
    case 'azure':
      return { ...s, azure: { ...s.azure, language } };
    case 'google':
      return { ...s, google: { ...s.google, language } };
    case 'sarvam':
      return { ...s, sarvam: { ...s.sarvam, language } };
    default:
      return { ...s, openai: { ...s.openai, language } };
  }
}

/** The speech-to-text a call hears through: the primary's client, with the STT_FALLBACK service behind it when one is set. */
export function createHearing(primary: SttSettings, fallback: SttSettings | undefined, onFallback?: (notice: SttFallbackNotice) => void): STT {
  const stt = createStt(primary);
  return fallback ? new FallbackSTT(stt, createStt(fallback), onFallback ? { onFallback } : {}) : stt;
}

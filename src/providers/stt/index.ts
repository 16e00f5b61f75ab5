import type { SttSettings } from '../../config/voice.js';
import type { STT } from '../../voice/services.js';
import { AssemblyAiSTT } from './assemblyai.js';
import { AzureSTT } from './azure.js';
import { DeepgramSTT } from './deepgram.js';
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

/**
 * The AI services of the voice engine, chosen from the environment. An LLM and a speech-to-text
 * service need configuring (an API key, or the base URL of a local OpenAI-compatible server); speech
 * falls back to the local espeak-ng voice and voice activity is always the local Silero model.
 */
import type { VoiceServices } from '../voice/conversation.js';
import { NotConfiguredError } from '../voice/services.js';
import { llmOptionsFromEnv, OpenAICompatibleLLM } from './llm/openai.js';
import { OpenAITranscriptionSTT, openAISttOptionsFromEnv } from './stt/openai.js';
import { DeepgramSTT, deepgramOptionsFromEnv } from './stt/deepgram.js';
import { EspeakTTS } from './tts/espeak.js';
import { ElevenLabsTTS, elevenLabsOptionsFromEnv } from './tts/elevenlabs.js';
import { OpenAITTS, openAITtsOptionsFromEnv } from './tts/openai.js';
import { FallbackLLM, FallbackTTS } from './resilience.js';
import { SileroVAD } from './vad/index.js';

export { OpenAICompatibleLLM, llmOptionsFromEnv } from './llm/openai.js';
export { OpenAITranscriptionSTT, openAISttOptionsFromEnv } from './stt/openai.js';
export { DeepgramSTT, deepgramOptionsFromEnv } from './stt/deepgram.js';
export { EspeakTTS } from './tts/espeak.js';
export { ElevenLabsTTS, elevenLabsOptionsFromEnv } from './tts/elevenlabs.js';
export { OpenAITTS, openAITtsOptionsFromEnv } from './tts/openai.js';
export { SileroVAD, preloadSilero } from './vad/index.js';
export { FallbackLLM, FallbackTTS, DEFAULT_RETRY, type RetryPolicy } from './resilience.js';

export type VoiceServicesResult = { services: VoiceServices } | { missing: string };

export function voiceServicesFromEnv(env: NodeJS.ProcessEnv = process.env): VoiceServicesResult {
  try {
    // A second LLM (LLM_FALLBACK_*) takes over when the first keeps failing before it answers.
    const llms = [new OpenAICompatibleLLM(llmOptionsFromEnv(env))];
    if (env.LLM_FALLBACK_BASE_URL?.trim()) {
      llms.push(
        new OpenAICompatibleLLM(
          llmOptionsFromEnv({ LLM_BASE_URL: env.LLM_FALLBACK_BASE_URL, LLM_API_KEY: env.LLM_FALLBACK_API_KEY, LLM_MODEL: env.LLM_FALLBACK_MODEL || env.LLM_MODEL }),
        ),
      );
    }
    const llm = new FallbackLLM(llms);
    const sttProvider = env.STT_PROVIDER?.trim() || (env.DEEPGRAM_API_KEY?.trim() ? 'deepgram' : 'openai');
    if (sttProvider !== 'deepgram' && sttProvider !== 'openai') throw new NotConfiguredError(`STT_PROVIDER must be deepgram or openai, got "${sttProvider}"`);
    const stt = sttProvider === 'deepgram' ? new DeepgramSTT(deepgramOptionsFromEnv(env)) : new OpenAITranscriptionSTT(openAISttOptionsFromEnv(env));
    const ttsProvider =
      env.TTS_PROVIDER?.trim() || (env.ELEVENLABS_API_KEY?.trim() ? 'elevenlabs' : env.TTS_BASE_URL?.trim() || env.TTS_API_KEY?.trim() ? 'openai' : 'espeak');
    if (!['openai', 'elevenlabs', 'espeak'].includes(ttsProvider)) throw new NotConfiguredError(`TTS_PROVIDER must be elevenlabs, openai or espeak, got "${ttsProvider}"`);
    const tts =
      ttsProvider === 'openai' ? new OpenAITTS(openAITtsOptionsFromEnv(env)) : ttsProvider === 'elevenlabs' ? new ElevenLabsTTS(elevenLabsOptionsFromEnv(env)) : new EspeakTTS();
    return { services: { llm, stt, tts: new FallbackTTS([tts]), vad: new SileroVAD() } };
  } catch (err) {
    if (err instanceof NotConfiguredError) return { missing: err.message };
    throw err;
  }
}

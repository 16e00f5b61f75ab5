/**
 * The AI services of the voice engine, built from their settings (config/voice.ts): an LLM
 * (OpenAI-compatible or Anthropic, with an optional fallback), speech-to-text, speech (the local voice unless a service is configured)
 * and the local Silero voice activity detector.
 */
import type { RealtimeSettings, VoiceSettings } from '../config/voice.js';
import type { RealtimeModel } from '../voice/services.js';
import { OpenAIRealtime } from './realtime/openai.js';
import { GeminiLive } from './realtime/gemini.js';
import type { VoiceServices } from '../voice/conversation.js';
import { createLlm } from './llm/index.js';
import { createHearing } from './stt/index.js';
import type { SttFallbackNotice } from './stt/fallback.js';
import type { Logger } from '../lib/logger.js';
import { LocalTTS } from './tts/espeak.js';
import { ElevenLabsTTS } from './tts/elevenlabs.js';
import { CartesiaTTS } from './tts/cartesia.js';
import { AzureTTS } from './tts/azure.js';
import { GoogleTTS } from './tts/google.js';
import { SarvamTTS } from './tts/sarvam.js';
import { OpenAITTS } from './tts/openai.js';
import { FallbackLLM } from './resilience.js';
import { SileroVAD } from './vad/index.js';
import { chooser, speaking } from './choices.js';

export { AnthropicLLM, OpenAICompatibleLLM, createLlm } from './llm/index.js';
export { createStt, createHearing } from './stt/index.js';
export { FallbackSTT, REPLAY_SECONDS, type SttFallbackNotice } from './stt/fallback.js';
export { OpenAITranscriptionSTT } from './stt/openai.js';
export { DeepgramSTT } from './stt/deepgram.js';
export { AssemblyAiSTT } from './stt/assemblyai.js';
export { SarvamSTT } from './stt/sarvam.js';
export { LocalTTS } from './tts/espeak.js';
export { ElevenLabsTTS } from './tts/elevenlabs.js';
export { CartesiaTTS } from './tts/cartesia.js';
export { SarvamTTS } from './tts/sarvam.js';
export { AzureTTS } from './tts/azure.js';
export { GoogleTTS } from './tts/google.js';
export { AzureSTT } from './stt/azure.js';
export { GoogleSTT } from './stt/google.js';
export { OpenAITTS } from './tts/openai.js';
export { OpenAIRealtime } from './realtime/openai.js';
export { GeminiLive } from './realtime/gemini.js';
export { SileroVAD, preloadSilero } from './vad/index.js';
export { FallbackLLM, FallbackTTS, DEFAULT_RETRY, type RetryPolicy } from './resilience.js';
export { agentOptions } from './choices.js';

/** The services, or what is missing for them (the voice agent cannot run then). */
export function createVoiceServices(settings: VoiceSettings, log?: Logger): { services: VoiceServices } | { missing: string } {
  const configured = settings.services;
  if ('missing' in configured) return { missing: configured.missing };
  // A second LLM takes over when the first keeps failing before it answers.
  const llms = configured.llm.map((options) => createLlm(options));
  const llm = new FallbackLLM(llms);
  // ... and a second speech-to-text when the first fails mid-call (STT_FALLBACK).
  const onSttFallback = log && ((n: SttFallbackNotice) => log.warn({ from: n.from, to: n.to, reason: n.reason, err: n.err }, 'speech-to-text fell back to its second service'));
  const stt = createHearing(configured.stt, configured.sttFallback, onSttFallback);
  const t = configured.tts;
  const tts =
    t.provider === 'openai'
      ? new OpenAITTS(t.openai)
      : t.provider === 'elevenlabs'
        ? new ElevenLabsTTS(t.elevenlabs)
        : t.provider === 'cartesia'
          ? new CartesiaTTS(t.cartesia)
          : t.provider === 'azure'
            ? new AzureTTS(t.azure)
            : t.provider === 'google'
              ? new GoogleTTS(t.google)
              : t.provider === 'sarvam'
                ? new SarvamTTS(t.sarvam)
                : new LocalTTS(settings.localVoice);
  const services: VoiceServices = { llm, stt, tts: speaking(settings, tts), vad: new SileroVAD({ runtime: settings.sileroRuntime }) };
  // A template's voice, model, temperature and language, over these defaults (providers/choices.ts).
  services.choose = chooser(settings, services, llms.slice(1), onSttFallback);
  return { services };
}

/** The realtime speech-to-speech model of its settings: the OpenAI Realtime API or Gemini Live. */
export function createRealtimeModel(settings: RealtimeSettings): RealtimeModel {
  return settings.provider === 'gemini' ? new GeminiLive(settings) : new OpenAIRealtime(settings);
}

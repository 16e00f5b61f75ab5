/** OpenAI-compatible speech (`POST /audio/speech`, `response_format: pcm`: 24 kHz 16-bit mono), streamed as it arrives. */
import type { OpenAITtsSettings } from '../../config/voice.js';
import { warmConnection, type TTS } from '../../voice/services.js';
import { httpSpeech } from './http-speech.js';

export type OpenAITtsOptions = OpenAITtsSettings;

export class OpenAITTS implements TTS {
  readonly label: string;
  readonly sampleRateHz = 24000;

  constructor(private readonly options: OpenAITtsOptions) {
    this.label = `openai-speech(${new URL(options.baseUrl).host})`;
  }

  warm(): Promise<void> {
    const o = this.options;
    return warmConnection('tts', `${o.baseUrl}/models`, o.apiKey ? { authorization: `Bearer ${o.apiKey}` } : {});
  }

  synthesize(text: string, options: { signal: AbortSignal }): AsyncIterable<Int16Array> {
    const o = this.options;
    return httpSpeech(this.label, {
      url: `${o.baseUrl}/audio/speech`,
      headers: { 'content-type': 'application/json', ...(o.apiKey ? { authorization: `Bearer ${o.apiKey}` } : {}) },
      body: JSON.stringify({ model: o.model, input: text, voice: o.voice, response_format: 'pcm' }),
      signal: options.signal,
      timeoutMs: o.timeoutMs,
    });
  }
}

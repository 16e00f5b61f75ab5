/** The LLM clients: one per wire protocol, chosen by the settings' provider. */
import type { LlmSettings } from '../../config/voice.js';
import type { LLM } from '../../voice/services.js';
import { AnthropicLLM } from './anthropic.js';
import { OpenAICompatibleLLM } from './openai.js';

export { AnthropicLLM } from './anthropic.js';
export { OpenAICompatibleLLM } from './openai.js';

export function createLlm(settings: LlmSettings): LLM {
  return settings.provider === 'anthropic' ? new AnthropicLLM(settings) : new OpenAICompatibleLLM(settings);
}

/**
 * Retries and fallback, written once for every AI service (livekit-agents' FallbackAdapter idea):
 * a retryable failure before any output tries again (with a short backoff), then the next provider;
 * once output has started, an error goes to the caller (a half-spoken reply cannot be replayed).
 * A speech-to-text stream, which can be replayed, has its own with the same policy: stt/fallback.ts.
 */
import { providerErrors } from '../metrics/index.js';
import { ServiceError, type ChatRequest, type LLM, type LlmEvent, type TTS } from '../voice/services.js';

export interface RetryPolicy {
  /** Tries per provider, the first included. */
  attempts: number;
  baseDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 2, baseDelayMs: 150 };

const retryable = (err: unknown) => err instanceof ServiceError && err.retryable;

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
}

interface Source<T> {
  /** The client's label (for /metrics). */
  label: string;
  open(): AsyncIterable<T>;
}

/** Streams from the first source that starts; retries and falls back only before the first item. Every failure is counted. */
async function* resilient<T>(service: 'llm' | 'tts', sources: Array<Source<T>>, policy: RetryPolicy, signal: AbortSignal): AsyncIterable<T> {
  let last: unknown;
  for (const source of sources) {
    for (let attempt = 1; attempt <= policy.attempts; attempt++) {
      let started = false;
      try {
        for await (const item of source.open()) {
          started = true;
          yield item;
        }
        return;
      } catch (err) {
        if (!signal.aborted) providerErrors.inc({ service, provider: source.label, retryable: String(retryable(err)) });
        if (started || signal.aborted || !retryable(err)) throw err;
        last = err;
        if (attempt < policy.attempts) await pause(policy.baseDelayMs * 2 ** (attempt - 1), signal);
      }
    }
  }
  throw last;
}

export class FallbackLLM implements LLM {
  readonly label: string;
  readonly model: string;

  constructor(private readonly llms: LLM[], private readonly policy: RetryPolicy = DEFAULT_RETRY) {
    if (llms.length === 0) throw new Error('FallbackLLM needs at least one LLM');
    this.label = llms.length === 1 ? llms[0]!.label : `fallback(${llms.map((l) => l.label).join(', ')})`;
    this.model = llms[0]!.model;
  }

  /** The first LLM is the one asked first. */
  async warm(): Promise<void> {
    await this.llms[0]!.warm?.();
  }

  chat(request: ChatRequest): AsyncIterable<LlmEvent> {
    return resilient('llm', this.llms.map((llm) => ({ label: llm.label, open: () => llm.chat(request) })), this.policy, request.signal);
  }
}

export class FallbackTTS implements TTS {
  readonly label: string;
  readonly sampleRateHz: number;

  /** All voices must share a sample rate (the engine resamples from one rate per stream). */
  constructor(private readonly voices: TTS[], private readonly policy: RetryPolicy = DEFAULT_RETRY) {
    if (voices.length === 0) throw new Error('FallbackTTS needs at least one TTS');
    this.sampleRateHz = voices[0]!.sampleRateHz;
    if (voices.some((v) => v.sampleRateHz !== this.sampleRateHz)) throw new Error('FallbackTTS voices must share one sample rate');
    this.label = voices.length === 1 ? voices[0]!.label : `fallback(${voices.map((v) => v.label).join(', ')})`;
  }

  async warm(): Promise<void> {
    await this.voices[0]!.warm?.();
  }

  synthesize(text: string, options: { signal: AbortSignal }): AsyncIterable<Int16Array> {
    return resilient('tts', this.voices.map((v) => ({ label: v.label, open: () => v.synthesize(text, options) })), this.policy, options.signal);
  }
}

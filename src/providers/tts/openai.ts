/** OpenAI-compatible speech (`POST /audio/speech`, `response_format: pcm`: 24 kHz 16-bit mono), streamed as it arrives. */
import { bytesToPcm } from '../../lib/audio.js';
import { send, type ClientResponse } from '../../lib/http-client.js';
import type { OpenAITtsSettings } from '../../config/voice.js';
import { ServiceError, warmConnection, type TTS } from '../../voice/services.js';

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

  async *synthesize(text: string, options: { signal: AbortSignal }): AsyncIterable<Int16Array> {
    const o = this.options;
    let res: ClientResponse;
    try {
      res = await send(`${o.baseUrl}/audio/speech`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(o.apiKey ? { authorization: `Bearer ${o.apiKey}` } : {}) },
        body: JSON.stringify({ model: o.model, input: text, voice: o.voice, response_format: 'pcm' }),
        signal: options.signal,
        // For the audio to begin and for each piece after: a long sentence's audio streams for as
        // long as it takes, a stream that goes quiet is given up.
        timeoutMs: o.timeoutMs,
      });
    } catch (err) {
      if (options.signal.aborted) return;
      throw new ServiceError(this.label, (err as Error).message, true, { cause: err });
    }
    if (!res.ok) {
      const body = await res.text().catch(() => '');
      throw new ServiceError(this.label, `HTTP ${res.status}: ${body.slice(0, 200)}`, res.status === 429 || res.status >= 500, { status: res.status });
    }
    let odd: number | undefined;
    try {
      for await (const chunk of res.body) {
        let bytes = chunk;
        if (odd !== undefined) {
          const joined = new Uint8Array(chunk.length + 1);
          joined[0] = odd;
          joined.set(chunk, 1);
          bytes = joined;
          odd = undefined;
        }
        if (bytes.length % 2 === 1) {
          odd = bytes[bytes.length - 1];
          bytes = bytes.subarray(0, bytes.length - 1);
        }
        if (bytes.length) yield bytesToPcm(bytes);
      }
    } catch (err) {
      if (options.signal.aborted) return;
      throw new ServiceError(this.label, `the audio stream broke: ${(err as Error).message}`, true, { cause: err });
    }
  }
}

/**
 * Azure Speech's voice over its text-to-speech REST API: the sentence as SSML (`<speak>` with the
 * voice's locale, `<voice name>`) posted to `cognitiveservices/v1` with the resource key
 * (`Ocp-Apim-Subscription-Key`) and `X-Microsoft-OutputFormat: raw-16khz-16bit-mono-pcm`; the
 * answer's body is headerless PCM, played as it arrives. 400 (an unknown voice, bad SSML) and 401
 * are final; 429 and 5xx are retried by the fallback.
 */
import type { AzureTtsSettings } from '../../config/voice.js';
import { warmConnection, type TTS } from '../../voice/services.js';
import { httpSpeech } from './http-speech.js';

/** The locale at the head of an Azure voice name (`en-US-JennyNeural`: en-US). */
export function voiceLocale(voice: string): string {
  return /^[a-z]{2,3}-[A-Za-z0-9]{2,4}/.exec(voice)?.[0] ?? 'en-US';
}

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };
const escapeXml = (s: string) => s.replace(/[&<>"']/g, (c) => XML_ESCAPES[c]!);

/** The SSML document Azure speaks: the text escaped, in the voice's locale. */
export function ssml(text: string, voice: string): string {
  const lang = voiceLocale(voice);
  return `<speak version='1.0' xmlns='http://www.w3.org/2001/10/synthesis' xml:lang='${lang}'><voice name='${escapeXml(voice)}'>${escapeXml(text)}</voice></speak>`;
}

export class AzureTTS implements TTS {
  readonly label = 'azure-speech';
  readonly sampleRateHz = 16000;

  constructor(private readonly options: AzureTtsSettings) {}

  /** Any answer leaves the connection warm (a GET of the synthesis URL is a 4xx, cheaply). */
  warm(): Promise<void> {
    return warmConnection('tts', this.options.url, { 'Ocp-Apim-Subscription-Key': this.options.apiKey });
  }

  synthesize(text: string, options: { signal: AbortSignal }): AsyncIterable<Int16Array> {
    const o = this.options;
    return httpSpeech(this.label, {
      url: o.url,
      headers: {
        'Ocp-Apim-Subscription-Key': o.apiKey,
        'Content-Type': 'application/ssml+xml',
        'X-Microsoft-OutputFormat': 'raw-16khz-16bit-mono-pcm',
        'User-Agent': 'dialer',
      },
      body: ssml(text, o.voice),
      timeoutMs: o.timeoutMs,
      signal: options.signal,
    });
  }
}

/**
 * ElevenLabs streaming input over WebSocket (`/v1/text-to-speech/{voice}/stream-input`): the text
 * goes in (a space to open with the voice settings, the text with generation triggered, an empty
 * text to finish), base64 PCM at 16 kHz comes back in `audio` messages until `isFinal`.
 */
import WebSocket from 'ws';
import { bytesToPcm } from '../../lib/audio.js';
import type { ElevenLabsSettings } from '../../config/voice.js';
import { ServiceError, type TTS } from '../../voice/services.js';
import { EventQueue } from '../queue.js';

export type ElevenLabsOptions = ElevenLabsSettings;

export class ElevenLabsTTS implements TTS {
  readonly label = 'elevenlabs';
  readonly sampleRateHz = 16000;

  constructor(private readonly options: ElevenLabsOptions) {}

  synthesize(text: string, options: { signal: AbortSignal }): AsyncIterable<Int16Array> {
    const o = this.options;
    const queue = new EventQueue<Int16Array>();
    const query = new URLSearchParams({ model_id: o.model, output_format: 'pcm_16000' });
    const ws = new WebSocket(`${o.url}/v1/text-to-speech/${encodeURIComponent(o.voiceId)}/stream-input?${query}`, { headers: { 'xi-api-key': o.apiKey } });
    let odd: number | undefined;
    const stop = () => ws.terminate();
    options.signal.addEventListener('abort', stop, { once: true });
    ws.on('open', () => {
      ws.send(JSON.stringify({ text: ' ', voice_settings: { stability: 0.5, similarity_boost: 0.8 } }));
      ws.send(JSON.stringify({ text: `${text} `, try_trigger_generation: true }));
      ws.send(JSON.stringify({ text: '' }));
    });
    ws.on('unexpected-response', (_req, res) => {
      const status = res.statusCode ?? 0;
      queue.end(new ServiceError(this.label, `refused: HTTP ${status}`, status === 429 || status >= 500, { status }));
    });
    ws.on('message', (data) => {
      let m: { audio?: string | null; isFinal?: boolean | null; error?: string; message?: string };
      try {
        m = JSON.parse(data.toString());
      } catch {
        return queue.end(new ServiceError(this.label, 'sent a message that is not JSON', false));
      }
      if (m.error) return queue.end(new ServiceError(this.label, `${m.error}: ${m.message ?? ''}`, false));
      if (m.audio) {
        let bytes: Uint8Array = Buffer.from(m.audio, 'base64');
        if (odd !== undefined) bytes = Buffer.concat([Buffer.from([odd]), bytes]);
        odd = bytes.length % 2 ? bytes[bytes.length - 1] : undefined;
        const whole = bytes.subarray(0, bytes.length - (bytes.length % 2));
        if (whole.length) queue.put(bytesToPcm(whole));
      }
      if (m.isFinal) {
        queue.end();
        ws.close(1000);
      }
    });
    ws.on('error', (err) => queue.end(options.signal.aborted ? undefined : new ServiceError(this.label, err.message, true, { cause: err })));
    ws.on('close', (code) => {
      options.signal.removeEventListener('abort', stop);
      queue.end(code === 1000 || code === 1005 || options.signal.aborted ? undefined : new ServiceError(this.label, `closed the stream: ${code}`, true));
    });
    return queue;
  }
}

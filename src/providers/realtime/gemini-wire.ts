/**
 * Gemini Live's wire format (BidiGenerateContent): the `setup` message a session starts with, the
 * server messages read, and the opening of a session (the socket, `setup`, `setupComplete`, or the
 * close code and reason it was refused with).
 */
import WebSocket from 'ws';
import { realtimeVoice, type RealtimeSettings } from '../../config/voice.js';
import { ServiceError, type RealtimeSessionConfig, type ToolSpec } from '../../voice/services.js';

export type GeminiLiveOptions = RealtimeSettings;

export const INPUT_HZ = 16_000;
export const OUTPUT_HZ = 24_000;
/** Caller audio kept while a new session opens; older audio is dropped. */
export const BACKLOG_MS = 10_000;
/** Close codes after which trying again may help (the server's failure, overload, a broken connection). */
const RETRYABLE_CLOSE = new Set([1006, 1011, 1012, 1013, 1014]);

export interface Content {
  role: 'user' | 'model';
  parts: Array<{ text: string }>;
}

export interface ServerMessage {
  setupComplete?: object;
  serverContent?: {
    modelTurn?: { parts?: Array<{ text?: string; thought?: boolean; inlineData?: { mimeType?: string; data?: string } }> };
    inputTranscription?: { text?: string };
    outputTranscription?: { text?: string };
    interrupted?: boolean;
    generationComplete?: boolean;
    turnComplete?: boolean;
  };
  toolCall?: { functionCalls?: Array<{ id?: string; name?: string; args?: unknown }> };
  toolCallCancellation?: { ids?: string[] };
  usageMetadata?: { promptTokenCount?: number; responseTokenCount?: number; totalTokenCount?: number };
  goAway?: { timeLeft?: string };
}

/** A function's parameters as Gemini's Schema (an OpenAPI subset with upper-case types). */
export function geminiSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (typeof schema.type === 'string') out.type = schema.type.toUpperCase();
  for (const key of ['description', 'enum', 'format', 'nullable', 'required'] as const) if (schema[key] !== undefined) out[key] = schema[key];
  if (schema.properties && typeof schema.properties === 'object') {
    out.properties = Object.fromEntries(Object.entries(schema.properties as Record<string, Record<string, unknown>>).map(([k, v]) => [k, geminiSchema(v)]));
  }
  if (schema.items && typeof schema.items === 'object') out.items = geminiSchema(schema.items as Record<string, unknown>);
  return out;
}

/** The `setup` message of a session with `config`. */
export function geminiSetup(options: GeminiLiveOptions, config: RealtimeSessionConfig): Record<string, unknown> {
  const declarations = config.tools.map((t: ToolSpec) => ({
    name: t.name,
    ...(t.description ? { description: t.description } : {}),
    parameters: geminiSchema(t.parameters),
    // The flow runs a function (its hooks, its transition) before the model goes on.
    behavior: 'BLOCKING',
  }));
  return {
    setup: {
      model: options.model.startsWith('models/') ? options.model : `models/${options.model}`,
      generationConfig: {
        responseModalities: ['AUDIO'],
        // The call's language: the model speaks it, in its voice (a new session per switch, as per node).
        // Native-audio models choose their language themselves and take no languageCode: their system instruction says it.
        speechConfig: {
          voiceConfig: { prebuiltVoiceConfig: { voiceName: realtimeVoice(options, config.language) } },
          ...(config.language && !options.model.includes('native-audio') ? { languageCode: config.language } : {}),
        },
        ...(config.temperature !== undefined ? { temperature: config.temperature } : {}),
      },
      ...(config.instructions ? { systemInstruction: { parts: [{ text: config.instructions }] } } : {}),
      ...(declarations.length ? { tools: [{ functionDeclarations: declarations }] } : {}),
      realtimeInputConfig: { automaticActivityDetection: { disabled: false }, activityHandling: 'START_OF_ACTIVITY_INTERRUPTS' },
      inputAudioTranscription: {},
      outputAudioTranscription: {},
    },
  };
}

/** Opens a socket and sets its session up; resolves once the server says `setupComplete`. Throws ServiceError. */
export function openSession(o: GeminiLiveOptions, label: string, config: RealtimeSessionConfig, signal: AbortSignal): Promise<WebSocket> {
  const url = o.apiKey ? `${o.url}${o.url.includes('?') ? '&' : '?'}key=${encodeURIComponent(o.apiKey)}` : o.url;
  const ws = new WebSocket(url, { handshakeTimeout: o.connectTimeoutMs });
  return new Promise<WebSocket>((resolve, reject) => {
    const timer = setTimeout(() => fail('no setupComplete in time', true), o.connectTimeoutMs);
    const onAbort = () => fail('aborted', false);
    signal.addEventListener('abort', onAbort, { once: true });
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      ws.removeAllListeners();
    };
    function fail(message: string, retryable: boolean, status?: number) {
      done();
      ws.on('error', () => undefined);
      ws.terminate();
      reject(new ServiceError(label, message, retryable, status === undefined ? {} : { status }));
    }
    ws.once('unexpected-response', (_req, res) => {
      const status = res.statusCode ?? 0;
      fail(`HTTP ${status} on connect`, status === 429 || status >= 500, status);
    });
    ws.once('error', (err) => fail(`cannot connect: ${err.message}`, true));
    ws.once('open', () => ws.send(JSON.stringify(geminiSetup(o, config))));
    ws.on('close', (code, reason) => fail(`the session was refused (${code}${reason.length ? ` ${reason.toString()}` : ''})`, RETRYABLE_CLOSE.has(code)));
    ws.on('message', (data) => {
      let m: ServerMessage;
      try {
        m = JSON.parse(data.toString()) as ServerMessage;
      } catch {
        return fail('the server sent a message that is not JSON', false);
      }
      if (!m.setupComplete) return;
      done();
      resolve(ws);
    });
  });
}

/** A function's result as the `response` object takes it: its JSON when it is JSON. */
export function parseOutput(output: string): unknown {
  try {
    return JSON.parse(output);
  } catch {
    return output;
  }
}

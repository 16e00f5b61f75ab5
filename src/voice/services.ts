/**
 * The AI services the voice engine talks to, as narrow interfaces (livekit-agents style). Clients
 * live in `src/providers/{llm,stt,tts,vad}/`; each has a `label` and takes its settings
 * (config/voice.ts, where a missing service is reported before any client is built).
 *
 * Terminology
 * - PCM: signed 16-bit mono samples (Int16Array) at the stated `sampleRateHz`.
 * - segment: one stretch of the caller's speech, from VAD speech start to speech end.
 * - final: an STT result that will not change; interim results may.
 */
import { send } from '../lib/http-client.js';

/** A failure of an AI service. `retryable` says whether trying again (or another provider) may help. */
export class ServiceError extends Error {
  override name = 'ServiceError';
  constructor(
    readonly service: string,
    message: string,
    readonly retryable: boolean,
    options?: { cause?: unknown; status?: number },
  ) {
    super(`${service}: ${message}`, { cause: options?.cause });
    this.status = options?.status;
  }
  readonly status: number | undefined;
}

// ---------------------------------------------------------------------------------------------
// LLM: OpenAI-compatible chat completions, streamed, with tool calls.

export interface ToolCall {
  /** The id the model gave the call (echoed back in the tool result message). */
  id: string;
  name: string;
  /** The arguments as the model wrote them: JSON text, possibly invalid. */
  arguments: string;
}

export type ChatMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

/** A passage of the business's documents found for a question (the built-in search_knowledge). */
export interface KnowledgeChunk {
  document_id: string;
  title: string;
  /** The chunk's place in its document, from 0. */
  position: number;
  text: string;
  rank: number;
}

/** Searches the call's knowledge (its template's documents and its reseller's shared ones): the best chunks first. */
export type SearchKnowledge = (query: string) => Promise<KnowledgeChunk[]>;

export interface ToolSpec {
  name: string;
  description?: string;
  /** JSON schema of the arguments: `{type: 'object', properties, required}`. */
  parameters: Record<string, unknown>;
}

export interface LlmUsage {
  promptTokens: number;
  completionTokens: number;
}

export type LlmEvent =
  /** A piece of the reply text, as it streams. */
  | { type: 'text'; text: string }
  /** A complete tool call (the client assembles the streamed deltas). */
  | { type: 'tool_call'; call: ToolCall }
  /** The end of the reply. */
  | { type: 'done'; finishReason: string; usage?: LlmUsage };

export interface ChatRequest {
  messages: ChatMessage[];
  tools?: ToolSpec[];
  temperature?: number;
  signal: AbortSignal;
}

export interface LLM {
  readonly label: string;
  readonly model: string;
  /** The model speaks its replies itself (a realtime speech-to-speech model): the text it streams is the transcript of its audio. */
  readonly voiced?: boolean;
  /** Streams one reply. Throws ServiceError (from the iterator) on failure. */
  chat(request: ChatRequest): AsyncIterable<LlmEvent>;
  /** Opens (or keeps open) the connection ahead of a request (TCP, TLS, HTTP keep-alive), so the reply does not wait for it. Never throws. */
  warm?(): Promise<void>;
  /**
   * The conversation moved on without a request (a warm transfer's result and what the caller was
   * told): a model that keeps the conversation itself (a realtime session) takes it in now, before
   * it answers the caller's next turn on its own. Never throws.
   */
  sync?(messages: ChatMessage[]): void;
}

// ---------------------------------------------------------------------------------------------
// STT: streaming (Deepgram live) or per segment (OpenAI-compatible transcription).

export type SttEvent =
  | { type: 'interim'; text: string }
  | { type: 'final'; text: string; confidence?: number; /** The language the service heard (a tag or, from some, a name), when it was asked to detect it. */ language?: string }
  /** The service says the utterance is over (Deepgram UtteranceEnd / speech_final). */
  | { type: 'utterance_end' }
  /**
   * The stream's service failed past its retry and a second one hears the caller from here on
   * (STT_FALLBACK): `from` and `to` are the services' labels, `reason` the failure.
   */
  | { type: 'fallback'; from: string; to: string; reason: string };

export interface SttStream {
  /** Caller audio at the stream's sample rate, in order. */
  write(pcm: Int16Array): void;
  /** VAD says the segment ended: a per-segment STT transcribes what it buffered; a streaming one finalizes. */
  endSegment(): void;
  /** Results, until close(). */
  readonly events: AsyncIterable<SttEvent>;
  close(): Promise<void>;
}

export interface SttOpenOptions {
  signal: AbortSignal;
  language?: string;
  sampleRateHz: number;
  detect?: readonly string[];
}

export interface STT {
  readonly label: string;
  /**
   * Whether words come while the caller speaks (interim results, as Deepgram streams them); a
   * per-segment service gives its words only after the segment ends, so judging speech over the
   * agent by its words waits for them.
   */
  readonly interimResults: boolean;
  /**
   * The sample rates it takes audio at as it comes; audio at any other rate is resampled to the
   * first. Telephony's 8 kHz goes as it is to a service that takes it: upsampling adds no speech.
   */
  readonly sampleRatesHz: readonly number[];
  /**
   * A stream of audio at `sampleRateHz`, one of `sampleRatesHz`, in `language` (default the
   * configured one). `detect`: the languages the caller may speak: a service that can tell which is
   * spoken reports it on each final (`language`); one that cannot listens in `language`.
   */
  open(options: SttOpenOptions): SttStream;
}

// ---------------------------------------------------------------------------------------------
// TTS: text in, PCM out, streamed.

export interface TTS {
  readonly label: string;
  /** The rate of the PCM it yields; the engine resamples to the transport's. */
  readonly sampleRateHz: number;
  /** Speaks `text`; yields PCM chunks as they are ready. Throws ServiceError from the iterator. */
  synthesize(text: string, options: { signal: AbortSignal }): AsyncIterable<Int16Array>;
  /** As LLM.warm. */
  warm?(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// VAD: voice activity, frame by frame.

export interface VadOptions {
  /** Probability above which a frame is speech (Silero: 0.5). */
  startThreshold: number;
  /** Probability below which a frame is silence (Silero: 0.35). */
  stopThreshold: number;
  /** Speech must last this long before it counts as started (barge-in guard against "hmm"). */
  minSpeechMs: number;
  /** Silence that ends a segment. */
  minSilenceMs: number;
}

export const VAD_DEFAULTS: VadOptions = { startThreshold: 0.5, stopThreshold: 0.35, minSpeechMs: 200, minSilenceMs: 600 };

export type VadEvent = { type: 'speech_start'; atMs: number } | { type: 'speech_end'; atMs: number; durationMs: number };

export interface VadStream {
  /** Caller audio at the rate the stream was opened at (any length; it frames internally). */
  push(pcm: Int16Array): Promise<VadEvent[]>;
  /** Changes thresholds or durations from now on (a template node's own `vad` settings). */
  update(options: Partial<VadOptions>): void;
  close(): void;
}

export interface VAD {
  readonly label: string;
  /** The sample rates it takes audio at as it comes; audio at any other rate is resampled to the first. */
  readonly sampleRatesHz: readonly number[];
  /** A stream of audio at `sampleRateHz` (one of `sampleRatesHz`; default the first). */
  open(options?: Partial<VadOptions>, sampleRateHz?: number): Promise<VadStream>;
}

/** The rate a service that takes `accepted` rates hears audio of `inputHz` at: as it is when it can. */
export function serviceRate(accepted: readonly number[], inputHz: number): number {
  return accepted.includes(inputHz) ? inputHz : accepted[0]!;
}

/**
 * How long a warmed connection is taken as still warm. The connection pool is the process's, so
 * calls warming at the same time (each does while it rings, on answer and whenever its caller
 * begins to speak) share one warm-up per service and server instead of each sending its own.
 */
export const WARM_REUSE_MS = 1000;

/** Per service and URL: the warm-up under way, or when the last one ended. */
const warming = new Map<string, Promise<void> | number>();

/**
 * A cheap GET that leaves a kept-alive connection to `url`'s server in the HTTP client's pool (the
 * answer does not matter: any answer means TCP and TLS are done). A warm-up of the same service
 * and URL under way is joined, and one that ended less than WARM_REUSE_MS ago stands. `service`
 * keeps one connection warm for each: a reply's first requests to the LLM and to the TTS go out
 * together, so when both are one server (OpenAI's chat and speech) each needs its own. Never throws.
 */
export function warmConnection(service: 'llm' | 'tts', url: string, headers: Record<string, string> = {}): Promise<void> {
  const key = `${service} ${url}`;
  const last = warming.get(key);
  if (typeof last === 'object') return last;
  if (typeof last === 'number' && performance.now() - last < WARM_REUSE_MS) return Promise.resolve();
  const run = (async () => {
    try {
      await (await send(url, { headers, signal: AbortSignal.timeout(5000) })).text();
    } catch {
      /* a cold connection is only slower */
    } finally {
      const now = performance.now();
      warming.set(key, now);
      // Services are few, but their URLs come from configuration: forget the ones long unused.
      if (warming.size > 256) for (const [k, at] of warming) if (typeof at === 'number' && now - at >= WARM_REUSE_MS) warming.delete(k);
    }
  })();
  warming.set(key, run);
  return run;
}

// ---------------------------------------------------------------------------------------------
// Realtime: a speech-to-speech model (the OpenAI Realtime API, Gemini Live) that hears the caller, detects the
// end of their turns, answers in its own voice and calls the node's functions, over one WebSocket.

/** What the session is told (sent again whenever the flow enters a node). */
export interface RealtimeSessionConfig {
  instructions: string;
  tools: ToolSpec[];
  temperature?: number;
  /**
   * The language the call speaks now (a template's declared BCP-47 tag; voice/language.ts): the
   * caller's words are transcribed in it and the model speaks in its voice where the provider can
   * change voices. None: the template declares no languages.
   */
  language?: string;
}

export type RealtimeEvent =
  /** The server's voice activity detection heard the caller start (a barge-in while the agent speaks). */
  | { type: 'speech_started' }
  /** The caller's turn ended; `itemId`: the conversation item their audio became (its transcript names it). */
  | { type: 'speech_stopped'; itemId?: string }
  /** A reply began (the server's own, after the caller's turn, or one Dialer asked for). */
  | { type: 'response_started'; responseId: string }
  /** Agent audio, PCM at the session's rate, of the assistant item `itemId`. */
  | { type: 'audio'; responseId: string; itemId: string; pcm: Int16Array }
  /** The words of the agent's audio, as they stream. */
  | { type: 'transcript'; responseId: string; itemId: string; text: string }
  /** What the caller said (the server transcribes each committed turn; empty when it could not). */
  | { type: 'user_transcript'; itemId: string; text: string }
  | { type: 'function_call'; responseId: string; call: ToolCall }
  | { type: 'response_done'; responseId: string; status: string; usage?: LlmUsage }
  /** The server reported an error; the session stays open unless it closes. */
  | { type: 'error'; message: string; code?: string }
  /** The socket closed; `error` when it was not Dialer that closed it. */
  | { type: 'closed'; error?: string };

export interface RealtimeSession {
  readonly sampleRateHz: number;
  update(config: RealtimeSessionConfig): void;
  /**
   * The caller's audio at `sampleRateHz`, as it comes; `mulaw`: the same audio as the mu-law bytes
   * the call carried, when it did (a session that sends mu-law sends them as they are).
   */
  appendAudio(pcm: Int16Array, mulaw?: Buffer): void;
  /** Asks for a reply now (the server answers the caller's turns by itself). */
  createResponse(): void;
  /** The result of a function the model called. */
  functionOutput(callId: string, output: string): void;
  /** A line of the conversation the model did not hear through its own audio (a keypress, a line spoken by the TTS). */
  addMessage(role: 'user' | 'assistant', text: string): void;
  /** The caller heard only the first `audioEndMs` of the assistant item's audio. */
  truncate(itemId: string, audioEndMs: number): void;
  onEvent(listener: (event: RealtimeEvent) => void): void;
  close(): Promise<void>;
}

export interface RealtimeModel {
  readonly label: string;
  readonly model: string;
  /** Opens a session whose audio (both ways) is at `sampleRateHz` (8,000 Hz: G.711 mu-law on the wire). Throws ServiceError. */
  connect(options: { signal: AbortSignal; sampleRateHz: number; config: RealtimeSessionConfig }): Promise<RealtimeSession>;
}

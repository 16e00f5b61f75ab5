/**
 * What one telephony provider (Twilio, Exotel, Plivo) must do for Dialer, in its own wire protocol.
 * The shared parts (call sessions, callback routes, the media WebSocket, recordings) are written
 * once over this interface; a provider folder (`twilio/`, `exotel/`, `plivo/`) implements it.
 *
 * Terminology
 * - slot: the API's name for a provider: PROVIDER_A (Twilio), PROVIDER_B (Exotel), PROVIDER_C (Plivo).
 * - path: the slot as it appears in callback URLs: provider_a, provider_b, provider_c.
 * - call SID: the provider's id for one call (Twilio CallSid, Exotel CallSid, Plivo CallUUID).
 * - session token: a random secret Dialer makes per call. It is in every URL Dialer gives the
 *   provider for that call (`?s=<token>` on callbacks, `/media/<token>` on the stream), so a
 *   callback or a WebSocket is tied to one call and nobody can attach to another.
 * - frame: one text message of the provider's media-stream WebSocket.
 * - PCM: signed 16-bit little-endian mono samples at 8,000 Hz, as an Int16Array. Every serializer
 *   converts to and from this (Twilio and Plivo carry mu-law, Exotel carries PCM itself).
 */
import type { Context } from '@opentelemetry/api';

export type ProviderSlot = 'PROVIDER_A' | 'PROVIDER_B' | 'PROVIDER_C';
export type ProviderPath = 'provider_a' | 'provider_b' | 'provider_c';

export const SLOT_PATHS: Readonly<Record<ProviderSlot, ProviderPath>> = {
  PROVIDER_A: 'provider_a',
  PROVIDER_B: 'provider_b',
  PROVIDER_C: 'provider_c',
};

/** Sample rate of PCM everywhere in the telephony layer. */
export const TELEPHONY_SAMPLE_RATE_HZ = 8000;

/** A failure talking to the provider's REST API. */
export class ProviderError extends Error {
  override name = 'ProviderError';
  constructor(
    message: string,
    /** HTTP status the provider answered, when it answered. */
    readonly status: number | undefined,
    /** Worth trying again later (network errors, 429, 5xx). */
    readonly retryable: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A callback or media frame that does not follow the provider's protocol. */
export class ProtocolError extends Error {
  override name = 'ProtocolError';
}

export interface PlaceCallRequest {
  /** E.164 number to call. */
  to: string;
  /** E.164 caller ID (one of our numbers at this provider). */
  from: string;
  /** Where the provider fetches the call's instructions once answered (Twilio `Url`, Plivo `answer_url`). */
  answerUrl: string;
  /** Where the provider posts call status changes. */
  statusUrl: string;
  /** Session token, for providers that carry it as a custom field (Exotel `CustomField`). */
  token: string;
  /**
   * Ask the provider to detect answering machines (Twilio `MachineDetection`, Plivo
   * `machine_detection`): `answer` decides as soon as it can; `message_end` waits for the greeting
   * to end (Twilio `DetectMessageEnd`; providers without such a mode decide at once). false: off.
   */
  machineDetection: false | 'answer' | 'message_end';
  /** Keys to play right after the callee answers (an extension): 0-9, *, #, w for half a second. */
  sendDigits?: string;
  /** How long to let it ring. */
  ringTimeoutSeconds: number;
  /** Hard cap on the call's length. */
  maxDurationSeconds: number;
}

export interface TransferRequest {
  /** E.164 number of the human to transfer to. */
  to: string;
  /** Caller ID for the transfer leg. */
  from: string;
  /** Where the provider posts the transfer leg's status (…/callback/transfer/status?s=token). */
  statusUrl: string;
  /** Where the provider posts transfer events (…/callback/transfer/events?s=token). */
  eventsUrl: string;
  /**
   * Where Dialer serves `transferMarkup` for this call (…/answer?s=token&transfer=1), for providers
   * that fetch new instructions by URL (Plivo `aleg_url`) rather than taking them inline (Twilio `Twiml`).
   */
  markupUrl: string;
}

/** A callback request as the route received it. `url` is the public URL the provider called. */
export interface CallbackRequest {
  method: string;
  /** Full public URL, with the query string, exactly as the provider called it (signatures cover it). */
  url: string;
  /** Header names in lower case. */
  headers: Readonly<Record<string, string | undefined>>;
  /** The body exactly as received (form-encoded or JSON). */
  rawBody: string;
  /** Body fields (form or flattened JSON) merged with query fields; body wins. */
  params: Readonly<Record<string, string>>;
}

/** The lifecycle moment a status callback reports, in Dialer's words. */
export type CallPhase = 'queued' | 'ringing' | 'answered' | 'ended';

/** How a call ended, when `phase` is `ended`. */
export type EndKind = 'completed' | 'no_answer' | 'busy' | 'failed' | 'voicemail' | 'canceled';

export interface CallStatus {
  callSid: string;
  /** The provider's own status word, kept for the record. */
  providerStatus: string;
  phase: CallPhase;
  /** Set when phase is `ended`. */
  end?: EndKind;
  /** Talk time in seconds, when the provider reports it. */
  durationSeconds?: number;
  /** Answering-machine detection: `machine` makes the attempt a voicemail. */
  answeredBy?: 'human' | 'machine' | 'unknown';
  /** The provider's reason text or error code on failure. */
  reason?: string;
  /** Price the provider reports (positive number in its currency), when it does. */
  cost?: number;
}

/** An answer-URL request: who called whom. For outbound calls `to` is the callee. */
export interface AnswerInfo {
  callSid: string;
  from: string;
  to: string;
  /** `inbound` when the call came in to one of our numbers. */
  direction: 'inbound' | 'outbound';
  answeredBy?: 'human' | 'machine' | 'unknown';
  /** Answering-machine detection in end-of-greeting mode: the greeting is over (`beep`: it ended with a beep). */
  greetingEnded?: 'beep' | 'silence' | 'other';
  /** How long the provider listened before deciding (Twilio MachineDetectionDuration), ms. */
  detectionMs?: number;
}

/** What Dialer answers the provider with (TwiML, Plivo XML, Exotel JSON). */
export interface Markup {
  contentType: string;
  body: string;
}

/** One decoded media-stream frame. */
export type MediaEvent =
  | { type: 'start'; streamId: string; callSid: string; customParameters: Record<string, string> }
  /**
   * `timestampMs`: when the provider says, its time for this audio in ms since the stream started
   * (Twilio media.timestamp). `mulaw`: the same audio as the G.711 mu-law bytes the provider sent,
   * when it sent those (a relay to a model that takes mu-law passes them on without re-encoding).
   */
  | { type: 'audio'; pcm: Int16Array; timestampMs?: number; mulaw?: Buffer }
  | { type: 'dtmf'; digit: string }
  /** Playback reached this mark (Twilio/Exotel `mark`, Plivo `playedStream`). */
  | { type: 'mark'; name: string }
  | { type: 'stop' }
  /** A frame with nothing for Dialer (Twilio `connected`, Plivo keep-alives). */
  | { type: 'other' };

/**
 * One media stream's codec: provider frames <-> PCM and control messages. Stateful: it learns the
 * stream id from the `start` frame and puts it in every outbound frame.
 */
export interface MediaSerializer {
  /** Decodes one text frame. Throws ProtocolError when it is not the provider's protocol. */
  decode(frame: string): MediaEvent;
  /** Frames that play this PCM to the caller (one or more; the serializer picks the chunking). */
  audio(pcm: Int16Array): string[];
  /** A frame asking the provider to report back when playback reaches this point. */
  mark(name: string): string;
  /** A frame that drops whatever audio the provider still has queued (barge-in). */
  clear(): string;
}

export interface ProviderKit {
  readonly slot: ProviderSlot;
  readonly path: ProviderPath;
  /** Human name for logs and errors: Twilio, Exotel, Plivo. */
  readonly label: string;

  // The REST requests below take the call's trace context last: each request is traced under it
  // and carries it to the provider (src/telephony/rest.ts).

  /** Places an outbound call. Resolves with the provider's call SID; throws ProviderError. */
  placeCall(request: PlaceCallRequest, traceContext?: Context): Promise<{ callSid: string }>;
  /**
   * Ends a call in any state. Takes the id placeCall returned or the one callbacks carry (for Plivo
   * a request_uuid before answer, a CallUUID after). Succeeds when the call has already ended.
   */
  hangup(callSid: string, traceContext?: Context): Promise<void>;
  /** Moves the callee of a live call to a human (warm transfer). Throws ProviderError. */
  transfer(callSid: string, request: TransferRequest, traceContext?: Context): Promise<void>;
  /**
   * How the provider plays keys to the callee: `onAnswer`, whether placeCall plays `sendDigits`
   * itself; `live`, how keys are played during the call: `api` (a request that leaves the call as
   * it is), `new_instructions` (the call's instructions are replaced: the media stream closes and a
   * new one opens once the keys have played) or `inband` (the provider has no way: Dialer plays the
   * keys' tones on the media stream).
   */
  readonly keys: { onAnswer: boolean; live: 'api' | 'new_instructions' | 'inband' };
  /** Plays keys (0-9, *, #, w for half a second) on a live call, when `keys.live` is not `inband`. Throws ProviderError. */
  sendDigits?(callSid: string, digits: string, streamUrl: string, traceContext?: Context): Promise<void>;

  /** True when the callback carries the provider's valid signature (Exotel: see its folder). */
  verify(request: CallbackRequest): boolean;
  /** Reads the answer-URL request. Throws ProtocolError when fields are missing. */
  parseAnswer(params: Readonly<Record<string, string>>): AnswerInfo;
  /** Reads a status (or details) callback. Throws ProtocolError when fields are missing. */
  parseStatus(params: Readonly<Record<string, string>>): CallStatus;

  /** Markup that connects the answered call to Dialer's media WebSocket at `streamUrl` (wss://…/media/<token>). */
  streamMarkup(streamUrl: string, statusUrl: string): Markup;
  /** Markup that says `message` (when given) and then hangs up, or dials `redirectTo` when given. */
  blockMarkup(options: { message?: string; redirectTo?: string; callerId?: string }): Markup;
  /** Markup that dials the human of a warm transfer (with the status and events URLs). */
  transferMarkup(request: TransferRequest): Markup;
  /** Markup that ends the call at once (an answering machine picked up). */
  hangupMarkup(): Markup;

  /** A fresh serializer for one media stream. */
  serializer(): MediaSerializer;
}

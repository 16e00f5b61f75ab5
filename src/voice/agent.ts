/**
 * The seam between a live call and the agent that talks on it. Telephony (and later WebRTC) gives
 * the agent a `CallIO`; the agent plays audio, listens, and says how the conversation ended.
 *
 * Terminology
 * - call: one live connection to a person (a telephony call or a browser session).
 * - turn: one stretch of speech by one side.
 * - barge-in: the person speaks while the agent is playing audio; the agent clears its playout.
 * - PCM: signed 16-bit mono at `sampleRateHz` (8,000 Hz on telephony).
 */
import type { Context } from '@opentelemetry/api';

export interface CallContext {
  /** The provider's call SID (or room name): the trace key. */
  callId?: string;
  leadId: string | undefined;
  templateId: string | undefined;
  /** The lead's payload (variables for substitution). */
  payload: Record<string, unknown>;
  direction: 'outbound' | 'inbound';
  /** E.164 numbers: our caller ID and the person's. */
  ourNumber: string;
  theirNumber: string;
  /** Whether to treat an answering machine's first words as voicemail (feature flag); default true. */
  voicemailDetection?: boolean;
  /** What to do when a machine answers: hang up (the default) or leave `message` ({variable} filled from the payload). */
  voicemail?: VoicemailPolicy;
  /** Set when the provider's detection said a machine answered (the call was streamed to leave a message). */
  machine?: { greetingEnded?: 'beep' | 'silence' | 'other'; detectionMs?: number };
  /** Offer the built-in `opt_out` function in every node (the configuration's opt_out_enabled). */
  optOut?: boolean;
  /** Keys pressed right after the answer, before the agent speaks (the lead's payload.dial_digits). */
  dialDigits?: string;
  /** The lead's calling-window time zone (IANA): callback times the callee gives are read in it. */
  timeZone?: string;
  /** Spoken before the agent's first line, whole (the configuration's disclosure in the call's language; `{variable}` filled from the payload). */
  disclosure?: Disclosure;
  /** The OpenTelemetry context of the call's root span: the conversation's turns are its children. */
  traceContext?: Context;
}

export interface Disclosure {
  text: string;
  /** The language the text was chosen for, when the configuration had one for the call's. */
  language?: string;
}

export interface VoicemailPolicy {
  action: 'hang_up' | 'leave_message';
  message?: string;
}

export type PlayResult = 'played' | 'cleared' | 'ended';

/**
 * The human's leg of a warm transfer: a second call whose audio the agent has to itself (to brief
 * the human and hear their answer) until it is bridged to the person's call.
 */
export interface ConsultLeg {
  readonly sampleRateHz: number;
  /** Aborted when the human's call is over (they hung up, or it was ended). */
  readonly signal: AbortSignal;
  play(pcm: Int16Array): Promise<PlayResult>;
  onAudio(listener: (pcm: Int16Array) => void): void;
  onDtmf(listener: (digit: string) => void): void;
  /** Puts the person through to the human (their audio flows both ways); the agent leaves the call. */
  bridge(): Promise<void>;
  /** Ends the human's call (they declined, or never decided). */
  hangup(): void;
}

/** How calling the human of a warm transfer went: their leg once they answered, or why they did not. */
export type ConsultAnswer = { answered: true; leg: ConsultLeg } | { answered: false; reason: 'no_answer' | 'busy' | 'failed'; detail?: string };

/** What a live client (the WebRTC playground, an app) is told while the conversation runs. */
export type CallEvent =
  | { type: 'transcript'; role: 'user' | 'assistant'; text: string; final: boolean; /** A final line's offset in the recording, when it has one. */ at_ms?: number }
  | { type: 'node'; node: string }
  | { type: 'function_call'; name: string; arguments: unknown; result?: unknown; transition_to?: string };

/** A client asks the agent to say something (WEBRTC_STREAM's `tts-speak`). */
export interface SpeakRequest {
  text: string;
  /** Cut what the agent is saying now instead of queueing behind it. */
  interrupt: boolean;
}

export interface CallIO {
  readonly sampleRateHz: number;
  /** Aborted when the call is over (either side hung up, or Dialer is stopping). */
  readonly signal: AbortSignal;
  /** Queues audio for the person; resolves once it has been heard, cleared, or the call ended. */
  play(pcm: Int16Array): Promise<PlayResult>;
  /** Drops every queued sound at once (barge-in). */
  clear(): void;
  /** Ends the call from our side. */
  hangup(): void;
  /** Moves the person to a human at `to` (warm transfer); the agent leaves the call. */
  transfer(to: string): Promise<void>;
  /**
   * Calls the human of a warm transfer on a second leg while the person stays on this one; resolves
   * once they answered or could not be reached. Only transports that carry both legs' audio offer it
   * (elsewhere a warm transfer is carried out as `transfer`).
   */
  consult?(to: string): Promise<ConsultAnswer>;
  /** The person's audio, in order, as it arrives. */
  /**
   * `timestampMs`: the transport's own time for the audio (ms since the stream started), when it
   * has one; `mulaw`: the same audio as the G.711 mu-law bytes the transport carried, when it did.
   */
  onAudio(listener: (pcm: Int16Array, timestampMs?: number, mulaw?: Buffer) => void): void;
  /** Keys the person pressed. */
  onDtmf(listener: (digit: string) => void): void;
  /**
   * Presses keys on our side (0-9, *, #, w for half a second), to get through a phone menu;
   * resolves once they were played, throws when they could not be. Telephony only.
   */
  sendDigits?(digits: string): Promise<void>;
  /**
   * Milliseconds since the call's recording started (the offset a transcript line is stamped with,
   * so a player can seek to it); undefined where nothing records the call.
   */
  recordingMs?(): number;
  /** Live events for a client that shows the conversation (WebRTC); telephony has none. */
  observe?(event: CallEvent): void;
  /** Speech the client asks for (WEBRTC_STREAM); only transports with a client offer it. */
  onSpeak?(listener: (request: SpeakRequest) => void): void;
}

/** A transcript line's `at_ms`: `msAgo` before where the recording is now (`CallIO.recordingMs`); nothing when the call is not recorded. */
export function recordingAt(recordingMs: number | undefined, msAgo = 0): { at_ms?: number } {
  return recordingMs === undefined ? {} : { at_ms: Math.max(0, Math.round(recordingMs - msAgo)) };
}

export interface ConversationResult {
  /** The lead outcome the conversation reached (the flow's own words); undefined: `completed`. */
  outcome?: string;
  /** Goes to the lead's metaData (transcription, node_traversal, dtmf, call_ended_by …). */
  metaData: Record<string, unknown>;
  /** The customer's sentiment, 0 (negative) to 1 (positive). */
  sentiment?: number;
  /** What the conversation's AI services cost, in the pricing table's currency. */
  cost?: number;
  traceScores?: Record<string, number>;
}

export interface CallAgent {
  readonly label: string;
  /**
   * The call is being placed and will ring: the moment to open what the conversation will need
   * (warm connections to the AI services), so its first words are not late. Never throws.
   */
  prepare?(context: CallContext): Promise<void>;
  /** Runs one conversation; resolves when it is over. Must resolve (not reject) when `io.signal` aborts. */
  converse(context: CallContext, io: CallIO): Promise<ConversationResult>;
}

/**
 * The public shapes of the provider emulator (see index.ts). Kept apart so every module of the
 * emulator can use them without import cycles.
 */

import type { LocalVoice } from '../lib/speech.js';

export type EmulatedProvider = 'PROVIDER_A' | 'PROVIDER_B' | 'PROVIDER_C';

export interface EmulatorOptions {
  /** Port to listen on; 0 (default) picks a free one. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Dialer's base URL, e.g. http://127.0.0.1:8080. Inbound calls and Exotel's Voicebot applet call `${dialerUrl}/provider_x/answer`. */
  dialerUrl: string;
  twilio: { accountSid: string; authToken: string };
  plivo: { authId: string; authToken: string };
  exotel: { accountSid: string; apiKey: string; apiToken: string };
  /** Script for numbers without one of their own. Default: answer and stay silent. */
  defaultScript?: CalleeScript;
  /** The callees' voice (default: flite's). */
  voice?: LocalVoice;
  /**
   * Keep every media frame and all audio each way in the call's record (default true: tests read
   * them). `false` for load (`npm run bench:voice`): a hundred calls' frames kept for the life of the
   * process made the emulator's garbage collection pause for tens of milliseconds, late on its own
   * clock. Counts, marks, clears, the spans of Dialer's voice and the callee's timeline are kept
   * either way; `received.pcm`, `sent.pcm`, `received.audioAtMs` and the media frames in
   * `received.frames` stay empty.
   */
  recordMedia?: boolean;
  /**
   * How many ended calls stay in `calls` (and answer the REST APIs' lookups); the oldest beyond
   * are forgotten. Default: every one (tests read them). An emulator that lives as long as a server
   * (the sandbox line) keeps a bounded number.
   */
  keepEndedCalls?: number;
  log?: (msg: string) => void;
}

export type CalleeStep =
  /** Speak this line (the local voice, 8 kHz), streamed in real time. `label` names it in the call's timeline. */
  | { say: string; label?: string }
  /** Play this 8 kHz audio as the callee (a prepared recording, a noise), streamed in real time. */
  | { play: Int16Array; label?: string }
  /** Press these keys (one dtmf event per digit). */
  | { dtmf: string }
  /** Milliseconds of silence. */
  | { wait: number }
  /** Wait until Dialer has spoken and then been quiet for ~400 ms, at most this many ms. */
  | { waitForAudio: number }
  /** Wait until Dialer has been quiet (nothing heard, nothing queued) for `quietMs`, at most `timeoutMs`. */
  | { waitForQuiet: { quietMs: number; timeoutMs: number } }
  /** Wait until Dialer's voice has been heard for `speakingMs` (the gaps of speech, under 600 ms, included), at most `timeoutMs`. */
  | { waitForSpeech: { speakingMs: number; timeoutMs: number } }
  /** Play a steady tone (a voicemail beep): `hz` (default 1,000) for `ms` (default 600). */
  | { beep: { hz?: number; ms?: number } }
  /**
   * Wait until Dialer has sent these keys (by any route: markup, REST, in-band tones), at most
   * `timeoutMs` (default 15,000); `else` runs when they did not come in time (default: go on).
   */
  | { expectDigits: string; timeoutMs?: number; else?: CalleeStep[] }
  /** The steps that come next, decided when this one is reached (a customer who answers what it heard); played in its place. */
  | { decide: () => Promise<CalleeStep[]> }
  /** The callee hangs up. */
  | { hangup: true };

export interface CalleeScript {
  /** voicemail = answered by a machine (AMD reports machine). */
  answer: 'answer' | 'busy' | 'no_answer' | 'fail' | 'voicemail';
  /** Default 200. */
  ringMs?: number;
  /** Run once the media stream has started; afterwards the callee stays on the line silently. */
  steps?: CalleeStep[];
  /** Default 30: the callee hangs up after this long (counted from the answer). */
  maxSeconds?: number;
}

export interface EmulatedCall {
  provider: EmulatedProvider;
  /** Twilio CA… (34 chars); Exotel 32 hex; Plivo CallUUID. */
  callSid: string;
  /** Plivo's request_uuid (the REST answer). */
  requestUuid?: string;
  direction: 'outbound' | 'inbound';
  from: string;
  to: string;
  /** The provider's own current status word. */
  status: string;
  statusHistory: string[];
  /** Wall-clock times (Date.now()) the call was created, answered and ended: what a test samples live calls and call starts from. */
  createdAt: number;
  answeredAt?: number;
  endedAt?: number;
  /** REST requests Dialer made about this call. */
  rest: Array<{ method: string; path: string; params: Record<string, unknown> }>;
  /** Every answer/transfer markup Dialer returned. */
  markup: string[];
  /** Texts Dialer asked the provider to speak (<Say>/<Speak>). */
  said: string[];
  /** Keys Dialer sent on the call, in order (`w` pauses left out). */
  dtmfReceived: string;
  /** How each run of keys came: markup (Twilio <Play digits>, Plivo <DTMF>), REST (Plivo's DTMF API), in-band tones in Dialer's audio, or RFC 4733 events (the sandbox SIP far side). */
  dtmfEvents: Array<{ digits: string; via: 'markup' | 'rest' | 'inband' | 'rtp'; atMs: number }>;
  /** When the callee's beep steps ended, in ms since the call was answered. */
  beepsAtMs: number[];
  /** When the callee first heard Dialer speak (voiced audio), in ms since the call was answered. */
  firstVoiceAtMs?: number;
  /** How much of Dialer's speech the callee heard after its (last) beep ended, in ms. */
  voicedAfterBeepMs: number;
  /** Number Dialer dialled/redirected/transferred to. */
  redirectedTo?: string;
  streamUrl?: string;
  received: {
    /** Dialer->callee audio, 8 kHz, in playout order. */
    pcm: Int16Array;
    audioFrames: number;
    /** When each of those audio frames arrived, in milliseconds since the stream started. */
    audioAtMs: number[];
    marks: Array<{ name: string; atMs: number }>;
    /** Milliseconds since the stream started. */
    clears: number[];
    /** When Dialer's voice was heard (20 ms frames of its audio above speech level, joined), ms since the stream started. */
    voiced: Array<{ fromMs: number; toMs: number }>;
    /** Every frame Dialer sent, parsed (or the raw text when it was not JSON). */
    frames: unknown[];
  };
  sent: {
    pcm: Int16Array;
    /** 20 ms media frames sent to Dialer. */
    frames: number;
    /** Of those, how many the emulator itself sent more than a frame behind its clock (its own event loop lagged). */
    framesLate: number;
    /** When each step's speech or audio began and ended on the line, ms since the stream started. */
    timeline: Array<{ label: string; fromMs: number; toMs?: number }>;
  };
  /** Wall-clock time (Date.now()) the media stream started: the zero of the stream's ms. */
  streamStartedAt?: number;
  /** Every request the emulator made to Dialer: url, Dialer's HTTP status (0: no answer), the body it sent. */
  callbacks: Array<{ url: string; status: number; body: string }>;
  /** Settles when the call is over and its final callbacks were posted. */
  ended: Promise<void>;
  wsCloseCode?: number;
}

export interface Emulator {
  /** Base URL: use as TWILIO_API_URL, PLIVO_API_URL and EXOTEL_API_URL. */
  url: string;
  /** What Dialer uses as EXOTEL_FLOW_URL (${url}/exotel/flow). */
  exotelFlowUrl: string;
  calls: EmulatedCall[];
  script(number: string, script: CalleeScript): void;
  nextCall(predicate?: (c: EmulatedCall) => boolean, timeoutMs?: number): Promise<EmulatedCall>;
  inbound(options: { provider: EmulatedProvider; from: string; to: string }): Promise<EmulatedCall>;
  close(): Promise<void>;
}

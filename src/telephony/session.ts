/**
 * One telephony call, from placement to its end: it answers the provider's answer request, takes
 * status callbacks in any order and any number of times, carries the media stream between the
 * provider and the agent, records both sides, and settles one `CallEnd` for the lead lifecycle.
 *
 * A call is over when the provider says so (a final status callback) and the media stream, if one
 * opened, has closed and its recording is stored. Safety timers end calls whose callbacks never come.
 */
import { randomBytes } from 'node:crypto';
import type { WebSocket } from 'ws';
import type { Logger } from '../lib/logger.js';
import type { CallAgent, CallContext, CallEvent, CallIO, ConsultAnswer, ConversationResult, PlayResult } from '../voice/index.js';
import type { CallEnd } from '../lifecycle/index.js';
import { callEnd } from './end.js';
import { CallRecorder } from './recorder.js';
import { KeySender } from './keys.js';
import { writePlay, type Corkable } from './play.js';
import { StreamReplacement } from './replacement.js';
import { deferred } from '../lib/deferred.js';
import { TELEPHONY_SAMPLE_RATE_HZ, type AnswerInfo, type CallPhase, type CallStatus, type EndKind, type Markup, type MediaSerializer, type ProviderKit, type TransferRequest } from './provider.js';

/** Stores a finished recording and gives back its URL. */
export type SaveRecording = (callSid: string, wav: Buffer) => Promise<string>;

export interface SessionUrls {
  answer: string;
  status: string;
  stream: string;
  transferStatus: string;
  transferEvents: string;
  transferMarkup: string;
}

export interface SessionDeps {
  kit: ProviderKit;
  agent: CallAgent;
  saveRecording: SaveRecording;
  log: Logger;
  /** URLs of this call, built from the token. */
  urls(token: string): SessionUrls;
  /** How long to wait for the final status callback after the media stream closed. */
  statusGraceMs: number;
  /** Calls the human of a warm transfer on a second call of the same provider (Telephony.consult). */
  consult?(parent: CallSession, to: string): Promise<ConsultAnswer>;
  /** Where the call's transcript lines go as they are spoken (a page watching the lead shows them live). */
  liveTranscript?: (leadId: string) => (line: { role: 'user' | 'assistant'; content: string; at_ms?: number }) => void;
}

const PHASE_RANK: Record<CallPhase, number> = { queued: 0, ringing: 1, answered: 2, ended: 3 };


export class CallSession {
  readonly token = randomBytes(24).toString('base64url');
  readonly urls: SessionUrls;
  /** The id placeCall returned (the lead's call_id). */
  callSid: string | undefined;
  /** The id callbacks carry, when it differs (Plivo CallUUID after a request_uuid). */
  providerCallId: string | undefined;
  phase: CallPhase = 'queued';
  answeredBy: AnswerInfo['answeredBy'];
  private endKind: EndKind | undefined;
  private durationSeconds: number | undefined;
  private reason: string | undefined;
  /** Dialer's shutdown hung the call up (past the grace period): the conversation did not end on its own. */
  private cutByShutdown = false;
  private readonly providerStatuses: string[] = [];
  readonly transferEvents: Array<Record<string, string>> = [];
  private transferTo: string | undefined;

  private ws: WebSocket | undefined;
  /** The connection under `ws`: a play's messages are written to it together (writePlay). */
  private socket: Corkable | undefined;
  private serializer: MediaSerializer | undefined;
  private recorder: CallRecorder | undefined;
  private conversation: Promise<ConversationResult> | undefined;
  private readonly callOver = new AbortController();
  private readonly audioListeners: Array<(pcm: Int16Array, timestampMs?: number, mulaw?: Buffer) => void> = [];
  private readonly dtmfListeners: Array<(digit: string) => void> = [];
  private readonly pendingPlays = new Map<string, (r: PlayResult) => void>();
  private markSeq = 0;
  private mediaDone: Promise<{ result?: ConversationResult; recordingUrl?: string }> | undefined;
  /** Settles when the media stream is over for good (not when one is replaced by the next). */
  private readonly streamOver = deferred<void>();
  /** Awaited while the provider replaces the stream (Twilio plays keys between two streams). */
  private readonly replacing = new StreamReplacement();
  private readonly keys = new KeySender(this);
  private readonly settled = deferred<CallEnd>();
  private readonly reached = deferred<void>();
  private finishing = false;
  private failure: string | undefined;
  private statusGraceTimer: NodeJS.Timeout | undefined;

  /** This call's logger: every line carries the lead and call ids (the call id once the provider gave it). */
  private get log(): Logger {
    return this.deps.log.child({ leadId: this.context.leadId, callId: this.callSid ?? this.providerCallId, provider: this.kit.slot });
  }

  constructor(
    private readonly deps: SessionDeps,
    readonly context: CallContext,
  ) {
    this.urls = deps.urls(this.token);
  }

  get kit(): ProviderKit {
    return this.deps.kit;
  }

  /** Settles once with how the call ended. */
  get ended(): Promise<CallEnd> {
    return this.settled.promise;
  }

  /** Resolves once the callee answered (a person or a machine); never when the call was not answered. */
  get answered(): Promise<void> {
    return this.reached.promise;
  }

  get isOver(): boolean {
    return this.finishing;
  }

  /** The ids this call is known by (for lookups by callbacks). */
  ids(): string[] {
    return [this.callSid, this.providerCallId].filter((x): x is string => x !== undefined);
  }

  /** The answer URL was fetched: connect the media stream, or hang up on a machine. */
  answer(info: AnswerInfo, options: { transfer?: boolean } = {}): Markup {
    this.providerCallId ??= info.callSid;
    // The provider asks what to do once the agent has left (Plivo aleg_url, Exotel's Connect applet).
    if (options.transfer) return this.transferTo ? this.kit.transferMarkup(this.transferRequest(this.transferTo)) : this.kit.hangupMarkup();
    if (this.finishing) return this.kit.hangupMarkup();
    if (info.answeredBy === 'machine') {
      this.answeredBy = 'machine';
      // A message to leave: the agent gets the machine (and waits for the beep when the provider did not).
      if (this.context.voicemail?.action !== 'leave_message') return this.kit.hangupMarkup();
      this.context.machine = { ...(info.greetingEnded ? { greetingEnded: info.greetingEnded } : {}), ...(info.detectionMs !== undefined ? { detectionMs: info.detectionMs } : {}) };
    }
    this.answeredBy ??= info.answeredBy;
    this.advance('answered');
    return this.kit.streamMarkup(this.urls.stream, this.urls.status);
  }

  /** A status (or details) callback. Duplicates and stale ones change nothing. Returns whether it applied. */
  status(status: CallStatus): boolean {
    this.providerCallId ??= status.callSid;
    if (status.answeredBy === 'machine') this.answeredBy = 'machine';
    if (this.endKind !== undefined) return false;
    if (status.phase !== 'ended' && PHASE_RANK[status.phase] <= PHASE_RANK[this.phase]) return false;
    this.providerStatuses.push(status.providerStatus);
    this.advance(status.phase);
    if (status.phase === 'ended') {
      this.endKind = status.end ?? 'completed';
      this.durationSeconds = status.durationSeconds;
      this.reason = status.reason;
      this.log.debug({ end: this.endKind }, 'call ended at the provider');
      // The provider ended the call: the stream is over too.
      this.closeMedia(1000, 'call ended');
      void this.finish();
    }
    return true;
  }

  transferEvent(params: Record<string, string>): void {
    const { s: _token, ...event } = params; // the session token stays out of the lead's record
    this.transferEvents.push(event);
  }

  private advance(phase: CallPhase): void {
    if (PHASE_RANK[phase] > PHASE_RANK[this.phase]) this.phase = phase;
    if (phase === 'answered') this.reached.resolve();
  }

  /**
   * The provider opened the media WebSocket for this call. One stream at a time: a second is taken
   * only while the provider replaces the first (after playing keys), and carries the same conversation.
   */
  attach(ws: WebSocket, socket?: Corkable): boolean {
    if (this.finishing || this.endKind !== undefined) return false;
    if (this.ws && !this.replacing.awaited) return false;
    this.ws = ws;
    this.socket = socket;
    this.serializer = this.kit.serializer();
    ws.on('message', (data, isBinary) => {
      if (isBinary || ws !== this.ws) return;
      let event;
      try {
        event = this.serializer!.decode(data.toString());
      } catch (err) {
        this.log.warn({ err }, 'unreadable media frame');
        return;
      }
      switch (event.type) {
        case 'start':
          this.providerCallId ??= event.callSid;
          this.replacing.settle();
          this.startConversation();
          break;
        case 'audio':
          this.recorder?.heard(event.pcm);
          for (const l of this.audioListeners) l(event.pcm, event.timestampMs, event.mulaw);
          break;
        case 'dtmf':
          for (const l of this.dtmfListeners) l(event.digit);
          break;
        case 'mark':
          this.pendingPlays.get(event.name)?.('played');
          this.pendingPlays.delete(event.name);
          break;
        case 'stop':
          this.streamStopped(ws);
          break;
      }
    });
    ws.on('close', () => this.streamStopped(ws));
    ws.on('error', (err) => this.log.warn({ err }, 'media stream error'));
    this.mediaDone ??= this.streamOver.promise.then(() => this.endMedia());
    return true;
  }

  /** A stream ended: the call's media is over, unless the provider is replacing the stream. */
  private streamStopped(ws: WebSocket): void {
    if (ws !== this.ws) return;
    if (this.replacing.awaited) {
      // Audio queued on the old stream is dropped with it.
      this.ws = undefined;
      for (const resolve of this.pendingPlays.values()) resolve('cleared');
      this.pendingPlays.clear();
      return;
    }
    this.streamOver.resolve();
  }

  /**
   * The provider is about to replace the stream (Twilio plays keys by replacing the call's
   * instructions). Resolves true once the next stream started, false when none came in `timeoutMs`
   * (the call's media is then over).
   */
  async awaitReplacement(replace: () => Promise<void>, timeoutMs: number): Promise<boolean> {
    const came = await this.replacing.expect(replace, timeoutMs);
    if (!came && !this.ws) this.streamOver.resolve();
    return came;
  }

  private startConversation(): void {
    if (this.conversation) return;
    this.recorder = new CallRecorder(TELEPHONY_SAMPLE_RATE_HZ);
    const io = this.io();
    // Keys the provider could not play on answer (an extension) go first, in-band.
    const before = this.context.dialDigits && !this.kit.keys.onAnswer ? this.keys.send(io, this.context.dialDigits, 'dial').catch(() => undefined) : Promise.resolve();
    this.conversation = before.then(() => this.deps.agent.converse(this.context, io)).catch((err: unknown) => {
      this.log.error({ err }, 'the agent failed');
      return { metaData: { errors: [`the agent failed: ${(err as Error).message}`] } };
    });
  }

  private io(): CallIO {
    const session = this;
    // Only final lines go on to the live transcript: a page watching the lead shows what the lead will keep.
    const sink = this.context.leadId ? this.deps.liveTranscript?.(this.context.leadId) : undefined;
    return {
      ...(sink ? { observe: (e: CallEvent) => void (e.type === 'transcript' && e.final && sink({ role: e.role, content: e.text, at_ms: e.at_ms })) } : {}),
      sampleRateHz: TELEPHONY_SAMPLE_RATE_HZ,
      signal: this.callOver.signal,
      play(pcm) {
        if (session.callOver.signal.aborted) return Promise.resolve('ended' as const);
        if (!session.ws) return Promise.resolve(session.replacing.awaited ? ('cleared' as const) : ('ended' as const));
        const name = `play-${++session.markSeq}`;
        writePlay(session.ws, session.socket, session.serializer!, pcm, name);
        session.recorder?.played(pcm);
        return new Promise<PlayResult>((resolve) => session.pendingPlays.set(name, resolve));
      },
      clear() {
        if (!session.ws || session.callOver.signal.aborted) return;
        session.ws.send(session.serializer!.clear());
        session.recorder?.cleared();
        for (const resolve of session.pendingPlays.values()) resolve('cleared');
        session.pendingPlays.clear();
      },
      hangup() {
        void session.hangup('agent');
      },
      async transfer(to) {
        session.transferTo = to;
        try {
          await session.kit.transfer(session.providerCallId ?? session.callSid!, session.transferRequest(to), session.context.traceContext);
        } catch (err) {
          session.transferTo = undefined;
          throw err;
        }
        // The agent leaves: the provider moves on to the transfer (Exotel only does once the stream closes).
        session.closeMedia(1000, 'transferred');
      },
      ...(this.deps.consult ? { consult: (to: string) => session.deps.consult!(session, to) } : {}),
      onAudio(listener) {
        session.audioListeners.push(listener);
      },
      onDtmf(listener) {
        session.dtmfListeners.push(listener);
      },
      sendDigits(digits) {
        return session.keys.send(this, digits, 'agent');
      },
      recordingMs() {
        return session.recorder?.elapsedMs() ?? 0;
      },
    };
  }

  /** Joins the human of a warm transfer (`legIo`: their call): each hears the other through Dialer, and this call's recording keeps both. */
  bridge(legIo: CallIO, to: string): void {
    this.transferTo = to;
    const io = this.io();
    this.audioListeners.push((pcm) => void legIo.play(pcm));
    legIo.onAudio((pcm) => void io.play(pcm));
  }

  /** The provider's id of the live call (what REST requests about it take). */
  get liveCallId(): string | undefined {
    return this.providerCallId ?? this.callSid;
  }

  private transferRequest(to: string): TransferRequest {
    return { to, from: this.context.ourNumber, statusUrl: this.urls.transferStatus, eventsUrl: this.urls.transferEvents, markupUrl: this.urls.transferMarkup };
  }

  private closeMedia(code: number, reason: string): void {
    // Closed from our side (or the call ended): no replacement is awaited any more.
    this.replacing.settle();
    if (this.ws && this.ws.readyState <= 1) this.ws.close(code, reason);
    else if (this.mediaDone) this.streamOver.resolve();
  }

  /** The stream closed: let the agent finish, store the recording. */
  private async endMedia(): Promise<{ result?: ConversationResult; recordingUrl?: string }> {
    this.callOver.abort();
    this.recorder?.ended();
    for (const resolve of this.pendingPlays.values()) resolve('ended');
    this.pendingPlays.clear();
    this.closeMedia(1000, 'stream over');
    const result = await this.conversation;
    let recordingUrl: string | undefined;
    const sid = this.callSid ?? this.providerCallId;
    if (this.recorder && sid) {
      try {
        recordingUrl = await this.deps.saveRecording(sid, this.recorder.wav());
      } catch (err) {
        this.log.error({ err }, 'could not store the recording');
      }
    }
    // The provider's final status usually follows the stream's end; wait a little for it. After a
    // transfer the call goes on with the human: wait for its end (the safety timer still bounds it).
    if (this.endKind === undefined && this.transferTo === undefined) {
      this.statusGraceTimer = setTimeout(() => void this.finish(), this.deps.statusGraceMs);
    } else if (this.endKind !== undefined) void this.finish();
    return { result, recordingUrl };
  }

  /** Ends the call from Dialer's side (the agent is done, a shutdown, a safety timer). */
  async hangup(by: 'agent' | 'shutdown' | 'timeout', failure?: string): Promise<void> {
    if (failure) this.failure ??= failure;
    if (by === 'shutdown') this.cutByShutdown = true;
    this.closeMedia(1000, `hung up by ${by}`);
    const id = this.providerCallId ?? this.callSid;
    if (id) {
      try {
        await this.kit.hangup(id, this.context.traceContext);
      } catch (err) {
        this.log.warn({ err }, 'hang-up request failed');
      }
    }
    if (by !== 'agent') void this.finish(true);
  }

  /** Placement failed: the call never existed. */
  fail(end: CallEnd): void {
    this.finishing = true;
    this.callOver.abort();
    this.settled.resolve(end);
  }

  private async finish(force = false): Promise<void> {
    if (this.finishing) return;
    if (!force && this.endKind === undefined && this.mediaDone === undefined) return;
    this.finishing = true;
    clearTimeout(this.statusGraceTimer);
    this.callOver.abort();
    this.closeMedia(1000, 'call over');
    const media = this.mediaDone ? await this.mediaDone : undefined;
    this.settled.resolve(this.outcome(media));
  }

  private outcome(media: { result?: ConversationResult; recordingUrl?: string } | undefined): CallEnd {
    const { answeredBy, transferTo, durationSeconds, failure, endKind, reason, cutByShutdown, providerStatuses, transferEvents } = this;
    const meta = { provider_statuses: providerStatuses, ...(transferEvents.length ? { transfer_events: transferEvents } : {}), ...this.keys.record() };
    return callEnd({ answeredBy, media, transferTo, durationSeconds, spokenSeconds: this.recorder?.seconds, failure, endKind, reason, cutByShutdown, meta });
  }
}

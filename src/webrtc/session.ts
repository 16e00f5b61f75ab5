/**
 * One WebRTC voice session: a browser (or app) peer, the agent that talks on it, the recording of
 * both sides, and one `CallEnd` for the lead lifecycle, as a telephony CallSession gives.
 *
 * The conversation starts when the peer connects. The session ends when the agent hangs up (the
 * flow's end_conversation), the client hangs up (HTTP or the data channel), the peer disappears
 * (its connection fails, or stays disconnected past a grace period, or its data channel closes),
 * or it never connects at all.
 *
 * Data channel protocol (JSON, one object per message):
 * - client -> Dialer: `{type: 'tts-speak', text, interrupt?}` (WEBRTC_STREAM), `{type: 'hangup'}`.
 * - Dialer -> client: `{type: 'state', state}`, `{type: 'transcript', role, text, final}`,
 *   `{type: 'node', node}`, `{type: 'function_call', name, arguments, result, transition_to?}`,
 *   `{type: 'ended', outcome, call_ended_by}`.
 */
import type { Logger } from '../lib/logger.js';
import { outcomeOf, type CallEnd } from '../lifecycle/index.js';
import { CallRecorder } from '../telephony/recorder.js';
import type { CallAgent, CallContext, CallEvent, CallIO, ConversationResult, SpeakRequest } from '../voice/index.js';
import { WebRtcPeer } from './peer.js';
import type { ConnectionState, IceServer } from './wrtc.js';

/** The rate the agent hears and speaks at on WebRTC: wideband, what the VAD and most STTs want. */
export const AGENT_RATE_HZ = 16_000;

export interface SessionOptions {
  agent: CallAgent;
  iceServers: IceServer[];
  log: Logger;
  saveRecording(room: string, wav: Buffer): Promise<string>;
  /** A peer that does not connect within this time is given up. */
  connectTimeoutMs: number;
  /** A disconnected peer that does not come back within this time has gone. */
  disconnectGraceMs: number;
}

type EndedBy = 'agent' | 'customer' | 'shutdown';

export class WebRtcSession {
  private readonly peer: WebRtcPeer;
  private readonly callOver = new AbortController();
  private readonly audioListeners: Array<(pcm: Int16Array) => void> = [];
  private readonly speakListeners: Array<(request: SpeakRequest) => void> = [];
  private readonly pendingSpeech: SpeakRequest[] = [];
  private readonly recorder = new CallRecorder(AGENT_RATE_HZ);
  private conversation: Promise<ConversationResult> | undefined;
  private connectedAt: number | undefined;
  private endedBy: EndedBy | undefined;
  private failure: string | undefined;
  private connectTimer: NodeJS.Timeout | undefined;
  private graceTimer: NodeJS.Timeout | undefined;
  private resolveEnd!: (end: CallEnd) => void;
  /** Settles once with how the session ended. */
  readonly ended = new Promise<CallEnd>((r) => (this.resolveEnd = r));
  private finishing = false;

  constructor(
    private readonly options: SessionOptions,
    readonly context: CallContext & { callId: string },
  ) {
    this.peer = new WebRtcPeer(options.iceServers, AGENT_RATE_HZ, {
      audio: (pcm) => {
        if (this.conversation === undefined) return;
        this.recorder.heard(pcm);
        for (const l of this.audioListeners) l(pcm);
      },
      state: (state) => this.onState(state),
      message: (message) => this.onMessage(message),
      channelClosed: () => this.end('customer'),
    });
    this.connectTimer = setTimeout(() => this.end('customer', 'the peer never connected'), options.connectTimeoutMs);
  }

  get room(): string {
    return this.context.callId;
  }

  get isOver(): boolean {
    return this.finishing;
  }

  /** Answers the client's offer (the first, or an ICE restart). */
  answer(offerSdp: string): Promise<string> {
    return this.peer.answer(offerSdp);
  }

  /** WEBRTC_STREAM: the client asks the agent to speak. Queued until the conversation starts. */
  speak(request: SpeakRequest): void {
    if (this.finishing) return;
    if (this.speakListeners.length === 0) this.pendingSpeech.push(request);
    for (const l of this.speakListeners) l(request);
  }

  /** Ends the session from Dialer's side or on the client's request. */
  hangup(by: EndedBy): Promise<CallEnd> {
    this.end(by);
    return this.ended;
  }

  private onState(state: ConnectionState): void {
    this.options.log.debug({ room: this.room, state }, 'webrtc peer state');
    if (state === 'connected') {
      clearTimeout(this.graceTimer);
      this.graceTimer = undefined;
      this.start();
    } else if (state === 'disconnected') {
      // ICE may recover (or the client restarts it); a peer that stays away has gone.
      this.graceTimer ??= setTimeout(() => this.end('customer'), this.options.disconnectGraceMs);
    } else if (state === 'failed' || state === 'closed') this.end('customer');
  }

  private onMessage(message: unknown): void {
    if (typeof message !== 'object' || message === null) return;
    const m = message as { type?: unknown; text?: unknown; interrupt?: unknown };
    if (m.type === 'hangup') this.end('customer');
    else if (m.type === 'tts-speak' && typeof m.text === 'string' && m.text.trim() && m.text.length <= 5000) {
      this.speak({ text: m.text, interrupt: m.interrupt === true });
    }
  }

  private start(): void {
    if (this.conversation || this.finishing) return;
    clearTimeout(this.connectTimer);
    this.connectedAt = performance.now();
    this.peer.send({ type: 'state', state: 'connected', room: this.room });
    this.conversation = this.options.agent.converse(this.context, this.io()).catch((err: unknown) => {
      this.options.log.error({ leadId: this.context.leadId, room: this.room, err }, 'the agent failed');
      return { metaData: { errors: [`the agent failed: ${(err as Error).message}`] } };
    });
    // The agent ended the conversation on its own (end_conversation, a timeout, an error).
    void this.conversation.then(() => this.end('agent'));
  }

  private io(): CallIO {
    const session = this;
    return {
      sampleRateHz: AGENT_RATE_HZ,
      signal: this.callOver.signal,
      play(pcm) {
        if (session.callOver.signal.aborted) return Promise.resolve('ended' as const);
        session.recorder.played(pcm);
        return session.peer.play(pcm);
      },
      clear() {
        session.peer.clear();
        session.recorder.cleared();
      },
      hangup() {
        session.end('agent');
      },
      async transfer(to) {
        throw new Error(`a WebRTC session cannot be transferred to ${to}`);
      },
      onAudio(listener) {
        session.audioListeners.push(listener);
      },
      onDtmf() {},
      recordingMs() {
        return session.recorder.elapsedMs();
      },
      observe(event: CallEvent) {
        session.peer.send(event);
      },
      onSpeak(listener) {
        session.speakListeners.push(listener);
        for (const request of session.pendingSpeech.splice(0)) listener(request);
      },
    };
  }

  private end(by: EndedBy, failure?: string): void {
    if (this.finishing) return;
    this.finishing = true;
    this.endedBy = by;
    this.failure = failure;
    clearTimeout(this.connectTimer);
    clearTimeout(this.graceTimer);
    void this.finish();
  }

  private async finish(): Promise<void> {
    this.callOver.abort();
    this.recorder.ended();
    this.peer.clear();
    const result = await this.conversation;
    let recordingUrl: string | undefined;
    if (result) {
      try {
        recordingUrl = await this.options.saveRecording(this.room, this.recorder.wav());
      } catch (err) {
        this.options.log.error({ leadId: this.context.leadId, room: this.room, err }, 'could not store the recording');
      }
    }
    const end = this.outcome(result, recordingUrl);
    // Tell the client how it ended, then let the message go out (and, when the agent ended the
    // call, its last words leave the browser's jitter buffer) before the connection closes.
    this.peer.send({ type: 'ended', outcome: outcomeOf(end), call_ended_by: this.metaEndedBy(result) });
    await new Promise((r) => setTimeout(r, this.endedBy === 'agent' ? 500 : 100));
    this.peer.close();
    this.resolveEnd(end);
  }

  private metaEndedBy(result: ConversationResult | undefined): string {
    const fromAgent = result?.metaData.call_ended_by;
    if (typeof fromAgent === 'string') return fromAgent;
    return this.endedBy === 'shutdown' ? 'error' : (this.endedBy ?? 'error');
  }

  private outcome(result: ConversationResult | undefined, recordingUrl: string | undefined): CallEnd {
    if (!result) {
      const reason = this.failure ?? (this.endedBy === 'shutdown' ? 'Dialer stopped before the peer connected' : 'the session ended before the peer connected');
      return { kind: 'error', error: reason };
    }
    const durationSeconds = Math.round((performance.now() - (this.connectedAt ?? performance.now())) / 1000);
    const metaData: Record<string, unknown> = { ...result.metaData, call_ended_by: this.metaEndedBy(result), transport: 'webrtc', room: this.room };
    if (this.endedBy === 'shutdown') (metaData.errors as unknown[] | undefined)?.push('hung up: Dialer stopped before the session ended');
    return {
      kind: 'completed',
      outcome: result.outcome,
      durationSeconds,
      metaData,
      recordingUrl,
      sentiment: result.sentiment,
      cost: result.cost,
      traceScores: result.traceScores,
    };
  }
}

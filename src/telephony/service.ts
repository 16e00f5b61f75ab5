/**
 * The live calls of this process and the drivers the scheduler dials with. Each driver wraps one
 * provider kit; a dial creates a CallSession, places the call over the provider's REST API and
 * waits for the session to settle. Callback routes and the media WebSocket find sessions here by
 * their token (in every URL Dialer gives the provider) or by call SID.
 */
import { Attempts } from '../attempts/index.js';
import type { Db } from '../db/index.js';
import type { OnFinished } from '../lifecycle/index.js';
import type { Logger } from '../lib/logger.js';
import { startDialSpan } from '../tracing/index.js';
import type { CallAgent, CallContext, ConsultAnswer, VoiceServices } from '../voice/index.js';
import { outboundContext, type CallResult, type DialRequest, type Driver, type Drivers } from './driver.js';
import { ProviderError, SLOT_PATHS, type ProviderKit, type ProviderPath, type ProviderSlot } from './provider.js';
import { CallSession, type SaveRecording, type SessionDeps, type SessionUrls } from './session.js';
import type { TelephonySettings } from '../config/telephony.js';
import { decideInbound, openInboundCall } from './inbound.js';
import type { SipDriver } from './sip/driver.js';

export interface TelephonyDeps {
  settings: TelephonySettings;
  kits: ReadonlyMap<ProviderSlot, ProviderKit>;
  /** Public base URL of this process plus the API prefix: where providers reach the callback routes. */
  callbackBaseUrl: string;
  agent: CallAgent;
  /** The AI services behind the agent, when configured (WebRTC's stream mode uses them too). */
  services?: VoiceServices;
  saveRecording: SaveRecording;
  log: Logger;
  db: Db;
  /** How long to wait for the final status callback once the media stream closed. */
  statusGraceMs?: number;
  /** Where calls' transcript lines go as they are spoken (see SessionDeps). */
  liveTranscript?: SessionDeps['liveTranscript'];
  /** Why calls cannot be carried (an AI service is not configured): no driver is offered, leads wait. */
  notReady?: string;
  /** Feature switches read at each dial; without them the settings decide. */
  switches?: CallSwitches;
  /**
   * The sandbox line: these providers' kits reach the in-process emulator's simulated callee. Their
   * calls run `agent` (the greeter when the flow agent lacks its services, so they work with none)
   * and are marked `metaData.sandbox: true`. `sip`: the sandbox trunks' far side runs in this
   * process (their calls go through the SIP driver, which runs `agent` for them too).
   */
  sandbox?: { slots: ReadonlySet<ProviderSlot>; agent: CallAgent; sip?: boolean };
  /** The SIP driver (calls through SIP trunks), offered as provider SIP when an agent is ready. */
  sip?: SipDriver;
  /** Called in the transaction that finishes an inbound call's lead (its webhooks are queued there). */
  onInboundFinished?: OnFinished;
  /** Where inbound calls' ends not yet written are kept (see src/attempts); undefined: in memory only. */
  journalDir?: string | undefined;
}

/** The feature flags a call reads when it is placed. */
export interface CallSwitches {
  voicemailDetection(resellerId: string): Promise<boolean>;
}

export interface TelephonyStatus {
  /** Calls can be placed: an agent is ready and at least one provider is configured (SIP trunks count). */
  ready: boolean;
  agent: string;
  providers: string[];
  liveCalls: number;
  reason?: string;
}

/** The sandbox line as this process runs it. */
export interface SandboxStatus {
  /** The hosted providers served by the provider emulator, and SIP when the sandbox trunks' far side runs. */
  providers: string[];
  /** Of those, the ones the provider emulator serves (whose callees a test run scripts per number). */
  emulated: ProviderSlot[];
  agent: string;
  /** Why the configured agent cannot run (sandbox calls then run the greeter). */
  agentMissing?: string;
}

export class Telephony {
  private readonly byToken = new Map<string, CallSession>();
  private readonly byId = new Map<string, CallSession>();
  readonly drivers: Drivers;
  private readonly kitsByPath = new Map<ProviderPath, ProviderKit>();
  /** Inbound calls' attempts (no lease: nobody claimed them). */
  readonly inboundAttempts: Attempts;

  constructor(readonly deps: TelephonyDeps) {
    this.inboundAttempts = new Attempts({ db: deps.db, log: deps.log, workerId: null, onFinished: deps.onInboundFinished ?? (async () => {}), journalDir: deps.journalDir });
    const drivers = new Map<string, Driver>();
    for (const kit of deps.kits.values()) {
      this.kitsByPath.set(SLOT_PATHS[kit.slot], kit);
      // Without a ready agent, dialling would only fail: offer no driver, so the scheduler holds the leads.
      if (!deps.notReady || this.isSandbox(kit.slot)) drivers.set(kit.slot, { provider: kit.slot, label: kit.label, dial: (request) => this.dial(kit, request) });
    }
    // The sandbox trunks' calls run the sandbox agent: SIP is offered for them even without a ready agent.
    if (deps.sip && (!deps.notReady || deps.sandbox?.sip)) drivers.set(deps.sip.provider, deps.sip);
    this.drivers = drivers;
  }

  status(): TelephonyStatus {
    // SIP: calls through the resellers' own trunks, placed by Dialer itself (no credentials to configure here).
    const providers: string[] = [...this.deps.kits.keys(), ...(this.deps.sip ? [this.deps.sip.provider] : [])];
    const real = providers.filter((p) => !this.isSandbox(p as ProviderSlot));
    // The sandbox line carries calls even when the configured agent cannot; real providers wait for it.
    const reason =
      real.length > 0 || providers.length === 0
        ? (this.deps.notReady ?? (providers.length === 0 ? 'no telephony provider is configured (TWILIO_*, EXOTEL_*, PLIVO_*)' : undefined))
        : undefined;
    return { ready: reason === undefined, agent: this.deps.agent.label, providers, liveCalls: this.byToken.size, ...(reason ? { reason } : {}) };
  }

  /** The providers served by the sandbox line, the agent its calls run, and why the configured agent cannot run (when it cannot). */
  sandboxStatus(): SandboxStatus {
    const emulated = [...(this.deps.sandbox?.slots ?? [])].filter((p) => this.deps.kits.has(p));
    return {
      providers: [...emulated, ...(this.deps.sandbox?.sip && this.deps.sip ? [this.deps.sip.provider] : [])],
      emulated,
      agent: this.deps.sandbox?.agent.label ?? this.deps.agent.label,
      ...(this.deps.notReady ? { agentMissing: this.deps.notReady } : {}),
    };
  }

  private isSandbox(slot: ProviderSlot): boolean {
    return this.deps.sandbox?.slots.has(slot) === true;
  }

  kit(path: ProviderPath): ProviderKit | undefined {
    return this.kitsByPath.get(path);
  }

  /** Calls in progress in this process. */
  get liveCalls(): number {
    return this.byToken.size;
  }

  byTokenOrId(token: string | undefined, callId: string | undefined): CallSession | undefined {
    if (token) return this.byToken.get(token);
    if (!callId) return undefined;
    const hit = this.byId.get(callId);
    if (hit) return hit;
    for (const session of this.byToken.values()) if (session.providerCallId === callId) return session;
    return undefined;
  }

  /** A session for a call Dialer did not place (inbound). */
  open(kit: ProviderKit, context: CallContext, callSid: string): CallSession {
    const session = this.newSession(kit, { ...context, callId: callSid });
    session.callSid = callSid;
    this.byId.set(callSid, session);
    void session.ended.then(() => this.forget(session));
    // An inbound call whose provider never reports its end still leaves memory.
    const timer = setTimeout(() => void session.hangup('timeout', 'no final status from the provider in time'), this.safetyMs());
    timer.unref();
    void session.ended.then(() => clearTimeout(timer));
    return session;
  }

  private newSession(kit: ProviderKit, context: CallContext, agent?: CallAgent): CallSession {
    const base = `${this.deps.callbackBaseUrl}/${SLOT_PATHS[kit.slot]}`;
    const wsBase = base.replace(/^http/, 'ws');
    const session = new CallSession(
      {
        kit,
        agent: agent ?? (this.isSandbox(kit.slot) ? this.deps.sandbox!.agent : this.deps.agent),
        consult: (parent, to) => this.consult(kit, parent, to),
        saveRecording: this.deps.saveRecording,
        log: this.deps.log,
        statusGraceMs: this.deps.statusGraceMs ?? 10_000,
        ...(this.deps.liveTranscript ? { liveTranscript: this.deps.liveTranscript } : {}),
        urls: (token): SessionUrls => ({
          answer: `${base}/answer?s=${token}`,
          status: `${base}/callback/status?s=${token}`,
          stream: `${wsBase}/media/${token}`,
          transferStatus: `${base}/callback/transfer/status?s=${token}`,
          transferEvents: `${base}/callback/transfer/events?s=${token}`,
          transferMarkup: `${base}/answer?s=${token}&transfer=1`,
        }),
      },
      context,
    );
    this.byToken.set(session.token, session);
    return session;
  }

  private forget(session: CallSession): void {
    this.byToken.delete(session.token);
    for (const id of session.ids()) if (this.byId.get(id) === session) this.byId.delete(id);
  }

  private safetyMs(): number {
    const s = this.deps.settings;
    return (s.ringTimeoutSeconds + s.maxCallSeconds + 120) * 1000;
  }

  private async dial(kit: ProviderKit, request: DialRequest): Promise<CallResult> {
    const voicemailDetection =
      request.resellerId && this.deps.switches ? await this.deps.switches.voicemailDetection(request.resellerId) : this.deps.settings.machineDetection;
    const leaveMessage = request.voicemail?.action === 'leave_message';
    const session = this.newSession(kit, outboundContext(request, voicemailDetection));
    const dialSpan = startDialSpan(request.traceContext, {
      provider: kit.slot,
      label: kit.label,
      machineDetection: voicemailDetection,
      ringTimeoutSeconds: this.deps.settings.ringTimeoutSeconds,
    });
    // The dial is over once the callee answers, or when the call ends without an answer.
    void Promise.race([session.answered.then(() => 'answered' as const), session.ended]).then((r) =>
      r === 'answered' ? dialSpan.end('answered') : dialSpan.end(r.kind, 'error' in r ? r.error : undefined),
    );
    const onAbort = () => void session.hangup('shutdown', 'hung up: Dialer stopped before the call ended');
    const safety = setTimeout(() => void session.hangup('timeout', 'no final status from the provider in time'), this.safetyMs());
    try {
      if (request.signal.aborted) return { end: { kind: 'error', error: 'Dialer stopped before the call was placed' } };
      request.signal.addEventListener('abort', onAbort, { once: true });
      // While it rings, the agent warms what it will need.
      void this.deps.agent.prepare?.(session.context);
      try {
        const { callSid } = await kit.placeCall({
          to: request.to,
          from: request.from,
          answerUrl: session.urls.answer,
          statusUrl: session.urls.status,
          token: session.token,
          // To leave a message, the provider's detection waits for the greeting's end where it can.
          machineDetection: voicemailDetection ? (leaveMessage ? 'message_end' : 'answer') : false,
          ...(session.context.dialDigits ? { sendDigits: session.context.dialDigits } : {}),
          ringTimeoutSeconds: this.deps.settings.ringTimeoutSeconds,
          maxDurationSeconds: this.deps.settings.maxCallSeconds,
        }, request.traceContext);
        session.callSid = callSid;
        session.context.callId = callSid;
        dialSpan.callId(callSid);
        this.byId.set(callSid, session);
        request.onCallId(callSid);
      } catch (err) {
        const message = `${kit.label} refused the call: ${(err as Error).message}`;
        this.deps.log.warn({ leadId: request.leadId, provider: kit.slot, err }, 'placing the call failed');
        dialSpan.end('refused', message);
        // A refusal that will not change (a bad number, a bad caller ID) is a failed attempt; the rest may pass later.
        session.fail(err instanceof ProviderError && !err.retryable ? { kind: 'failed', error: message } : { kind: 'error', error: message });
      }
      const end = await session.ended;
      // A simulated callee: the lead says so (no phone rang).
      if (this.isSandbox(kit.slot) && end.kind === 'completed') end.metaData = { ...end.metaData, sandbox: true };
      return { callId: session.callSid, end };
    } finally {
      clearTimeout(safety);
      request.signal.removeEventListener('abort', onAbort);
      this.forget(session);
    }
  }

  /**
   * Calls the human of a warm transfer from `parent`'s call, through the same provider and caller
   * ID: a second call whose media stream the parent's agent drives (its briefing, the human's
   * decision) until it bridges the two. Resolves once the human answered or could not be reached.
   */
  private consult(kit: ProviderKit, parent: CallSession, to: string): Promise<ConsultAnswer> {
    let settle!: (answer: ConsultAnswer) => void;
    const answer = new Promise<ConsultAnswer>((resolve) => (settle = resolve));
    const agent: CallAgent = {
      label: 'warm-transfer',
      converse: (_context, io) => {
        settle({
          answered: true,
          leg: {
            sampleRateHz: io.sampleRateHz,
            signal: io.signal,
            play: (pcm) => io.play(pcm),
            onAudio: (listener) => io.onAudio(listener),
            onDtmf: (listener) => io.onDtmf(listener),
            hangup: () => io.hangup(),
            bridge: async () => {
              if (parent.isOver) throw new Error('the caller hung up before the bridge');
              parent.transferEvents.push({ event: 'bridged', to, at: new Date().toISOString() });
              parent.bridge(io, to);
              // Either end ends both calls.
              io.signal.addEventListener('abort', () => void parent.hangup('agent'), { once: true });
              void parent.ended.then(() => io.hangup());
            },
          },
        });
        return new Promise((resolve) => {
          const over = () => resolve({ metaData: {} });
          if (io.signal.aborted) over();
          else io.signal.addEventListener('abort', over, { once: true });
        });
      },
    };
    const context: CallContext = { leadId: undefined, templateId: undefined, payload: {}, direction: 'outbound', ourNumber: parent.context.ourNumber, theirNumber: to, voicemailDetection: false };
    if (parent.context.traceContext) context.traceContext = parent.context.traceContext;
    const session = this.newSession(kit, context, agent);
    const safety = setTimeout(() => void session.hangup('timeout', 'no final status from the provider in time'), this.safetyMs());
    safety.unref();
    void session.ended.then((end) => {
      clearTimeout(safety);
      this.forget(session);
      settle(end.kind === 'no_answer' || end.kind === 'busy' ? { answered: false, reason: end.kind } : { answered: false, reason: 'failed', ...('error' in end && end.error ? { detail: end.error } : {}) });
    });
    kit
      .placeCall(
        {
          to,
          from: parent.context.ourNumber,
          answerUrl: session.urls.answer,
          statusUrl: session.urls.status,
          token: session.token,
          machineDetection: false,
          ringTimeoutSeconds: this.deps.settings.ringTimeoutSeconds,
          maxDurationSeconds: this.deps.settings.maxCallSeconds,
        },
        parent.context.traceContext,
      )
      .then(({ callSid }) => {
        session.callSid = callSid;
        session.context.callId = callSid;
        this.byId.set(callSid, session);
      })
      .catch((err: unknown) => session.fail({ kind: 'failed', error: `${kit.label} refused the call to ${to}: ${(err as Error).message}` }));
    return answer;
  }

  /**
   * Takes calls that come in from SIP trunks, under the same inbound rules as the hosted
   * providers' (the SIP socket opens now when DIALER_SIP_PORT names a port).
   */
  async answerSipCalls(): Promise<void> {
    const sip = this.deps.sip;
    if (!sip) return;
    await sip.answerCalls({
      decide: (call) => decideInbound(this, this.deps.db, { ...call, provider: sip.provider }),
      open: (call) => openInboundCall(this, this.deps.db, { ...call, provider: sip.provider }),
    });
  }

  /** Hangs up every live call (process shutdown after the scheduler's grace). */
  async close(): Promise<void> {
    await Promise.all([...this.byToken.values()].map((s) => s.hangup('shutdown', 'hung up: Dialer stopped before the call ended')));
    await this.deps.sip?.close();
    // Inbound ends the database still refuses (it is down) wait in the journal for the next start.
    this.inboundAttempts.close();
  }
}

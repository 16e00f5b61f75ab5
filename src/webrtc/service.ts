/**
 * WebRTC sessions of this process (a peer terminates on the process that answered its offer).
 * The offer is the dial: it claims the lead atomically (BACKLOG/RETRY -> PROCESSING, one more
 * attempt, call_id = the room name, a lease renewed while the session lives), answers the SDP,
 * and when the session ends the lifecycle's finish records the outcome, metaData, attempt history
 * and notifications exactly as for a phone call.
 *
 * Terminology
 * - room: the session's name; the lead's call_id and its recording's name.
 * - session: one browser peer and the agent talking on it, from offer to end.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Principal } from '../auth/index.js';
import { effectiveConfiguration, findConfiguration } from '../configurations/index.js';
import type { Db } from '../db/index.js';
import { AppError, badRequest, conflict, notFound } from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';
import { Attempts, type Attempt } from '../attempts/index.js';
import { claimForSession, releaseClaim, type OnFinished, type RetryPolicy } from '../lifecycle/index.js';
import type { CallAgent } from '../voice/index.js';
import { InvalidOfferError } from './peer.js';
import { findLeadInScope, findSessionOwner, forgetSessionOwner, isWebRtcMode, recordSessionOwner, WEBRTC_MODES, WEBRTC_PROVIDER } from './repository.js';
import { WebRtcSession } from './session.js';
import type { WebRtcSettings } from '../config/webrtc.js';
import type { IceServer } from './wrtc.js';

export interface WebRtcDeps {
  db: Db;
  log: Logger;
  settings: WebRtcSettings;
  /** Runs the template (WEBRTC, WEBRTC_TEST). */
  flowAgent: CallAgent;
  /** STT and TTS only (WEBRTC_STREAM). */
  streamAgent: CallAgent | undefined;
  /** Why the template agent cannot carry sessions (an AI service is not configured). */
  notReady?: string;
  /** Carries WEBRTC and WEBRTC_TEST sessions while the template agent cannot (the built-in greeter, as on the sandbox line). */
  greeter?: CallAgent;
  saveRecording(room: string, wav: Buffer): Promise<string>;
  /** In the transaction that finishes a lead: queues its reporting webhook. */
  onFinished: OnFinished;
  /**
   * This process's origin (http://host:port) as other Dialer processes reach it, recorded with
   * each session so that an operation reaching another process is forwarded here. Known once the
   * server listens; undefined before (and in tests that never listen).
   */
  ownerUrl?: () => string | undefined;
  /** Where sessions' ends not yet written are kept (see src/attempts); undefined: in memory only. */
  journalDir?: string | undefined;
}

/** Where an operation on a lead's live session must run. */
export type SessionPlace = { here: true } | { here: false; ownerUrl: string };

export interface OfferAnswer {
  type: 'answer';
  sdp: string;
  room: string;
  ice_servers: IceServer[];
  /** The agent the session runs: the template's (flow), the greeter, or stream. */
  agent: string;
  /** Why the session runs another agent than the one asked for. */
  note?: string;
}

interface Live {
  session: WebRtcSession;
  /** The session's attempt: its trace (one per attempt, like a phone call's), lease and end. */
  attempt: Attempt;
  leadId: string;
  mode: string;
  /** Settles when the lead's outcome is recorded. */
  recorded: Promise<void>;
}

export class WebRtcService {
  readonly workerId = `webrtc:${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly byLead = new Map<string, Live>();
  private readonly attempts: Attempts;

  constructor(private readonly deps: WebRtcDeps) {
    this.attempts = new Attempts({ db: deps.db, log: deps.log, workerId: this.workerId, leaseSeconds: deps.settings.leaseSeconds, onFinished: deps.onFinished, journalDir: deps.journalDir });
  }

  get liveSessions(): number {
    return this.byLead.size;
  }

  /** Joins a lead's session: claims the lead and answers the client's SDP offer. */
  async offer(caller: Principal, leadId: string, offerSdp: string): Promise<OfferAnswer> {
    const { db, settings } = this.deps;
    const lead = await findLeadInScope(db, caller, leadId);
    if (!lead) throw notFound(`Lead ${leadId}`);
    if (!isWebRtcMode(lead.execution_mode)) {
      throw conflict(`Lead ${leadId} runs in ${lead.execution_mode} mode: only WEBRTC, WEBRTC_TEST and WEBRTC_STREAM leads take browser sessions`, 'not_webrtc');
    }
    if (this.byLead.has(leadId) || lead.status === 'PROCESSING') throw conflict(`Lead ${leadId} is already in a session; a room cannot be joined twice`, 'room_taken');
    if (lead.status === 'FINISHED') throw conflict(`Lead ${leadId} is finished (${lead.outcome ?? 'no outcome'}); push a new lead for a new session`, 'lead_finished');
    const stream = lead.execution_mode === 'WEBRTC_STREAM';
    // Without its AI services the template cannot run: the greeter talks instead, and the answer says so.
    const agent = stream ? (this.deps.notReady ? undefined : this.deps.streamAgent) : this.deps.notReady ? this.deps.greeter : this.deps.flowAgent;
    if (!agent) throw new AppError(503, 'voice_not_ready', this.deps.notReady ?? 'The voice engine is not configured');
    const note = this.deps.notReady && !stream ? `The built-in greeter answers instead of the template, because ${this.deps.notReady}.` : undefined;
    if (!/^m=audio /m.test(offerSdp)) throw badRequest('The SDP offer has no audio section (m=audio)', [{ path: '/sdp', message: 'must offer audio' }], 'invalid_offer');

    // The policy its end is judged by, read now: the end must not need the database to be reachable.
    const stored = await findConfiguration(db, lead.reseller_id, lead.template_id);
    const policy = stored ? effectiveConfiguration(stored, lead) : undefined;
    const room = `rtc-${randomBytes(12).toString('hex')}`;
    const claimed = await db.tx((q) =>
      claimForSession(q, { leadId, room, workerId: this.workerId, leaseSeconds: settings.leaseSeconds, provider: WEBRTC_PROVIDER, modes: WEBRTC_MODES }),
    );
    if (!claimed) throw conflict(`Lead ${leadId} is already in a session or finished`, 'room_taken');
    const attemptNo = claimed.attempt_count;
    const log = this.deps.log.child({ leadId, callId: room });
    // A lease lost (another process recovered the lead) or shutdown hangs the session up.
    let hangUp = () => {};
    const attempt = this.attempts.begin(
      { leadId, attempt: attemptNo, requestId: claimed.request_id, templateId: claimed.template_id, executionMode: claimed.execution_mode, provider: 'WEBRTC' },
      () => hangUp(),
    );
    attempt.span.callId(room);
    const session = new WebRtcSession(
      {
        agent,
        iceServers: settings.iceServers,
        log,
        saveRecording: this.deps.saveRecording,
        connectTimeoutMs: settings.connectTimeoutMs,
        disconnectGraceMs: settings.disconnectGraceMs,
      },
      {
        callId: room,
        leadId,
        templateId: claimed.template_id,
        payload: { ...claimed.payload, lead_id: leadId, request_id: claimed.request_id, execution_mode: claimed.execution_mode, attempt_count: attemptNo },
        direction: 'outbound',
        traceContext: attempt.span.context,
        // A browser is never an answering machine.
        voicemailDetection: false,
        ourNumber: '',
        theirNumber: typeof claimed.payload.customer_mobile_number === 'string' ? claimed.payload.customer_mobile_number : '',
      },
    );
    hangUp = () => void session.hangup('shutdown');
    let answer: string;
    try {
      answer = await session.answer(offerSdp);
    } catch (err) {
      // No session took place: the lead is as it was.
      void session.hangup('shutdown');
      attempt.close({ callId: room, kind: 'released', outcome: 'released' });
      await db.tx((q) => releaseClaim(q, { leadId, workerId: this.workerId, attempt: attemptNo }));
      if (err instanceof InvalidOfferError) throw badRequest(err.message, [{ path: '/sdp', message: err.message }], 'invalid_offer');
      throw err;
    }
    const live: Live = { session, attempt, leadId, mode: claimed.execution_mode, recorded: Promise.resolve() };
    live.recorded = this.carry(live, policy, log);
    this.byLead.set(leadId, live);
    const ownerUrl = this.deps.ownerUrl?.();
    if (ownerUrl) {
      // Before the answer leaves: the client's next request may reach another process at once.
      await recordSessionOwner(db, { leadId, room, ownerUrl, workerId: this.workerId }).catch((err: unknown) =>
        log.error({ err }, 'could not record where the session lives: its operations will only work on this process'),
      );
    }
    log.info({ mode: claimed.execution_mode, attempt: attemptNo }, 'webrtc session answered');
    return { type: 'answer', sdp: answer, room, ice_servers: settings.iceServers, agent: agent.label, ...(note ? { note } : {}) };
  }

  /** An ICE restart (the client's network changed): a new offer for the same session. */
  async restartIce(caller: Principal, leadId: string, offerSdp: string): Promise<{ type: 'answer'; sdp: string; room: string }> {
    const live = await this.liveInScope(caller, leadId);
    try {
      return { type: 'answer', sdp: await live.session.answer(offerSdp), room: live.session.room };
    } catch (err) {
      if (err instanceof InvalidOfferError) throw badRequest(err.message, [{ path: '/sdp', message: err.message }], 'invalid_offer');
      throw err;
    }
  }

  /** The client hangs up; resolves once the lead's outcome is recorded. */
  async hangup(caller: Principal, leadId: string): Promise<{ room: string }> {
    const live = await this.liveInScope(caller, leadId);
    await live.session.hangup('customer');
    await live.recorded;
    return { room: live.session.room };
  }

  /** WEBRTC_STREAM: the client makes the agent speak. */
  async ttsSpeak(caller: Principal, leadId: string, text: string, interrupt: boolean): Promise<{ room: string }> {
    const live = await this.liveInScope(caller, leadId);
    if (live.mode !== 'WEBRTC_STREAM') throw conflict(`Lead ${leadId} runs in ${live.mode} mode: tts-speak drives WEBRTC_STREAM sessions only`, 'not_stream');
    live.session.speak({ text, interrupt });
    return { room: live.session.room };
  }

  /**
   * Where an operation on the lead's live session runs: here, or on the process hosting it (the
   * caller forwards it there). 404 when the lead is not in scope, 409 when it has no live session.
   */
  async locate(caller: Principal, leadId: string): Promise<SessionPlace> {
    const lead = await findLeadInScope(this.deps.db, caller, leadId);
    if (!lead) throw notFound(`Lead ${leadId}`);
    const live = this.byLead.get(leadId);
    if (live && !live.session.isOver) return { here: true };
    const owner = await findSessionOwner(this.deps.db, leadId);
    if (!owner || owner.worker_id === this.workerId) throw conflict(`Lead ${leadId} has no live session`, 'no_session');
    return { here: false, ownerUrl: owner.owner_url };
  }

  private async liveInScope(caller: Principal, leadId: string): Promise<Live> {
    const lead = await findLeadInScope(this.deps.db, caller, leadId);
    if (!lead) throw notFound(`Lead ${leadId}`);
    const live = this.byLead.get(leadId);
    if (!live || live.session.isOver) throw conflict(`Lead ${leadId} has no live session`, 'no_session');
    return live;
  }

  /** Records the session's end like a phone call's (its attempt held the lease meanwhile). */
  private async carry(live: Live, policy: RetryPolicy | undefined, log: Logger): Promise<void> {
    const { db } = this.deps;
    try {
      const end = await live.session.ended;
      const status = await live.attempt.finish({ callId: live.session.room, end }, policy);
      if (status === undefined) log.error('the session ended after its lease was lost; its outcome was not recorded');
      else log.info({ status, end: end.kind }, 'webrtc session ended');
    } catch (err) {
      log.error({ err }, 'could not record the end of a webrtc session');
    } finally {
      live.attempt.close({ callId: live.session.room, kind: 'error', outcome: 'error', error: 'the session runner failed' });
      this.byLead.delete(live.leadId);
      await forgetSessionOwner(db, live.leadId, this.workerId).catch((err: unknown) => log.warn({ err }, 'could not remove the record of where the session lived'));
    }
  }

  /** Hangs up every live session and waits for their outcomes (process shutdown). */
  async close(): Promise<void> {
    const lives = [...this.byLead.values()];
    await Promise.all(lives.map((l) => l.session.hangup('shutdown')));
    // Ends the database still refuses (it is down) wait in the journal for the next start.
    this.attempts.close();
    await Promise.all(lives.map((l) => l.recorded));
  }
}

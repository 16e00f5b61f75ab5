/**
 * The SIP driver: Dialer places the call itself through the lead's SIP trunk, as a user agent
 * (call.ts), carries its audio over RTP (rtp.ts) to the agent, records both sides, and reports
 * how it ended in the same words as the hosted providers' drivers (src/telephony/end.ts).
 *
 * Terminology
 * - trunk: a carrier's (or a PBX's) SIP address Dialer sends calls to, with its credentials and codecs.
 * - SIP status: the final response to the INVITE (486 busy, 480 unavailable, 200 answered …); the
 *   statuses seen go to the lead's metaData (`sip_statuses`), a failure's to its error text and
 *   `sip_status`.
 * - failover: a trunk that fails the call itself (5xx, 408, or no answer to the INVITE at all) has
 *   the call placed again at once on its failover trunk, when that one has a channel free; each
 *   refusal is kept in `sip_failover`.
 */
import { createSocket, type Socket } from 'node:dgram';
import type { CallEnd } from '../../lifecycle/index.js';
import type { Logger } from '../../lib/logger.js';
import type { CallAgent, CallContext, CallIO, ConversationResult } from '../../voice/index.js';
import { outboundContext, type CallResult, type DialRequest, type Driver } from '../driver.js';
import { callEnd } from '../end.js';
import { CallRecorder } from '../recorder.js';
import { TELEPHONY_SAMPLE_RATE_HZ } from '../provider.js';
import type { SaveRecording } from '../session.js';
import { OutboundCall, type InviteResult } from './call.js';
import { SipEndpoint, type Destination } from './endpoint.js';
import { RtpStream } from './rtp.js';
import { offer, readRemote, SdpError, type Codec } from './sdp.js';

/** A trunk as the driver dials it (the trunks resource gives it, password in clear). */
export interface SipTrunk {
  id: string;
  /** host or host:port (5060 when absent). */
  address: string;
  transport: 'udp';
  username?: string;
  password?: string;
  /** The domain of our From header (default: the trunk's host). */
  fromDomain?: string;
  codecs: Codec[];
  /** The sandbox line's trunk: its far side is the simulated customer in this process. */
  sandbox?: boolean;
}

export interface SipDriverDeps {
  agent: CallAgent;
  saveRecording: SaveRecording;
  log: Logger;
  /** The trunk the lead's configuration dials through; undefined when it names none. */
  trunkFor(request: DialRequest): Promise<SipTrunk | undefined>;
  /**
   * The call failed on trunk `fromTrunkId` by the carrier's fault: its failover trunk, with a channel
   * taken for the call, or undefined (none, or it is full or paced).
   */
  failover?(request: DialRequest, fromTrunkId: string): Promise<SipTrunk | undefined>;
  /** Where the SIP socket and the RTP sockets bind, the address put in headers and SDP, and the SIP port (0: any free one). */
  bind: { host: string; advertise?: string; port: number };
  ringTimeoutSeconds: number;
  maxCallSeconds: number;
  /** How long a trunk may leave an INVITE without any response before it is taken as unreachable (default NO_RESPONSE_SECONDS). */
  noResponseSeconds?: number;
  /**
   * The sandbox line: calls through a sandbox trunk run `agent` (the greeter when the flow agent
   * lacks its services) and are marked `metaData.sandbox`; its made-up caller ID never goes out on
   * a real trunk.
   */
  sandbox?: { agent: CallAgent; callerId: string };
  /** Why the flow agent cannot run: calls through real trunks fail with it (the driver is offered for the sandbox's). */
  notReady?: string;
  /** Where the call's transcript lines go as they are spoken (a page watching the lead shows them live), as for the providers' calls. */
  liveTranscript?: (leadId: string) => (line: { role: 'user' | 'assistant'; content: string; at_ms?: number }) => void;
}

export const SIP_PROVIDER = 'SIP';

/** How long a trunk may leave an INVITE without any response (not even 100 Trying) before it is taken as unreachable. */
export const NO_RESPONSE_SECONDS = 4;

/** Whether a failed INVITE is the carrier's own failure, tried again on the failover trunk: 5xx, 408 (theirs or ours), not our CANCEL. */
export function failsOver(result: { status: number; canceled: boolean }): boolean {
  return !result.canceled && ((result.status >= 500 && result.status < 600) || result.status === 408);
}

/** How a failed INVITE ends the attempt, by its final status. */
export function inviteFailure(status: number, reason: string, canceled: boolean, ringSeconds: number): CallEnd {
  const text = `SIP ${status} ${reason}`.trim();
  if (canceled) return { kind: 'no_answer', error: `no answer in ${ringSeconds} s (CANCEL sent; ${text})` };
  if (status === 486 || status === 600) return { kind: 'busy', error: text };
  if (status === 408 || status === 480 || status === 487) return { kind: 'no_answer', error: text };
  if (status === 603) return { kind: 'failed', error: `rejected: ${text}` };
  // The carrier's own trouble (5xx, and 401/403/407 we could not answer) may pass later.
  if (status >= 500 || status === 401 || status === 403 || status === 407) return { kind: 'error', error: `carrier error: ${text}` };
  return { kind: 'failed', error: text };
}

export function parseAddress(address: string): Destination {
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(address);
  if (!match) throw new Error(`not a host or host:port: ${address}`);
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port: match[2] ? Number(match[2]) : 5060 };
}

async function bindRtp(host: string): Promise<Socket> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, host, () => {
      socket.off('error', reject);
      resolve();
    });
  });
  return socket;
}

export class SipDriver implements Driver {
  readonly provider = SIP_PROVIDER;
  readonly label = 'SIP';
  private endpoint: Promise<SipEndpoint> | undefined;
  private readonly live = new Set<() => Promise<void>>();

  constructor(private readonly deps: SipDriverDeps) {}

  private open(): Promise<SipEndpoint> {
    this.endpoint ??= SipEndpoint.open({ ...this.deps.bind, log: this.deps.log });
    return this.endpoint;
  }

  /** The address the SIP socket listens on (opens it). */
  async address(): Promise<Destination> {
    return (await this.open()).address;
  }

  async dial(request: DialRequest): Promise<CallResult> {
    const log = this.deps.log.child({ leadId: request.leadId, provider: SIP_PROVIDER });
    let rtp: Socket | undefined;
    try {
      const first = await this.deps.trunkFor(request);
      if (!first) return { end: { kind: 'error', error: "no SIP trunk: the configuration's trunk_id names none that exists" } };
      let trunk: SipTrunk = first;
      const refused = this.refusal(trunk, request);
      if (refused) return { end: { kind: 'error', error: refused } };
      const agent = trunk.sandbox && this.deps.sandbox ? this.deps.sandbox.agent : this.deps.agent;
      const endpoint = await this.open();
      rtp = await bindRtp(this.deps.bind.host);
      void agent.prepare?.(this.context(request, ''));
      const refusals: Array<{ trunk_id: string; status: number; reason: string; sip_call_id: string }> = [];
      const tried = new Set<string>();
      for (;;) {
        tried.add(trunk.id);
        const call = this.call(endpoint, trunk, request, rtp.address().port);
        // Each call placed has its Call-ID: after a failover the lead's call id is the new call's.
        request.onCallId(call.callId);
        const rung = await this.ring(call, request);
        const failover = refusals.length > 0 ? { sip_failover: [...refusals] } : {};
        if (rung.answered) return { callId: call.callId, end: await this.carry(call, rung.sdp, rtp, trunk, request, log, { ...failover, ...(trunk.sandbox ? { sandbox: true } : {}) }, agent) };
        log.info({ trunkId: trunk.id, status: rung.status, statuses: call.statuses }, 'the SIP call was not answered');
        if (failsOver(rung) && !request.signal.aborted) {
          const next: SipTrunk | undefined = await this.deps.failover?.(request, trunk.id);
          if (next && !tried.has(next.id)) {
            refusals.push({ trunk_id: trunk.id, status: rung.status, reason: rung.reason, sip_call_id: call.callId });
            log.warn({ trunkId: trunk.id, failoverTrunkId: next.id, status: rung.status }, 'the trunk failed the call: placing it on the failover trunk');
            trunk = next;
            continue;
          }
        }
        const end = inviteFailure(rung.status, rung.reason, rung.canceled, this.deps.ringTimeoutSeconds);
        const meta = { sip_status: rung.status, sip_statuses: call.statuses, sip_call_id: call.callId, sip_trunk_id: trunk.id, ...(refusals.length > 0 ? { sip_failover: refusals } : {}), ...(trunk.sandbox ? { sandbox: true } : {}) };
        return { callId: call.callId, end: { ...end, metaData: meta } };
      }
    } catch (err) {
      log.error({ err }, 'the SIP call failed');
      return { end: { kind: 'error', error: `the SIP call failed: ${(err as Error).message}` } };
    } finally {
      rtp?.close();
    }
  }

  /** A call to the lead through `trunk`, offering the RTP socket at `rtpPort`. */
  private call(endpoint: SipEndpoint, trunk: SipTrunk, request: DialRequest, rtpPort: number): OutboundCall {
    const proxy = parseAddress(trunk.address);
    return new OutboundCall(endpoint, {
      proxy,
      toUser: request.to,
      domain: proxy.host,
      fromUser: request.from,
      fromDomain: trunk.fromDomain ?? proxy.host,
      ...(trunk.username && trunk.password ? { credentials: { username: trunk.username, password: trunk.password } } : {}),
      sdp: offer({ address: endpoint.address.host, port: rtpPort, codecs: trunk.codecs, sessionId: Date.now(), version: 1 }),
    });
  }

  /** Sends the INVITE and waits for its end: answered, refused, CANCELled at the ring timeout, or abandoned when the trunk never answers. */
  private async ring(call: OutboundCall, request: DialRequest): Promise<InviteResult> {
    const ring = setTimeout(() => call.cancel(), this.deps.ringTimeoutSeconds * 1000);
    const silence = this.deps.noResponseSeconds ?? NO_RESPONSE_SECONDS;
    const unheard = setTimeout(() => call.abandonUnheard(silence), silence * 1000);
    const stopRinging = () => call.cancel();
    request.signal.addEventListener('abort', stopRinging, { once: true });
    return call.start().finally(() => {
      clearTimeout(ring);
      clearTimeout(unheard);
      request.signal.removeEventListener('abort', stopRinging);
    });
  }

  /** Why a call may not go through `trunk` (a real trunk without a ready agent, or with the sandbox's caller ID), else undefined. */
  private refusal(trunk: SipTrunk, request: DialRequest): string | undefined {
    if (trunk.sandbox) return this.deps.sandbox ? undefined : 'the sandbox line is off in this process: its trunk has no far side here';
    if (this.deps.notReady) return `no agent can carry the call: ${this.deps.notReady}`;
    if (request.from === this.deps.sandbox?.callerId) return `the sandbox line's caller ID ${request.from} is not sent on a real trunk: the next attempt takes another number`;
    return undefined;
  }

  private async carry(call: OutboundCall, answer: string, socket: Socket, trunk: SipTrunk, request: DialRequest, log: Logger, failover: Record<string, unknown>, agent: CallAgent): Promise<CallEnd> {
    const context = this.context(request, call.callId);
    let remote;
    try {
      remote = readRemote(answer, trunk.codecs);
    } catch (err) {
      await call.bye();
      return { kind: 'error', error: `the answer's SDP is unusable: ${err instanceof SdpError ? err.message : String(err)}`, metaData: { sip_statuses: call.statuses, sip_trunk_id: trunk.id, ...failover } };
    }
    const answeredAt = Date.now();
    const over = new AbortController();
    const recorder = new CallRecorder(TELEPHONY_SAMPLE_RATE_HZ);
    over.signal.addEventListener('abort', () => recorder.ended(), { once: true });
    const audioListeners: Array<(pcm: Int16Array) => void> = [];
    const digitListeners: Array<(digit: string) => void> = [];
    const digitsHeard: string[] = [];
    const stream = new RtpStream({
      socket,
      remote,
      onAudio(pcm) {
        recorder.heard(pcm);
        for (const l of audioListeners) l(pcm);
      },
      onDigit(digit) {
        digitsHeard.push(digit);
        for (const l of digitListeners) l(digit);
      },
    });
    // INVITE sent to the answer handled and the media going: the far side's ring time included.
    const setupMs = Math.round((performance.now() - call.inviteSentAt) * 10) / 10;
    let endedBy: 'customer' | 'agent' | 'transfer' | 'timeout' | 'shutdown' | undefined;
    let transferTo: string | undefined;
    const transferEvents: Array<Record<string, string>> = [];
    const hangUp = (by: NonNullable<typeof endedBy>) => {
      if (endedBy) return;
      endedBy = by;
      over.abort();
      stream.close();
      void call.bye();
    };
    call.onBye = () => {
      endedBy ??= 'customer';
      over.abort();
      stream.close();
    };
    // The transfer's call reports back: once it is over (answered or not) the callee is no longer ours to talk to.
    call.onTransferProgress = ({ status, line, final }) => {
      transferEvents.push({ event: 'notify', status: String(status), sipfrag: line, at: new Date().toISOString() });
      if (final) hangUp('transfer');
    };
    const onShutdown = () => hangUp('shutdown');
    request.signal.addEventListener('abort', onShutdown, { once: true });
    const cap = setTimeout(() => hangUp('timeout'), this.deps.maxCallSeconds * 1000);
    const ended = new Promise<void>((resolve) => (over.signal.aborted ? resolve() : over.signal.addEventListener('abort', () => resolve(), { once: true })));
    const stop = async () => hangUp('shutdown');
    this.live.add(stop);
    // Only final lines go on to the live transcript: a page watching the lead shows what the lead will keep.
    const sink = this.deps.liveTranscript?.(request.leadId);
    const io: CallIO = {
      ...(sink ? { observe: (e) => void (e.type === 'transcript' && e.final && sink({ role: e.role, content: e.text, ...(e.at_ms !== undefined ? { at_ms: e.at_ms } : {}) })) } : {}),
      recordingMs: () => recorder.elapsedMs(),
      sampleRateHz: TELEPHONY_SAMPLE_RATE_HZ,
      signal: over.signal,
      play(pcm) {
        if (over.signal.aborted) return Promise.resolve('ended' as const);
        recorder.played(pcm);
        return stream.play(pcm);
      },
      clear() {
        stream.clear();
        recorder.cleared();
      },
      hangup: () => hangUp('agent'),
      // Cold transfer: the far side is asked to call the human (REFER); the agent leaves once it accepts.
      transfer: async (to) => {
        const target = `sip:${to}@${call.domain}`;
        transferEvents.push({ event: 'refer', refer_to: target, at: new Date().toISOString() });
        try {
          await call.refer(target);
        } catch (err) {
          transferEvents.push({ event: 'refused', reason: (err as Error).message, at: new Date().toISOString() });
          throw err;
        }
        transferEvents.push({ event: 'accepted', at: new Date().toISOString() });
        transferTo = to;
        stream.clear();
        recorder.cleared();
      },
      onAudio: (listener) => void audioListeners.push(listener),
      onDtmf: (listener) => void digitListeners.push(listener),
      sendDigits: async (digits) => {
        keysSent.push({ digits, at: new Date().toISOString() });
        await stream.sendDigits(digits);
      },
    };
    const keysSent: Array<{ digits: string; at: string }> = [];
    let conversation: ConversationResult;
    try {
      if (context.dialDigits) await stream.sendDigits(context.dialDigits).catch((err: unknown) => log.warn({ err }, 'could not send the dial digits'));
      conversation = await agent.converse(context, io);
    } catch (err) {
      log.error({ err }, 'the agent failed');
      conversation = { metaData: { errors: [`the agent failed: ${(err as Error).message}`] } };
    }
    // The agent is done: the call ends, if the far side has not ended it already.
    if (!over.signal.aborted) hangUp('agent');
    await ended;
    this.live.delete(stop);
    clearTimeout(cap);
    request.signal.removeEventListener('abort', onShutdown);
    const durationSeconds = Math.round((Date.now() - answeredAt) / 1000);
    let recordingUrl: string | undefined;
    try {
      recordingUrl = await this.deps.saveRecording(call.callId, recorder.wav());
    } catch (err) {
      log.error({ err }, 'could not store the recording');
    }
    const { lost, late, sent, restarts } = stream.stats;
    return callEnd({
      answeredBy: 'human',
      media: { result: conversation, ...(recordingUrl ? { recordingUrl } : {}) },
      transferTo,
      durationSeconds,
      spokenSeconds: recorder.seconds,
      failure: undefined,
      endKind: 'completed',
      reason: undefined,
      cutByShutdown: endedBy === 'shutdown',
      meta: {
        sip_statuses: call.statuses,
        sip_call_id: call.callId,
        sip_trunk_id: trunk.id,
        ...failover,
        sip_ended_by: endedBy,
        codec: remote.codec,
        sip_setup_ms: setupMs,
        rtp: { frames_sent: sent, frames_concealed: lost, frames_late: late, stream_restarts: restarts },
        ...(transferEvents.length ? { transfer_events: transferEvents } : {}),
        ...(digitsHeard.length ? { dtmf_received: digitsHeard.join('') } : {}),
        ...(keysSent.length ? { dtmf_sent: keysSent } : {}),
      },
    });
  }

  private context(request: DialRequest, callId: string): CallContext {
    // No carrier detects machines on a trunk: the agent's own beep and greeting detection decides.
    return outboundContext(request, true, callId);
  }

  async close(): Promise<void> {
    await Promise.all([...this.live].map((stop) => stop()));
    if (this.endpoint) await (await this.endpoint).close();
  }
}

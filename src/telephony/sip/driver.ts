/**
 * The SIP driver: Dialer places the call itself through the lead's SIP trunk, as a user agent
 * (call.ts), carries its audio over RTP (media-call.ts, rtp.ts) to the agent, records both sides,
 * and reports how it ended in the same words as the hosted providers' drivers
 * (src/telephony/end.ts). It also takes the calls trunks send to Dialer's SIP address
 * (inbound.ts), once the telephony service gives it the inbound rules (answerCalls).
 *
 * Terminology
 * - trunk: a carrier's (or a PBX's) SIP address Dialer sends calls to and takes calls from, with
 *   its credentials and codecs.
 * - SIP status: the final response to the INVITE (486 busy, 480 unavailable, 200 answered …); the
 *   statuses seen go to the lead's metaData (`sip_statuses`), a failure's to its error text and
 *   `sip_status`.
 * - failover: a trunk that fails the call itself (5xx, 408, or no answer to the INVITE at all) has
 *   the call placed again at once on its failover trunk, when that one has a channel free; each
 *   refusal is kept in `sip_failover`.
 */
import type { Socket } from 'node:dgram';
import type { CallEnd } from '../../lifecycle/index.js';
import type { Logger } from '../../lib/logger.js';
import type { CallAgent, CallContext } from '../../voice/index.js';
import { outboundContext, type CallResult, type DialRequest, type Driver } from '../driver.js';
import type { SaveRecording } from '../session.js';
import { inviteFailure, OutboundCall, type InviteResult } from './call.js';
import { SipEndpoint, type Destination, type TransportName } from './endpoint.js';
import { takeIncoming, type InboundTrunk, type SipInboundRules } from './inbound.js';
import type { HumanLine } from './bridge.js';
import { carryCall, type Carrier } from './media-call.js';
import type { SipRequest } from './message.js';
import { bindRtp } from './rtp.js';
import { offer, readRemote, SdpError, type Codec } from './sdp.js';
import { parseAddress } from './transport.js';

/** A trunk as the driver dials it (the trunks resource gives it, password in clear). */
export interface SipTrunk {
  id: string;
  /** The trunk's reseller: a call that comes in through it is answered by that reseller's configurations. */
  resellerId?: string;
  /** host or host:port (5060 when absent; 5061 over TLS). */
  address: string;
  /** How SIP reaches the trunk (RTP is UDP whatever it is). */
  transport: TransportName;
  username?: string;
  password?: string;
  /** The domain of our From header (default: the trunk's host). */
  fromDomain?: string;
  codecs: Codec[];
  /**
   * How the agent's transfer reaches the human: `refer` asks the far side to call them (cold, SIP
   * REFER); `bridge` has Dialer call them through this trunk and join the two calls' audio (warm).
   * Default `refer`.
   */
  transferMethod?: 'refer' | 'bridge';
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
  /**
   * The trunk whose address `source` is (an INVITE that came in from there): an exact host and port
   * first, else the host. Undefined: the request is refused (403).
   */
  trunkAt?(source: Destination): Promise<SipTrunk | undefined>;
  /**
   * Where SIP (UDP and TCP on one port) and RTP bind, the address put in headers and SDP, and the
   * SIP port (0: any free one, opened at the first call; a port of its own: opened at once when
   * inbound calls are taken, see answerCalls); more CAs for TLS trunks, Dialer's own TLS certificate.
   */
  bind: { host: string; advertise?: string; port: number; tlsCa?: string; tlsIdentity?: { cert: string; key: string } };
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

/** The rules of a driver that takes no calls (never asked: no address is a trunk's then). */
const NO_RULES: SipInboundRules = {
  decide: async () => ({ kind: 'unknown_number' }),
  open: () => Promise.reject(new Error('this driver takes no calls')),
};


export class SipDriver implements Driver {
  readonly provider = SIP_PROVIDER;
  readonly label = 'SIP';
  private endpoint: Promise<SipEndpoint> | undefined;
  private readonly live = new Set<() => Promise<void>>();
  private readonly closing = new AbortController();
  private rules: SipInboundRules | undefined;
  /** What carrying a call needs (outbound and inbound calls alike). */
  private readonly carrier: Carrier;

  constructor(private readonly deps: SipDriverDeps) {
    this.carrier = { agent: deps.agent, saveRecording: deps.saveRecording, maxCallSeconds: deps.maxCallSeconds, live: this.live };
  }

  private open(): Promise<SipEndpoint> {
    this.endpoint ??= SipEndpoint.open({ ...this.deps.bind, log: this.deps.log }).then((endpoint) => {
      endpoint.accept((invite, source) => this.incoming(endpoint, invite, source));
      return endpoint;
    });
    return this.endpoint;
  }

  /**
   * Takes calls that come in from trunks under `rules` from now on. With a SIP port of its own
   * (DIALER_SIP_PORT) the socket opens now, so trunks can reach it before any call goes out.
   */
  async answerCalls(rules: SipInboundRules): Promise<void> {
    this.rules = rules;
    if (this.deps.bind.port !== 0) await this.open();
  }

  private incoming(endpoint: SipEndpoint, invite: SipRequest, source: Destination): void {
    const { rules } = this;
    const { trunkAt } = this.deps;
    const log = this.deps.log.child({ provider: SIP_PROVIDER, direction: 'inbound' });
    void takeIncoming(
      {
        ...this.carrier,
        // Until the inbound rules are given, no address is a trunk's: every call is refused (403).
        rules: rules ?? NO_RULES,
        trunkAt: async (from) => {
          const trunk = rules && trunkAt ? await trunkAt(from) : undefined;
          if (!trunk?.resellerId) return undefined;
          return { id: trunk.id, resellerId: trunk.resellerId, host: parseAddress(trunk.address).host, codecs: trunk.codecs, humanLine: (number) => this.humanLine(trunk, number) } satisfies InboundTrunk;
        },
        rtpHost: this.deps.bind.host,
        signal: this.closing.signal,
        log,
      },
      endpoint,
      invite,
      source,
    );
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
        const call = this.call(endpoint, trunk, request.to, request.from, rtp.address().port);
        // Each call placed has its Call-ID: after a failover the lead's call id is the new call's.
        request.onCallId(call.callId);
        const rung = await this.ring(call, request.signal);
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

  /** A call to `to` (the lead, or the human of a bridged transfer) through `trunk`, offering the RTP socket at `rtpPort`. */
  private call(endpoint: SipEndpoint, trunk: SipTrunk, to: string, from: string, rtpPort: number): OutboundCall {
    const proxy = parseAddress(trunk.address, trunk.transport);
    return new OutboundCall(endpoint, {
      proxy,
      toUser: to,
      domain: proxy.host,
      fromUser: from,
      fromDomain: trunk.fromDomain ?? proxy.host,
      ...(trunk.username && trunk.password ? { credentials: { username: trunk.username, password: trunk.password } } : {}),
      sdp: offer({ address: endpoint.address.host, port: rtpPort, codecs: trunk.codecs, sessionId: Date.now(), version: 1 }),
    });
  }

  /** Sends the INVITE and waits for its end: answered, refused, CANCELled at the ring timeout, or abandoned when the trunk never answers. */
  private async ring(call: OutboundCall, signal: AbortSignal): Promise<InviteResult> {
    const ring = setTimeout(() => call.cancel(), this.deps.ringTimeoutSeconds * 1000);
    const silence = this.deps.noResponseSeconds ?? NO_RESPONSE_SECONDS;
    const unheard = setTimeout(() => call.abandonUnheard(silence), silence * 1000);
    const stopRinging = () => call.cancel();
    signal.addEventListener('abort', stopRinging, { once: true });
    return call.start().finally(() => {
      clearTimeout(ring);
      clearTimeout(unheard);
      signal.removeEventListener('abort', stopRinging);
    });
  }

  /** How a call through `trunk` reaches the human of a transfer: calls from `from` on the same trunk. */
  private humanLine(trunk: SipTrunk, from: string): HumanLine {
    return {
      dial: async (to, rtpPort) => this.call(await this.open(), trunk, to, from, rtpPort),
      ring: (call, signal) => this.ring(call, signal),
      rtpHost: this.deps.bind.host,
      codecs: trunk.codecs,
      ringTimeoutSeconds: this.deps.ringTimeoutSeconds,
      bridges: trunk.transferMethod === 'bridge',
    };
  }

  /** Why a call may not go through `trunk` (a real trunk without a ready agent, or with the sandbox's caller ID), else undefined. */
  private refusal(trunk: SipTrunk, request: DialRequest): string | undefined {
    if (trunk.sandbox) return this.deps.sandbox ? undefined : 'the sandbox line is off in this process: its trunk has no far side here';
    if (this.deps.notReady) return `no agent can carry the call: ${this.deps.notReady}`;
    if (request.from === this.deps.sandbox?.callerId) return `the sandbox line's caller ID ${request.from} is not sent on a real trunk: the next attempt takes another number`;
    return undefined;
  }

  private async carry(call: OutboundCall, answer: string, socket: Socket, trunk: SipTrunk, request: DialRequest, log: Logger, failover: Record<string, unknown>, agent: CallAgent): Promise<CallEnd> {
    let remote;
    try {
      remote = readRemote(answer, trunk.codecs);
    } catch (err) {
      await call.bye();
      return { kind: 'error', error: `the answer's SDP is unusable: ${err instanceof SdpError ? err.message : String(err)}`, metaData: { sip_statuses: call.statuses, sip_trunk_id: trunk.id, ...failover } };
    }
    return carryCall({ ...this.carrier, agent }, {
      call,
      remote,
      socket,
      context: this.context(request, call.callId),
      signal: request.signal,
      log,
      meta: { sip_call_id: call.callId, sip_trunk_id: trunk.id, ...failover },
      inviteSentAt: call.inviteSentAt,
      humanLine: this.humanLine(trunk, request.from),
      liveTranscript: this.deps.liveTranscript?.(request.leadId),
    });
  }

  private context(request: DialRequest, callId: string): CallContext {
    // No carrier detects machines on a trunk: the agent's own beep and greeting detection decides.
    return outboundContext(request, true, callId);
  }

  async close(): Promise<void> {
    this.closing.abort();
    await Promise.all([...this.live].map((stop) => stop()));
    // (A socket that never opened, its port taken, has nothing to close.)
    const endpoint = await this.endpoint?.catch(() => undefined);
    await endpoint?.close();
  }
}

/**
 * Calls coming in from SIP trunks: an INVITE at Dialer's SIP address, from a trunk's address, for
 * one of Dialer's SIP numbers. The inbound rules decide (src/telephony/inbound.ts) as for the
 * hosted providers' calls, and the SIP answer follows from what they decide:
 *
 * - not from any trunk's address: 403; an extension required that Dialer lacks (100rel): 420; the
 *   number is none of our SIP numbers: 404; no codec of the offer the trunk allows (or no offer):
 *   488; no agent ready, or the trunk's `max_channels` all in use (calls both ways count): 503;
 * - the agent answers: 180 Ringing while the lead opens (holding one of the trunk's channels), 200
 *   with the SDP answer, the call carried as an outbound one is (media-call.ts), on a new INBOUND lead;
 * - REDIRECT: 302 Moved Temporarily, Contact `sip:<redirect number>@<trunk host>`: the carrier
 *   places the call to the redirect number itself, as for any forwarded call (nothing is spoken
 *   before a 302, so the block message is not);
 * - REJECT or MESSAGE with a block message: answered, the message spoken in the local voice, BYE;
 *   without a message, and HANGUP: 603 Decline.
 */
import type { Socket } from 'node:dgram';
import type { Logger } from '../../lib/logger.js';
import { synthesize } from '../../lib/speech.js';
import type { InboundDecision, OpenedInbound } from '../inbound.js';
import { TELEPHONY_SAMPLE_RATE_HZ } from '../provider.js';
import type { Destination, SipEndpoint } from './endpoint.js';
import { InboundCall } from './inbound-call.js';
import type { HumanLine } from './bridge.js';
import { carryCall, type Carrier } from './media-call.js';
import type { SipRequest } from './message.js';
import { bindRtp, RtpStream } from './rtp.js';
import { answer, readRemote, type Codec, type RemoteMedia } from './sdp.js';

export type AnsweredConfiguration = Extract<InboundDecision, { kind: 'answer' }>['config'];

/** The inbound rules, as the telephony service applies them (src/telephony/inbound.ts). */
export interface SipInboundRules {
  decide(call: { to: string; from: string; resellerId: string }): Promise<InboundDecision>;
  /** Opens the answered call's lead, holding a channel of trunk `trunkId`; undefined when the trunk has none free. */
  open(call: { config: AnsweredConfiguration; callId: string; to: string; from: string; trunkId: string }): Promise<OpenedInbound | undefined>;
}

/** The trunk a call came from, as admission needs it. */
export interface InboundTrunk {
  id: string;
  resellerId: string;
  /** Its host (the domain of a redirect's Contact and a transfer's target). */
  host: string;
  codecs: Codec[];
  /** How a transfer of the call reaches the human through the trunk: called from the number the caller dialled. */
  humanLine?(from: string): HumanLine;
}

export interface IncomingDeps extends Carrier {
  rules: SipInboundRules;
  trunkAt(source: Destination): Promise<InboundTrunk | undefined>;
  rtpHost: string;
  /** Aborted when the driver closes: calls in progress are hung up. */
  signal: AbortSignal;
  log: Logger;
}

/** A number as a trunk writes it (`+1415…`, `1415…`, `1 (415) …`) in E.164's shape; undefined when it is none. */
export function numberOf(user: string | undefined): string | undefined {
  if (!user) return undefined;
  const digits = user.replace(/[\s().-]/g, '');
  const match = /^\+?([1-9]\d{6,14})$/.exec(digits);
  return match ? `+${match[1]}` : undefined;
}

/** Answers one INVITE that came in outside any dialog (100 Trying goes at once). */
export async function takeIncoming(deps: IncomingDeps, endpoint: SipEndpoint, invite: SipRequest, source: Destination): Promise<void> {
  const call = new InboundCall(endpoint, invite, source);
  const log = deps.log.child({ sipCallId: call.sipCallId, source: `${source.host}:${source.port}` });
  let opened: OpenedInbound | undefined;
  let rtp: Socket | undefined;
  try {
    const trunk = await deps.trunkAt(source);
    if (!trunk) {
      log.warn('an INVITE from an address that is no trunk\'s: refused');
      return call.refuse(403, 'Forbidden (not a trunk of this Dialer)');
    }
    call.domain = trunk.host;
    const unsupported = call.unsupported;
    if (unsupported.length > 0) return call.refuse(420, 'Bad Extension', [['unsupported', unsupported.join(', ')]]);
    const to = numberOf(call.toUser);
    if (!to) return call.refuse(404, 'Not Found');
    // The caller as the lead keeps it: a number, else a plain name (`anonymous`, an extension).
    const fromUser = call.fromUser;
    const from = numberOf(fromUser) ?? (fromUser && /^[\w.+-]{1,64}$/.test(fromUser) ? fromUser : 'anonymous');
    let remote: RemoteMedia;
    try {
      remote = readRemote(call.offer, trunk.codecs);
    } catch (err) {
      log.warn({ err }, 'an INVITE whose offer has no codec the trunk allows');
      return call.refuse(488, 'Not Acceptable Here');
    }
    const decision = await deps.rules.decide({ to, from, resellerId: trunk.resellerId });
    if (call.canceled) return;
    const meta = { sip_call_id: call.sipCallId, sip_trunk_id: trunk.id };
    switch (decision.kind) {
      case 'unknown_number':
        return call.refuse(404, 'Not Found');
      case 'unavailable':
        return call.refuse(503, 'Service Unavailable', [['retry-after', '60']]);
      case 'block':
        if (decision.redirectTo) return call.refuse(302, 'Moved Temporarily', [['contact', `<sip:${decision.redirectTo}@${trunk.host}>`]]);
        if (!decision.message) return call.refuse(603, 'Decline');
        call.ringing();
        rtp = await bindRtp(deps.rtpHost);
        return await speakAndHangUp(call, remote, rtp, decision.message, endpoint, log);
      case 'answer':
        break;
    }
    call.ringing();
    opened = await deps.rules.open({ config: decision.config, callId: call.callId, to, from, trunkId: trunk.id });
    if (!opened) {
      log.warn({ trunkId: trunk.id }, 'a call from a trunk whose channels are all in use: refused');
      return call.refuse(503, 'Service Unavailable (the trunk\'s channels are all in use)');
    }
    void deps.agent.prepare?.(opened.context);
    rtp = await bindRtp(deps.rtpHost);
    if (call.canceled) {
      await opened.finish({ callId: call.callId, end: { kind: 'no_answer', error: 'the caller hung up before the answer (CANCEL)', metaData: { ...meta, sip_statuses: call.statuses } } });
      return;
    }
    const acked = call.answer(answer(remote, { address: endpoint.address.host, port: rtp.address().port, sessionId: Date.now() }));
    const end = await carryCall(deps, {
      call,
      remote,
      socket: rtp,
      context: opened.context,
      signal: deps.signal,
      log,
      meta,
      abandon: acked.then((heard) => (heard ? new Promise<never>(() => {}) : undefined)),
      humanLine: trunk.humanLine?.(to),
    });
    await opened.finish({ callId: call.callId, end });
  } catch (err) {
    log.error({ err }, 'an inbound SIP call failed');
    call.refuse(500, 'Server Internal Error');
    await opened?.finish({ callId: call.callId, end: { kind: 'error', error: `the inbound SIP call failed: ${(err as Error).message}` } });
  } finally {
    rtp?.close();
  }
}

/** A blocked call's message: answered, spoken in the local voice, then BYE (sooner when the caller hangs up). */
async function speakAndHangUp(call: InboundCall, remote: RemoteMedia, socket: Socket, message: string, endpoint: SipEndpoint, log: Logger): Promise<void> {
  const pcm = await synthesize(message, { sampleRateHz: TELEPHONY_SAMPLE_RATE_HZ });
  if (call.canceled) return;
  const stream = new RtpStream({ socket, remote, onAudio: () => {}, onDigit: () => {} });
  const hungUp = new Promise<void>((resolve) => (call.onBye = resolve));
  void call.answer(answer(remote, { address: endpoint.address.host, port: socket.address().port, sessionId: Date.now() }));
  await Promise.race([stream.play(pcm), hungUp]);
  stream.close();
  await call.bye();
  log.info('an inbound SIP call outside its window: the block message was spoken');
}

/**
 * The human's leg of a SIP call's transfer: Dialer calls them through the call's own trunk (the
 * trunk the call went out or came in on, checked by the outbound policy with it).
 *
 * - bridge (a trunk's `transfer_method: bridge`): once they answer, the two calls' audio is joined
 *   at once (each side's frames played to the other; the recording goes on with both).
 * - consult (a flow's warm transfer, on any trunk): once they answer, their leg is the agent's
 *   alone (it speaks the briefing, hears their words and RFC 4733 keys) until it bridges them as
 *   above or hangs them up.
 *
 * Either side's BYE then ends both calls.
 */
import type { Socket } from 'node:dgram';
import type { ConsultAnswer, ConsultLeg } from '../../voice/index.js';
import { TELEPHONY_SAMPLE_RATE_HZ } from '../provider.js';
import { inviteFailure, type OutboundCall, type InviteResult } from './call.js';
import { bindRtp, RtpStream } from './rtp.js';
import { readRemote, type Codec, type RemoteMedia } from './sdp.js';

/** How a call reaches its human: through its own trunk. */
export interface HumanLine {
  /** The human's call, offering RTP at `rtpPort` (not yet sent). */
  dial(to: string, rtpPort: number): Promise<OutboundCall>;
  /** Sends its INVITE and waits for the end of ringing (CANCEL at the ring timeout, or when `signal` aborts). */
  ring(call: OutboundCall, signal: AbortSignal): Promise<InviteResult>;
  rtpHost: string;
  codecs: Codec[];
  /** Said in a no-answer's reason. */
  ringTimeoutSeconds: number;
  /** The agent's plain transfers bridge (the trunk's `transfer_method: bridge`); else they are REFERred. */
  bridges: boolean;
}

export interface BridgeLeg {
  line: HumanLine;
  /** The customer's call: aborted when it is over. */
  over: AbortController;
  /** The call's transfer events: `dial`, then `answered` or `failed` (and `bridged` after a consult). */
  events: Array<Record<string, string>>;
  /** The human's audio once bridged, as it comes (played to the customer and recorded by the caller). */
  fromHuman(pcm: Int16Array): void;
  /** The human is put through: the caller joins the calls (the human's stream plays what the customer says). */
  join(human: RtpStream, call: OutboundCall): void;
}

/** The human did not take the call (the agent keeps the customer). */
export class HumanNotReached extends Error {
  constructor(
    to: string,
    readonly kind: 'no_answer' | 'busy' | 'failed',
    readonly why: string,
  ) {
    super(`the transfer to ${to} failed: ${why}`);
  }
}

interface Reached {
  call: OutboundCall;
  socket: Socket;
  remote: RemoteMedia;
}

/** Calls the human and waits for their answer; throws HumanNotReached when they do not take it. */
async function reach(to: string, leg: Pick<BridgeLeg, 'line' | 'over' | 'events'>): Promise<Reached> {
  const { over, events, line } = leg;
  if (over.signal.aborted) throw new HumanNotReached(to, 'failed', 'the call is over');
  const socket = await bindRtp(line.rtpHost);
  const call = await line.dial(to, socket.address().port);
  events.push({ event: 'dial', to, sip_call_id: call.callId, at: new Date().toISOString() });
  const rung = await line.ring(call, over.signal);
  const fail = (kind: HumanNotReached['kind'], why: string, status?: number): Error => {
    socket.close();
    events.push({ event: 'failed', reason: why, ...(status !== undefined ? { status: String(status) } : {}), at: new Date().toISOString() });
    return new HumanNotReached(to, kind, why);
  };
  if (!rung.answered) {
    const end = inviteFailure(rung.status, rung.reason, rung.canceled, line.ringTimeoutSeconds);
    const kind = end.kind === 'busy' || end.kind === 'no_answer' ? end.kind : 'failed';
    throw fail(kind, rung.canceled ? `no answer (SIP ${rung.status} ${rung.reason})` : `SIP ${rung.status} ${rung.reason}`, rung.status);
  }
  if (over.signal.aborted) {
    await call.bye();
    throw fail('failed', 'the customer hung up while the human was rung');
  }
  try {
    return { call, socket, remote: readRemote(rung.sdp, line.codecs) };
  } catch (err) {
    await call.bye();
    throw fail('failed', `the human's SDP is unusable: ${(err as Error).message}`);
  }
}

/** The human's call ends with the customer's. */
function endsWith(over: AbortController, { call, socket }: Reached, human: RtpStream): void {
  over.signal.addEventListener(
    'abort',
    () => {
      human.close();
      socket.close();
      void call.bye();
    },
    { once: true },
  );
}

/** Resolves when the human is on the line and joined; rejects (HumanNotReached) when they are not reached (the agent keeps the call). */
export async function bridge(to: string, leg: BridgeLeg): Promise<void> {
  const reached = await reach(to, leg);
  const human = new RtpStream({ socket: reached.socket, remote: reached.remote, onAudio: (pcm) => leg.fromHuman(pcm), onDigit: () => undefined });
  endsWith(leg.over, reached, human);
  leg.events.push({ event: 'answered', at: new Date().toISOString() });
  leg.join(human, reached.call);
}

/**
 * Calls the human of a warm transfer: once they answer, their leg (its audio and keys) is the
 * agent's until `bridge()` joins them to the customer or `hangup()` ends it. Never throws: a human
 * not reached is an unanswered ConsultAnswer.
 */
export async function consult(to: string, leg: BridgeLeg): Promise<ConsultAnswer> {
  let reached: Reached;
  try {
    reached = await reach(to, leg);
  } catch (err) {
    if (err instanceof HumanNotReached) return { answered: false, reason: err.kind, detail: err.why };
    return { answered: false, reason: 'failed', detail: (err as Error).message };
  }
  const { call, socket } = reached;
  const legOver = new AbortController();
  const audioListeners: Array<(pcm: Int16Array) => void> = [];
  const digitListeners: Array<(digit: string) => void> = [];
  let bridged = false;
  const human = new RtpStream({
    socket,
    remote: reached.remote,
    onAudio(pcm) {
      if (bridged) leg.fromHuman(pcm);
      else for (const l of audioListeners) l(pcm);
    },
    onDigit(digit) {
      if (!bridged) for (const l of digitListeners) l(digit);
    },
  });
  const endLeg = () => {
    if (legOver.signal.aborted) return;
    legOver.abort();
    human.close();
    socket.close();
  };
  call.onBye = () => {
    leg.events.push({ event: 'ended', by: 'human', at: new Date().toISOString() });
    endLeg();
  };
  leg.over.signal.addEventListener('abort', () => (endLeg(), void call.bye()), { once: true });
  leg.events.push({ event: 'answered', at: new Date().toISOString() });
  const consulted: ConsultLeg = {
    sampleRateHz: TELEPHONY_SAMPLE_RATE_HZ,
    signal: legOver.signal,
    play: (pcm) => human.play(pcm),
    onAudio: (listener) => void audioListeners.push(listener),
    onDtmf: (listener) => void digitListeners.push(listener),
    hangup() {
      if (legOver.signal.aborted) return;
      leg.events.push({ event: 'ended', by: 'agent', at: new Date().toISOString() });
      endLeg();
      void call.bye();
    },
    async bridge() {
      if (leg.over.signal.aborted) throw new Error('the caller hung up before the bridge');
      if (legOver.signal.aborted) throw new Error('the human hung up before the bridge');
      // What is left of the briefing is dropped: the human hears the customer from now on.
      human.clear();
      bridged = true;
      leg.events.push({ event: 'bridged', to, at: new Date().toISOString() });
      leg.join(human, call);
    },
  };
  return { answered: true, leg: consulted };
}

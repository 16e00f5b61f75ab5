/**
 * Warm transfer by bridging (a trunk's `transfer_method: bridge`): Dialer calls the human through
 * the call's trunk, and once they answer joins the two calls' audio (each side's frames played to
 * the other; the recording goes on with both). Either side's BYE then ends both calls.
 */
import type { OutboundCall, InviteResult } from './call.js';
import { bindRtp, RtpStream } from './rtp.js';
import { readRemote, type Codec } from './sdp.js';

/** How a call reaches its human: through its own trunk. */
export interface HumanLine {
  /** The human's call, offering RTP at `rtpPort` (not yet sent). */
  dial(to: string, rtpPort: number): Promise<OutboundCall>;
  /** Sends its INVITE and waits for the end of ringing (CANCEL at the ring timeout, or when `signal` aborts). */
  ring(call: OutboundCall, signal: AbortSignal): Promise<InviteResult>;
  rtpHost: string;
  codecs: Codec[];
}

export interface BridgeLeg {
  line: HumanLine;
  /** The customer's call: aborted when it is over. */
  over: AbortController;
  /** The call's transfer events: `dial`, then `answered` or `failed`. */
  events: Array<Record<string, string>>;
  /** The human's audio, as it comes (played to the customer and recorded by the caller). */
  fromHuman(pcm: Int16Array): void;
  /** The human answered: the caller joins the calls (the human's stream plays what the customer says). */
  join(human: RtpStream, call: OutboundCall): void;
}

/** Resolves when the human is on the line; rejects when they are not reached (the agent keeps the call). */
export async function bridge(to: string, leg: BridgeLeg): Promise<void> {
  const { over, events, line } = leg;
  if (over.signal.aborted) throw new Error('the call is over');
  const socket = await bindRtp(line.rtpHost);
  const call = await line.dial(to, socket.address().port);
  events.push({ event: 'dial', to, sip_call_id: call.callId, at: new Date().toISOString() });
  const rung = await line.ring(call, over.signal);
  const fail = (why: string, status?: number): Error => {
    socket.close();
    events.push({ event: 'failed', reason: why, ...(status !== undefined ? { status: String(status) } : {}), at: new Date().toISOString() });
    return new Error(`the transfer to ${to} failed: ${why}`);
  };
  if (!rung.answered) throw fail(rung.canceled ? `no answer (SIP ${rung.status} ${rung.reason})` : `SIP ${rung.status} ${rung.reason}`, rung.status);
  if (over.signal.aborted) {
    await call.bye();
    throw fail('the customer hung up while the human was rung');
  }
  let remote;
  try {
    remote = readRemote(rung.sdp, line.codecs);
  } catch (err) {
    await call.bye();
    throw fail(`the human's SDP is unusable: ${(err as Error).message}`);
  }
  const human = new RtpStream({ socket, remote, onAudio: (pcm) => leg.fromHuman(pcm), onDigit: () => undefined });
  over.signal.addEventListener(
    'abort',
    () => {
      human.close();
      socket.close();
      void call.bye();
    },
    { once: true },
  );
  events.push({ event: 'answered', at: new Date().toISOString() });
  leg.join(human, call);
}

/**
 * An answered SIP call, whichever side placed it: its RTP stream to the agent and back, the
 * recording of both sides, hang-up by either side (BYE), the agent's keys and transfer (cold by
 * REFER, warm by a bridge, or a warm transfer's consult of the human first: bridge.ts), the cap on
 * its length and shutdown; and how it ended, in the same words as the hosted providers' calls
 * (src/telephony/end.ts), with the SIP details in metaData.
 */
import type { Socket } from 'node:dgram';
import type { CallEnd } from '../../lifecycle/index.js';
import type { Logger } from '../../lib/logger.js';
import type { CallAgent, CallContext, CallIO, ConversationResult } from '../../voice/index.js';
import { callEnd } from '../end.js';
import { TELEPHONY_SAMPLE_RATE_HZ } from '../provider.js';
import { CallRecorder } from '../recorder.js';
import type { SaveRecording } from '../session.js';
import { bridge, consult, type BridgeLeg, type HumanLine } from './bridge.js';
import { RtpStream } from './rtp.js';
import type { RemoteMedia } from './sdp.js';

/** The dialog of an answered call (an outbound call's or one that came in). */
export interface SipDialog {
  /** The lead's call id (names the recording). */
  readonly callId: string;
  /** Where the dialled numbers live: a transfer's target is `sip:<number>@<domain>`. */
  readonly domain: string;
  /** The SIP statuses of the call's INVITE, in order. */
  readonly statuses: number[];
  onBye: (() => void) | undefined;
  onTransferProgress: ((fragment: { status: number; line: string; final: boolean }) => void) | undefined;
  bye(): Promise<void>;
  refer(target: string): Promise<void>;
}

/** What carrying calls needs of the driver: the agent, where recordings go, the cap, and its live calls (hung up at close). */
export interface Carrier {
  agent: CallAgent;
  saveRecording: SaveRecording;
  maxCallSeconds: number;
  live: Set<() => Promise<void>>;
}

export interface CarriedCall {
  call: SipDialog;
  remote: RemoteMedia;
  socket: Socket;
  context: CallContext;
  /** Aborted when Dialer shuts down: the call is hung up. */
  signal: AbortSignal;
  log: Logger;
  /** SIP details of the call for its metaData (its Call-ID, trunk, failover …). */
  meta: Record<string, unknown>;
  /** When the INVITE went out (performance.now()): `sip_setup_ms` counts from it to the media going. */
  inviteSentAt?: number;
  /** Resolves when the far side is lost (our answer never acknowledged): the call is hung up (`no_ack`). */
  abandon?: Promise<unknown>;
  /**
   * How the human of a transfer is called through the call's trunk: a flow's warm transfer consults
   * them on it (briefed, then bridged or hung up); a plain transfer bridges on it when the trunk
   * says so, else it is REFERred (cold).
   */
  humanLine?: HumanLine | undefined;
  /** Where the call's final transcript lines go as they are spoken (a page watching the lead shows them live). */
  liveTranscript?: ((line: { role: 'user' | 'assistant'; content: string; at_ms?: number }) => void) | undefined;
}

export async function carryCall(carrier: Carrier, carried: CarriedCall): Promise<CallEnd> {
  const { call, remote, socket, context, signal, log } = carried;
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
  const setupMs = carried.inviteSentAt === undefined ? undefined : Math.round((performance.now() - carried.inviteSentAt) * 10) / 10;
  let endedBy: 'customer' | 'agent' | 'transfer' | 'timeout' | 'shutdown' | 'no_ack' | undefined;
  let transferTo: string | undefined;
  /** A bridged transfer is up: the call goes on without the agent until either side hangs up. */
  let bridged = false;
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
  void carried.abandon?.then(() => hangUp('no_ack'));
  const onShutdown = () => hangUp('shutdown');
  signal.addEventListener('abort', onShutdown, { once: true });
  const cap = setTimeout(() => hangUp('timeout'), carrier.maxCallSeconds * 1000);
  const ended = new Promise<void>((resolve) => (over.signal.aborted ? resolve() : over.signal.addEventListener('abort', () => resolve(), { once: true })));
  const stop = async () => hangUp('shutdown');
  carrier.live.add(stop);
  const keysSent: Array<{ digits: string; at: string }> = [];
  const human = carried.humanLine;
  /** The human's leg of a transfer to `to`: once joined, each side hears the other and the agent leaves the line. */
  const humanLeg = (line: HumanLine, to: string): BridgeLeg => ({
    line,
    over,
    events: transferEvents,
    fromHuman: (pcm) => {
      recorder.played(pcm);
      void stream.play(pcm);
    },
    join: (humanStream, humanCall) => {
      // What the agent had queued is dropped, and each side now hears the other.
      stream.clear();
      recorder.cleared();
      audioListeners.splice(0, audioListeners.length, (pcm) => void humanStream.play(pcm));
      humanCall.onBye = () => {
        transferEvents.push({ event: 'ended', by: 'human', at: new Date().toISOString() });
        hangUp('transfer');
      };
      bridged = true;
      transferTo = to;
    },
  });
  // Only final lines go on to the live transcript: a page watching the lead shows what the lead will keep.
  const sink = carried.liveTranscript;
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
    transfer: async (to) => {
      if (human?.bridges) return bridge(to, humanLeg(human, to));
      // Cold transfer: the far side is asked to call the human (REFER); the agent leaves once it accepts.
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
    ...(human ? { consult: (to: string) => consult(to, humanLeg(human, to)) } : {}),
    onAudio: (listener) => void audioListeners.push(listener),
    onDtmf: (listener) => void digitListeners.push(listener),
    sendDigits: async (digits) => {
      keysSent.push({ digits, at: new Date().toISOString() });
      await stream.sendDigits(digits);
    },
  };
  let conversation: ConversationResult;
  try {
    if (context.dialDigits) await stream.sendDigits(context.dialDigits).catch((err: unknown) => log.warn({ err }, 'could not send the dial digits'));
    conversation = await carrier.agent.converse(context, io);
  } catch (err) {
    log.error({ err }, 'the agent failed');
    conversation = { metaData: { errors: [`the agent failed: ${(err as Error).message}`] } };
  }
  // The agent is done: the call ends, if the far side has not ended it already (nor is it bridged to a human).
  if (!over.signal.aborted && !bridged) hangUp('agent');
  await ended;
  carrier.live.delete(stop);
  clearTimeout(cap);
  signal.removeEventListener('abort', onShutdown);
  const durationSeconds = Math.round((Date.now() - answeredAt) / 1000);
  let recordingUrl: string | undefined;
  try {
    recordingUrl = await carrier.saveRecording(call.callId, recorder.wav());
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
      ...carried.meta,
      sip_ended_by: endedBy,
      codec: remote.codec,
      ...(setupMs !== undefined ? { sip_setup_ms: setupMs } : {}),
      rtp: { frames_sent: sent, frames_concealed: lost, frames_late: late, stream_restarts: restarts },
      ...(transferEvents.length ? { transfer_events: transferEvents } : {}),
      ...(digitsHeard.length ? { dtmf_received: digitsHeard.join('') } : {}),
      ...(keysSent.length ? { dtmf_sent: keysSent } : {}),
    },
  });
}

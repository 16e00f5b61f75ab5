/**
 * The sandbox line's SIP far side: a user agent server on 127.0.0.1 inside the process, where the
 * sandbox trunk's calls arrive. It answers an INVITE as a phone does (100 Trying, 180 Ringing, then
 * 200 OK with an SDP answer; 486 for a busy callee, 404 for a failing one; a callee that does not
 * answer rings until Dialer's CANCEL), exchanges G.711 RTP with Dialer (telephone-events both
 * ways), and puts the emulator's simulated customer on the line: it hears Dialer's voice, speaks
 * with the local voice, and hangs up with a BYE. Dialer's BYE ends the call too.
 *
 * It is built from Dialer's own SIP primitives (messages, SDP, RTP): the sandbox shows the SIP
 * driver a partner in the same process; the driver is proven against foreign SIP stacks elsewhere.
 *
 * Terminology
 * - far side: the callee's end of a SIP call (here, the simulated customer's).
 * - dialog: one call, named by its Call-ID (one INVITE each: the sandbox trunk never forks).
 */
import type { Socket } from 'node:dgram';
import { randomBytes } from 'node:crypto';
import { Callee, SILENT_FRAME, type CalleeRecord, type CalleeScript } from '../emulator/index.js';
import type { LocalVoice } from '../lib/speech.js';
import { bindRtp, parseSipMessage, readRemoteSdp, RtpStream, sdpOffer, serializeSip, sipAddressUri, sipHeader, sipResponseTo, type SipRequest, type SipResponse } from '../telephony/index.js';

const HOST = '127.0.0.1';
/** Frames of the customer's speech kept queued ahead of the RTP clock (so its voice has no gaps). */
const AHEAD_FRAMES = 3;
const T1_MS = 500;
/** A pause in Dialer's voice shorter than this is a breath between its sentences, not its turn's end. */
const BREATH_MS = 900;

export interface SandboxSipFarOptions {
  /** The simulated customer answering calls to `number`. */
  scriptFor(number: string): CalleeScript;
  voice?: LocalVoice | undefined;
  log(message: string): void;
}

export interface SandboxSipFar {
  /** host:port of its SIP socket: the sandbox trunk's address in this process. */
  address: string;
  /** Calls up or ringing now. */
  readonly live: number;
  close(): Promise<void>;
}

interface Peer {
  host: string;
  port: number;
}

export async function startSandboxSipFar(options: SandboxSipFarOptions): Promise<SandboxSipFar> {
  const socket = await bindRtp(HOST);
  const port = socket.address().port;
  const calls = new Map<string, FarCall>();
  const send = (message: SipRequest | SipResponse, to: Peer) => socket.send(serializeSip(message), to.port, to.host);
  socket.on('error', (err) => options.log(`sandbox SIP socket error: ${err.message}`));
  socket.on('message', (data, rinfo) => {
    let message;
    try {
      message = parseSipMessage(data);
    } catch {
      return;
    }
    const from = { host: rinfo.address, port: rinfo.port };
    const callId = sipHeader(message, 'call-id') ?? '';
    const call = calls.get(callId);
    if (message.kind === 'response') return call?.response(message);
    if (call) return call.request(message, from);
    if (message.method === 'INVITE') {
      const made = new FarCall(message, from, { send, port, options, forget: () => calls.delete(callId) });
      calls.set(callId, made);
      void made.start().catch((err: unknown) => {
        options.log(`sandbox SIP call failed: ${(err as Error).message}`);
        made.end();
      });
      return;
    }
    if (message.method === 'ACK') return;
    send(sipResponseTo(message, message.method === 'OPTIONS' ? 200 : 481, message.method === 'OPTIONS' ? 'OK' : 'Call/Transaction Does Not Exist', { toTag: tag() }), from);
  });
  return {
    address: `${HOST}:${port}`,
    get live() {
      return calls.size;
    },
    async close() {
      await Promise.all([...calls.values()].map((c) => c.hangUp()));
      await new Promise<void>((resolve) => socket.close(() => resolve()));
    },
  };
}

const tag = () => randomBytes(6).toString('hex');

interface FarCallDeps {
  send(message: SipRequest | SipResponse, to: Peer): void;
  /** Our SIP port (Via and Contact of our requests). */
  port: number;
  options: SandboxSipFarOptions;
  forget(): void;
}

/** One call at the far side: ringing, the answer, the customer's script over RTP, the end. */
class FarCall {
  private readonly localTag = tag();
  private readonly script: CalleeScript;
  private readonly record: CalleeRecord = { beepsAtMs: [], voicedAfterBeepMs: 0, dtmfReceived: '', dtmfEvents: [], received: { voiced: [] }, sent: { timeline: [] } };
  private readonly callee: Callee;
  private rtp: Socket | undefined;
  private stream: RtpStream | undefined;
  /** The 200 OK, sent again until its ACK comes. */
  private answer: SipResponse | undefined;
  /** The INVITE's final response (a retransmitted INVITE gets it again). */
  private final: SipResponse | undefined;
  private answeredAt = 0;
  private state: 'ringing' | 'up' | 'over' = 'ringing';
  private readonly timers: NodeJS.Timeout[] = [];
  private pump: NodeJS.Timeout | undefined;
  private queued = 0;
  private lastVoiceAt = 0;
  private byeSeq = 1;
  private byeSent: (() => void) | undefined;

  constructor(
    private readonly invite: SipRequest,
    private readonly peer: Peer,
    private readonly deps: FarCallDeps,
  ) {
    const number = /^sips?:([^@;]+)@/i.exec(invite.uri)?.[1] ?? '';
    this.script = deps.options.scriptFor(decodeURIComponent(number));
    this.callee = new Callee(this.record, {
      sendDtmf: (digit) => {
        if (!this.stream) return false;
        void this.stream.sendDigits(digit).catch(() => undefined);
        return true;
      },
      // Dialer's audio comes in real time, so nothing of it waits here; a pause shorter than
      // BREATH_MS is taken as Dialer still speaking (between its sentences), as a person would.
      audioQueued: () => Date.now() - this.lastVoiceAt < BREATH_MS,
      hangup: () => void this.hangUp(),
      log: (m) => deps.options.log(`[sandbox SIP ${number}] ${m}`),
      sinceAnswerMs: () => (this.answeredAt ? Date.now() - this.answeredAt : 0),
      sinceStreamMs: () => (this.answeredAt ? Date.now() - this.answeredAt : 0),
      voice: deps.options.voice,
    });
  }

  private reply(request: SipRequest, status: number, reason: string, extra: { headers?: Array<[string, string]>; body?: string } = {}): SipResponse {
    const response = sipResponseTo(request, status, reason, { toTag: this.localTag, ...extra });
    this.deps.send(response, this.peer);
    return response;
  }

  private later(ms: number, run: () => void): void {
    this.timers.push(setTimeout(run, ms));
  }

  async start(): Promise<void> {
    this.reply(this.invite, 100, 'Trying');
    const { answer } = this.script;
    if (answer === 'busy') return this.refuse(486, 'Busy Here');
    if (answer === 'fail') return this.refuse(404, 'Not Found');
    this.reply(this.invite, 180, 'Ringing');
    // No answer: it rings until Dialer gives up (CANCEL).
    if (answer === 'no_answer') return;
    this.later(this.script.ringMs ?? 200, () => void this.pickUp().catch((err: unknown) => {
      this.deps.options.log(`sandbox SIP answer failed: ${(err as Error).message}`);
      this.refuse(500, 'Server Internal Error');
    }));
  }

  private refuse(status: number, reason: string): void {
    this.state = 'over';
    this.final = this.reply(this.invite, status, reason);
    // The ACK of a failure ends it; without one, the call is forgotten after the INVITE transaction's time.
    this.later(64 * T1_MS, () => this.end());
  }

  /** Answers: binds its RTP socket, sends 200 OK with the SDP answer (again until the ACK), and starts the customer. */
  private async pickUp(): Promise<void> {
    if (this.state !== 'ringing') return;
    const remote = readRemoteSdp(this.invite.body, ['PCMU', 'PCMA']);
    this.rtp = await bindRtp(HOST);
    if (this.state !== 'ringing') return this.end();
    const sdp = sdpOffer({ address: HOST, port: this.rtp.address().port, codecs: [remote.codec], sessionId: Date.now(), version: 1 });
    this.answer = this.reply(this.invite, 200, 'OK', {
      headers: [
        ['contact', `<sip:far@${HOST}:${this.deps.port}>`],
        ['content-type', 'application/sdp'],
      ],
      body: sdp,
    });
    this.final = this.answer;
    this.state = 'up';
    this.answeredAt = Date.now();
    // The 200 goes again until the ACK comes (RFC 3261 13.3.1.4).
    let interval = T1_MS;
    const resend = () => {
      if (!this.answer || this.state !== 'up' || interval > 16 * T1_MS) return;
      this.deps.send(this.answer, this.peer);
      interval *= 2;
      this.later(interval, resend);
    };
    this.later(interval, resend);
    this.stream = new RtpStream({
      socket: this.rtp,
      remote,
      onAudio: (pcm) => {
        const voiced = Callee.voiced(pcm);
        if (voiced) this.lastVoiceAt = Date.now();
        this.callee.heard(pcm, voiced);
        this.callee.heardFrame([pcm], Date.now() - this.answeredAt);
      },
      onDigit: (digit) => this.callee.keys(digit, 'rtp'),
    });
    // The customer's speech is handed to the stream a few frames ahead of its clock.
    this.pump = setInterval(() => this.feed(), 20);
    this.later((this.script.maxSeconds ?? 30) * 1000, () => void this.hangUp());
    this.callee.start(this.script.steps ?? []);
  }

  private feed(): void {
    const stream = this.stream;
    if (!stream) return;
    while (this.queued < AHEAD_FRAMES) {
      const frame = this.callee.nextFrame(Date.now() - this.answeredAt);
      // Quiet: the stream sends its own silence.
      if (frame === SILENT_FRAME) return;
      this.queued++;
      void stream.play(frame).then(() => this.queued--);
    }
  }

  /** A request of Dialer's in this call. */
  request(request: SipRequest, from: Peer): void {
    switch (request.method) {
      case 'ACK':
        // Our 200's ACK: stop sending it again.
        this.answer = undefined;
        // The ACK of a failure (or of the 487 after a CANCEL): the call is over.
        if (this.state === 'over' && !this.byeSent) this.end();
        return;
      case 'INVITE':
        // A retransmitted INVITE gets the last answer again; a re-INVITE (session refresh) the same SDP.
        if (request.headers.get('cseq')?.[0] === this.invite.headers.get('cseq')?.[0]) return void (this.final && this.deps.send(this.final, from));
        this.reply(request, 200, 'OK', { headers: [['contact', `<sip:far@${HOST}:${this.deps.port}>`], ['content-type', 'application/sdp']], body: this.answerSdp() });
        return;
      case 'CANCEL':
        this.reply(request, 200, 'OK');
        if (this.state === 'ringing') {
          this.state = 'over';
          this.final = this.reply(this.invite, 487, 'Request Terminated');
          this.later(64 * T1_MS, () => this.end());
        }
        return;
      case 'BYE':
        this.reply(request, 200, 'OK');
        this.end();
        return;
      case 'UPDATE':
      case 'OPTIONS':
      case 'INFO':
        this.reply(request, 200, 'OK');
        return;
      default:
        // REFER included: the simulated customer transfers to no one.
        this.reply(request, 405, 'Method Not Allowed', { headers: [['allow', 'INVITE, ACK, CANCEL, BYE, OPTIONS, UPDATE, INFO']] });
    }
  }

  private answerSdp(): string {
    const answer = this.answer?.body;
    if (answer) return answer;
    const port = this.rtp?.address().port ?? 9;
    return sdpOffer({ address: HOST, port, codecs: [readRemoteSdp(this.invite.body, ['PCMU', 'PCMA']).codec], sessionId: Date.now(), version: 2 });
  }

  /** A response to our BYE. */
  response(response: SipResponse): void {
    if (response.status >= 200) this.byeSent?.();
  }

  /** The customer hangs up: BYE (sent again until answered, 8 s at most), then the call is over. */
  hangUp(): Promise<void> {
    if (this.state === 'ringing') {
      this.state = 'over';
      this.reply(this.invite, 487, 'Request Terminated');
      this.end();
      return Promise.resolve();
    }
    if (this.state !== 'up') return Promise.resolve();
    this.state = 'over';
    this.stopMedia();
    const from = sipHeader(this.invite, 'to')!;
    const bye: SipRequest = {
      kind: 'request',
      method: 'BYE',
      uri: sipAddressUri(sipHeader(this.invite, 'contact') ?? sipHeader(this.invite, 'from')!),
      headers: new Map([
        ['via', [`SIP/2.0/UDP ${HOST}:${this.deps.port};branch=z9hG4bK${randomBytes(8).toString('hex')};rport`]],
        ['max-forwards', ['70']],
        ['from', [from.includes(';tag=') ? from : `${from};tag=${this.localTag}`]],
        ['to', [sipHeader(this.invite, 'from')!]],
        ['call-id', [sipHeader(this.invite, 'call-id')!]],
        ['cseq', [`${this.byeSeq++} BYE`]],
      ]),
      body: '',
    };
    return new Promise<void>((resolve) => {
      let interval = T1_MS;
      let timer: NodeJS.Timeout | undefined;
      const giveUp = setTimeout(() => done(), 8000);
      const done = () => {
        clearTimeout(timer);
        clearTimeout(giveUp);
        this.byeSent = undefined;
        this.end();
        resolve();
      };
      this.byeSent = done;
      const sendBye = () => {
        this.deps.send(bye, this.peer);
        timer = setTimeout(sendBye, interval);
        interval = Math.min(interval * 2, 4000);
      };
      sendBye();
    });
  }

  private stopMedia(): void {
    clearInterval(this.pump);
    this.pump = undefined;
    this.callee.stop();
    this.stream?.close();
    this.stream = undefined;
  }

  /** Forgets the call: media stopped, sockets closed, timers cleared. */
  end(): void {
    if (this.state !== 'over') this.state = 'over';
    for (const t of this.timers) clearTimeout(t);
    this.stopMedia();
    this.rtp?.close();
    this.rtp = undefined;
    this.deps.forget();
  }
}

/**
 * One emulated call: ringing, the script's answer, the status callbacks, fetching and following
 * Dialer's markup (TwiML, Plivo XML, Exotel Voicebot JSON), the media stream and the end.
 */
import { PcmBuffer, speech, type CallAudio } from './audio.js';
import { Callee } from './callee.js';
import { MediaLeg } from './media.js';
import type { CalleeScript, CalleeStep, EmulatedCall, EmulatedProvider, EmulatorOptions } from './types.js';
import { deliver, hex, parseXml, plivoTime, sleep, twilioId, uuid, type Delivered, type XmlNode } from './util.js';
import { answerParams, finalCallback, signing, statusEvent } from './callbacks.js';
import { followExotel, followXml } from './follow.js';

export interface CallContext {
  options: EmulatorOptions;
  log: (m: string) => void;
  /** Something about a call changed (for nextCall waiters). */
  notify: () => void;
}

/** How Dialer set the call up (REST fields, or the fixed URLs of an inbound number). */
export interface CallSetup {
  answerUrl: string;
  answerMethod: 'GET' | 'POST';
  statusUrl?: string;
  statusMethod: 'GET' | 'POST';
  /** Twilio: initiated/ringing/answered/completed; Exotel: answered/terminal. */
  statusEvents: Set<string>;
  /** Plivo ring_url. */
  ringUrl?: string;
  ringMethod?: 'GET' | 'POST';
  machineDetection?: string;
  ringTimeoutSeconds?: number;
  timeLimitSeconds?: number;
  customField?: string;
  statusJson?: boolean;
  /** Twilio `Twiml=` on the create request: instructions given inline instead of a Url. */
  inlineMarkup?: string;
}

const PROVIDER_PATH: Record<EmulatedProvider, string> = { PROVIDER_A: 'provider_a', PROVIDER_B: 'provider_b', PROVIDER_C: 'provider_c' };
export class Call {
  readonly rec: EmulatedCall;
  readonly audio: CallAudio = { received: new PcmBuffer(), sent: new PcmBuffer() };
  readonly created = new Date();
  answeredAt: Date | undefined;
  endedAt: Date | undefined;
  over = false;
  twilioSeq = 0;
  /** Talk time of an Exotel Connect-applet transfer leg. */
  transferSeconds: number | undefined;
  private leg: MediaLeg | undefined;
  /** Settles when the current stream is over and its stream events were posted. */
  private streamDone: Promise<void> = Promise.resolve();
  /** Bumped whenever new instructions replace the current ones; stale followers stop. */
  generation = 0;
  /** The far end: its script runs once, across the call's streams. */
  readonly callee: Callee;
  /** Twilio DetectMessageEnd: how the machine's greeting ended before Dialer was asked what to do. */
  machineEnd: { answeredBy: string; durationMs: number } | undefined;
  /** Steps the machine played to the provider's detector before the stream (its greeting). */
  private stepsPlayed = 0;
  private timers: NodeJS.Timeout[] = [];
  private ringAbort = new AbortController();
  private resolveEnded!: () => void;
  private finishing: Promise<void> | undefined;

  constructor(
    readonly ctx: CallContext,
    provider: EmulatedProvider,
    direction: 'outbound' | 'inbound',
    from: string,
    to: string,
    readonly setup: CallSetup,
    readonly script: CalleeScript,
  ) {
    const audio = this.audio;
    const callSid = provider === 'PROVIDER_A' ? twilioId('CA') : provider === 'PROVIDER_B' ? hex(16) : uuid();
    this.rec = {
      provider,
      callSid,
      requestUuid: provider === 'PROVIDER_C' && direction === 'outbound' ? uuid() : undefined,
      direction,
      from,
      to,
      status: '',
      statusHistory: [],
      createdAt: Date.now(),
      rest: [],
      markup: [],
      said: [],
      dtmfReceived: '',
      dtmfEvents: [],
      beepsAtMs: [],
      voicedAfterBeepMs: 0,
      received: {
        get pcm() {
          return audio.received.value;
        },
        audioFrames: 0,
        audioAtMs: [],
        marks: [],
        clears: [],
        voiced: [],
        frames: [],
      },
      sent: {
        get pcm() {
          return audio.sent.value;
        },
        frames: 0,
        framesLate: 0,
        timeline: [],
      },
      callbacks: [],
      ended: new Promise<void>((r) => (this.resolveEnded = r)),
    };
    if (this.rec.requestUuid === undefined) delete this.rec.requestUuid;
    this.callee = new Callee(this.rec, {
      sendDtmf: (digit) => {
        if (!this.leg?.live) return false;
        this.leg.sendDtmf(digit);
        return true;
      },
      audioQueued: () => this.leg?.audioQueued() ?? false,
      hangup: () => void this.finish('completed', 'callee'),
      log: (m) => this.log(m),
      sinceAnswerMs: () => (this.answeredAt ? Date.now() - this.answeredAt.getTime() : 0),
      sinceStreamMs: () => this.leg?.msSinceStart() ?? 0,
      voice: this.ctx.options.voice,
    });
  }

  get provider(): EmulatedProvider {
    return this.rec.provider;
  }

  get path(): string {
    return PROVIDER_PATH[this.provider];
  }

  get durationSeconds(): number {
    if (!this.answeredAt) return 0;
    return Math.round(((this.endedAt ?? new Date()).getTime() - this.answeredAt.getTime()) / 1000);
  }

  setStatus(status: string): void {
    this.rec.status = status;
    this.rec.statusHistory.push(status);
    this.ctx.notify();
  }

  log(m: string): void {
    this.ctx.log(`[${this.provider} ${this.rec.callSid}] ${m}`);
  }

  send(d: Parameters<typeof deliver>[1]): Promise<Delivered> {
    return deliver(this.rec, d, (m) => this.log(m));
  }

  private later(ms: number, fn: () => void): void {
    this.timers.push(setTimeout(fn, ms));
  }

  // -------------------------------------------------------------------------------------------
  // Progress

  /** Rings, then plays the script's answer. Runs detached from the REST request that placed the call. */
  async runOutbound(): Promise<void> {
    try {
      await sleep(30);
      if (this.over) return;
      await statusEvent(this, 'initiated');
      if (this.over) return;
      this.setStatus('ringing');
      await statusEvent(this, 'ringing');
      const ringMs = this.script.ringMs ?? 200;
      const limit = (this.setup.ringTimeoutSeconds ?? 60) * 1000;
      const unanswered = this.script.answer === 'no_answer' || ringMs > limit;
      await new Promise<void>((r) => {
        const t = setTimeout(r, Math.min(ringMs, limit));
        this.ringAbort.signal.addEventListener('abort', () => (clearTimeout(t), r()));
      });
      if (this.over) return;
      if (unanswered) return this.finish(ringMs > limit && this.provider === 'PROVIDER_C' ? 'timeout' : 'no-answer', 'callee');
      if (this.script.answer === 'busy') return this.finish('busy', 'callee');
      if (this.script.answer === 'fail') return this.finish('failed', 'callee');
      await this.answer();
    } catch (err) {
      this.log(`call failed: ${(err as Error).stack ?? String(err)}`);
      await this.finish('failed', 'error');
    }
  }

  /** An inbound call: the caller waits for Dialer's answer at once. */
  async runInbound(): Promise<void> {
    try {
      this.setStatus('ringing');
      await this.answer();
    } catch (err) {
      this.log(`call failed: ${(err as Error).stack ?? String(err)}`);
      await this.finish('failed', 'error');
    }
  }

  private async answer(): Promise<void> {
    this.answeredAt = new Date();
    this.rec.answeredAt = this.answeredAt.getTime();
    this.setStatus('in-progress');
    const maxMs = (this.script.maxSeconds ?? 30) * 1000;
    this.later(maxMs, () => void this.finish('completed', 'callee'));
    if (this.setup.timeLimitSeconds) this.later(this.setup.timeLimitSeconds * 1000, () => void this.finish('completed', 'limit'));
    await statusEvent(this, 'answered');
    if (this.over) return;
    if (this.script.answer === 'voicemail' && this.setup.machineDetection === 'DetectMessageEnd' && !(await this.greetingToDetector())) return;
    const res = this.setup.inlineMarkup
      ? { status: 200, contentType: 'text/xml', body: this.setup.inlineMarkup }
      : await this.send({ url: this.setup.answerUrl, method: this.setup.answerMethod, params: this.answerParams(), ...this.signing() });
    await this.followResponse(res, ++this.generation);
  }

  /** The answer-URL fields (also sent with Plivo's aleg_url, Twilio's Redirect and Dial action). */
  answerParams(): Record<string, string> {
    return answerParams(this);
  }

  signing(): { sign?: { kind: 'twilio' | 'plivo'; authToken: string } } {
    return signing(this);
  }

  // -------------------------------------------------------------------------------------------
  // Following Dialer's instructions

  /** New instructions replace the current ones (Twilio Twiml=/Url=, Plivo transfer, Redirect). */
  async replaceInstructions(load: () => Promise<Delivered | string>): Promise<void> {
    const gen = ++this.generation;
    await this.leg?.stop();
    const res = await load();
    if (this.over || gen !== this.generation) return;
    await this.followResponse(typeof res === 'string' ? { status: 200, contentType: 'text/xml', body: res } : res, gen);
  }

  async followResponse(res: Delivered, gen: number): Promise<void> {
    if (this.over || gen !== this.generation) return;
    if (res.status < 200 || res.status > 299) {
      this.log(`Dialer answered the instructions request with HTTP ${res.status}: an application error; the call ends`);
      return this.finish(this.answeredAt ? 'completed' : 'failed', 'error');
    }
    this.rec.markup.push(res.body);
    if (this.provider === 'PROVIDER_B') return followExotel(this, res.body, gen);
    let doc: XmlNode;
    try {
      doc = parseXml(res.body);
      if (doc.name !== 'Response') throw new Error(`root element is <${doc.name}>, not <Response>`);
    } catch (err) {
      this.log(`instructions are not valid XML (${(err as Error).message}): an application error; the call ends`);
      return this.finish('completed', 'error');
    }
    await followXml(this, doc, gen);
  }

  private steps(): CalleeStep[] {
    const steps = (this.script.steps ?? []).slice(this.stepsPlayed);
    // Exotel has no answering-machine detection: the machine just starts talking (a script without its own greeting gets one).
    if (this.script.answer === 'voicemail' && this.provider === 'PROVIDER_B' && !steps.some((s) => 'say' in s)) return [{ say: 'Please leave a message after the tone.' }, ...steps];
    return steps;
  }

  /**
   * Twilio's DetectMessageEnd: the provider listens to the machine's greeting (the script's steps
   * up to its first beep) before asking Dialer what to do, and says how it ended. False when the
   * machine hung up during it (the call is over).
   */
  private async greetingToDetector(): Promise<boolean> {
    const steps = this.script.steps ?? [];
    const started = Date.now();
    let beep = false;
    for (const step of steps) {
      this.stepsPlayed++;
      if ('say' in step) await sleep(((await speech(step.say, this.ctx.options.voice)).length * 1000) / 8000);
      else if ('wait' in step) await sleep(step.wait);
      else if ('beep' in step) {
        await sleep(step.beep.ms ?? 600);
        this.rec.beepsAtMs.push(Date.now() - this.answeredAt!.getTime());
        beep = true;
        break;
      } else if ('hangup' in step) {
        await this.finish('completed', 'callee');
        return false;
      } else break;
      if (this.over) return false;
    }
    this.machineEnd = { answeredBy: beep ? 'machine_end_beep' : 'machine_end_silence', durationMs: Date.now() - started };
    return !this.over;
  }

  /** Opens the media stream and resolves when it is over (socket closed). */
  async stream(url: string, customParameters: Record<string, string>, contentType: string | undefined, gen: number, statusCallback?: { url: string; method: 'GET' | 'POST' }): Promise<void> {
    let done!: () => void;
    this.streamDone = new Promise<void>((r) => (done = r));
    try {
      await this.runStream(url, customParameters, contentType, gen, statusCallback);
    } finally {
      done();
    }
  }

  private async runStream(url: string, customParameters: Record<string, string>, contentType: string | undefined, gen: number, statusCallback?: { url: string; method: 'GET' | 'POST' }): Promise<void> {
    this.rec.streamUrl = url;
    this.ctx.notify();
    const leg = new MediaLeg({
      provider: this.provider,
      url,
      call: this.rec,
      audio: this.audio,
      accountId: this.provider === 'PROVIDER_A' ? this.ctx.options.twilio.accountSid : this.provider === 'PROVIDER_C' ? this.ctx.options.plivo.authId : this.ctx.options.exotel.accountSid,
      customParameters,
      contentType,
      callee: this.callee,
      record: this.ctx.options.recordMedia !== false,
      log: (m) => this.log(m),
    });
    this.leg = leg;
    // Plivo's <Stream statusCallbackUrl>: StartStream, StopStream, DroppedStream (failed or cut by the far end).
    const streamEvent = (event: string) =>
      statusCallback &&
      this.send({
        url: statusCallback.url,
        method: statusCallback.method,
        params: { Event: event, CallUUID: this.rec.callSid, From: this.rec.from, To: this.rec.to, StreamID: leg.streamSid, ServiceURL: url, Timestamp: plivoTime() },
        ...this.signing(),
      });
    try {
      await leg.open();
    } catch (err) {
      this.log(`could not open the media stream ${url}: ${(err as Error).message}`);
      this.leg = undefined;
      await streamEvent('DroppedStream');
      return;
    }
    await streamEvent('StartStream');
    if (this.over || gen !== this.generation) await leg.stop();
    else this.callee.start(this.steps());
    const closed = await leg.closed;
    if (this.leg === leg) this.leg = undefined;
    if (closed.byDialer && gen === this.generation) this.log(`Dialer closed the media stream (${closed.code})`);
    await streamEvent(closed.byDialer ? 'DroppedStream' : 'StopStream');
  }

  // -------------------------------------------------------------------------------------------
  // The end

  /**
   * Ends the call once: stops the stream (stop frame, close), sets the final status and posts
   * the final status callback. `source`: who ended it (callee, dialer, api, limit, error, close).
   */
  finish(status: string, source: string): Promise<void> {
    if (this.finishing) return this.finishing;
    this.over = true;
    this.ringAbort.abort();
    for (const t of this.timers) clearTimeout(t);
    this.finishing = (async () => {
      this.endedAt = new Date();
      this.rec.endedAt = this.endedAt.getTime();
      this.callee.stop();
      await this.leg?.stop();
      await this.streamDone;
      this.setStatus(status);
      this.log(`ended: ${status} (${source}), ${this.durationSeconds} s`);
      try {
        await finalCallback(this, status, source);
      } finally {
        this.resolveEnded();
        this.ctx.notify();
      }
    })();
    return this.finishing;
  }

  /** Dialer hangs up over REST: a call not yet answered is canceled. */
  hangupByApi(): Promise<void> {
    if (this.answeredAt) return this.finish('completed', 'api');
    return this.finish(this.provider === 'PROVIDER_C' ? 'cancel' : this.provider === 'PROVIDER_A' ? 'canceled' : 'no-answer', 'api');
  }
}

/**
 * The person (or machine) at the far end of an emulated call: runs its script once, across every
 * media stream the call opens (a Twilio call that gets new instructions, such as keys to play,
 * opens a new stream and the callee carries on). What it says goes out through whichever stream is
 * live; what Dialer plays is heard here, including keypad tones played in-band.
 */
import type { LocalVoice } from '../lib/speech.js';
import { DtmfDetector } from '../lib/tones.js';
import { speech } from './audio.js';
import { Hearing } from './hearing.js';
import type { CalleeStep, EmulatedCall } from './types.js';
import { sleep } from './util.js';

/** A steady tone at 8 kHz. */
export function beepTone(hz = 1000, ms = 600): Int16Array {
  const out = new Int16Array(Math.round(ms * 8));
  for (let i = 0; i < out.length; i++) out[i] = Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / 8000));
  return out;
}

export const FRAME = 160; // samples of 8 kHz in 20 ms
/** What a quiet callee sends: one frame of silence, shared by every call (never written to). */
export const SILENT_FRAME = new Int16Array(FRAME);
const VOICE_RMS = 300;

export interface CalleeLine {
  /** Sends one key press on the live stream (false when no stream is live). */
  sendDtmf(digit: string): boolean;
  /** Whether Dialer's audio is still queued for playout on the live stream. */
  audioQueued(): boolean;
  /** The callee hangs up. */
  hangup(): void;
  log(m: string): void;
  /** Ms since the call was answered. */
  sinceAnswerMs(): number;
  /** Ms since the live media stream started (the zero of the call's timeline). */
  sinceStreamMs(): number;
  /** The callee's voice (default: the local voice's). */
  voice?: LocalVoice | undefined;
}

type Labelled = { label: string; fromMs: number; toMs?: number };

/** What a callee writes of its call (an emulated call's record, or the sandbox SIP far side's): what it heard, its timeline, the keys it got. */
export type CalleeRecord = Pick<EmulatedCall, 'firstVoiceAtMs' | 'beepsAtMs' | 'voicedAfterBeepMs' | 'dtmfReceived' | 'dtmfEvents'> & {
  received: Pick<EmulatedCall['received'], 'voiced'>;
  sent: Pick<EmulatedCall['sent'], 'timeline'>;
};

export class Callee {
  /** Callee audio still to send, each piece with its timeline entry (when it has one). */
  private speechQueue: Array<{ pcm: Int16Array; entry?: Labelled }> = [];
  /** The spans of Dialer's voice on the timeline, and the waits on them. */
  private readonly hearing: Hearing;
  private speechPos = 0;
  private drained: Array<() => void> = [];
  private digitWaiters = new Set<() => void>();
  private lastVoiceAt = -Infinity;
  private stopped = false;
  private started = false;
  private readonly inband: DtmfDetector;
  private inbandRun = '';
  private inbandTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly call: CalleeRecord,
    private readonly line: CalleeLine,
  ) {
    this.inband = new DtmfDetector(8000, (key) => this.inbandKey(key));
    this.hearing = new Hearing({
      voiced: call.received.voiced,
      live: () => !this.stopped,
      queued: () => line.audioQueued(),
      nowMs: () => line.sinceStreamMs(),
    });
  }

  /** Runs the script once (the first stream's start); later streams just carry on. */
  start(steps: CalleeStep[]): void {
    if (this.started) return;
    this.started = true;
    void this.run(steps).catch((err: unknown) => this.line.log(`callee script failed: ${(err as Error).message}`));
  }

  /** The call is over: every wait ends. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.inbandTimer);
    this.flushInband();
    for (const r of this.drained.splice(0)) r();
    for (const r of this.digitWaiters) r();
  }

  /** 20 ms of what the callee says now (silence when it is quiet); the frame starts at `frameAtMs` on the stream. */
  nextFrame(frameAtMs: number): Int16Array {
    if (this.speechQueue.length === 0) {
      for (const r of this.drained.splice(0)) r();
      return SILENT_FRAME;
    }
    const out = new Int16Array(FRAME);
    let filled = 0;
    while (filled < FRAME && this.speechQueue.length > 0) {
      const head = this.speechQueue[0]!;
      if (this.speechPos === 0 && head.entry) head.entry.fromMs = frameAtMs + (filled * 20) / FRAME;
      const take = Math.min(FRAME - filled, head.pcm.length - this.speechPos);
      out.set(head.pcm.subarray(this.speechPos, this.speechPos + take), filled);
      filled += take;
      this.speechPos += take;
      if (this.speechPos >= head.pcm.length) {
        if (head.entry) head.entry.toMs = frameAtMs + (filled * 20) / FRAME;
        this.speechQueue.shift();
        this.speechPos = 0;
      }
    }
    if (this.speechQueue.length === 0) for (const r of this.drained.splice(0)) r();
    return out;
  }

  /** Dialer's audio, as it is played to the callee. */
  heard(pcm: Int16Array, voiced: boolean): void {
    if (voiced) {
      this.lastVoiceAt = Date.now();
      this.call.firstVoiceAtMs ??= this.line.sinceAnswerMs();
      if (this.call.beepsAtMs.length > 0) this.call.voicedAfterBeepMs += (pcm.length * 1000) / 8000;
    }
    this.inband.push(pcm);
  }

  /** The pieces of Dialer's audio played in the 20 ms frame that starts at `fromMs` on the stream. */
  heardFrame(played: Int16Array[], fromMs: number): void {
    this.hearing.heard(played, fromMs);
  }

  /** Keys Dialer sent by markup or REST. */
  keys(digits: string, via: 'markup' | 'rest' | 'inband' | 'rtp'): void {
    const keys = digits.replace(/[^0-9*#A-D]/gi, '');
    if (!keys) return;
    this.call.dtmfReceived += keys;
    this.call.dtmfEvents.push({ digits: keys, via, atMs: this.line.sinceAnswerMs() });
    this.line.log(`received keys ${keys} (${via})`);
    for (const r of this.digitWaiters) r();
  }

  /** In-band keys arrive one by one; a run of them is one event once they pause. */
  private inbandKey(key: string): void {
    this.inbandRun += key;
    clearTimeout(this.inbandTimer);
    this.inbandTimer = setTimeout(() => this.flushInband(), 700);
  }

  private flushInband(): void {
    if (!this.inbandRun) return;
    const run = this.inbandRun;
    this.inbandRun = '';
    this.keys(run, 'inband');
  }

  static voiced(pcm: Int16Array): boolean {
    let sum = 0;
    for (const v of pcm) sum += v * v;
    return Math.sqrt(sum / Math.max(1, pcm.length)) > VOICE_RMS;
  }

  private async say(pcm: Int16Array, label?: string): Promise<void> {
    if (this.stopped) return;
    const entry = label === undefined ? undefined : { label, fromMs: NaN };
    if (entry) this.call.sent.timeline.push(entry);
    this.speechQueue.push({ pcm, ...(entry ? { entry } : {}) });
    await new Promise<void>((r) => this.drained.push(r));
  }

  private async waitForAudio(maxMs: number): Promise<void> {
    const start = Date.now();
    while (!this.stopped && Date.now() - start < maxMs) {
      const heard = this.lastVoiceAt > start - 400;
      if (heard && !this.line.audioQueued() && Date.now() - this.lastVoiceAt >= 400) return;
      await sleep(20);
    }
  }

  /** Resolves true once the keys Dialer sent so far end with `digits` (in order), false on timeout. */
  private async expectDigits(digits: string, timeoutMs: number): Promise<boolean> {
    const since = this.call.dtmfReceived.length;
    const arrived = () => this.call.dtmfReceived.slice(since).includes(digits);
    const deadline = Date.now() + timeoutMs;
    while (!this.stopped && !arrived() && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const done = () => (clearTimeout(timer), this.digitWaiters.delete(done), resolve());
        const timer = setTimeout(done, Math.max(0, deadline - Date.now()));
        this.digitWaiters.add(done);
      });
    }
    return arrived();
  }

  private async run(steps: CalleeStep[]): Promise<void> {
    for (const step of steps) {
      if (this.stopped) return;
      if ('say' in step) await this.say(await speech(step.say, this.line.voice), step.label);
      else if ('play' in step) await this.say(step.play, step.label);
      else if ('beep' in step) {
        await this.say(beepTone(step.beep.hz, step.beep.ms));
        this.call.beepsAtMs.push(this.line.sinceAnswerMs());
      } else if ('dtmf' in step) {
        for (const d of step.dtmf) {
          if (this.stopped) return;
          this.line.sendDtmf(d);
          await sleep(200);
        }
      } else if ('wait' in step) await sleep(step.wait);
      else if ('waitForAudio' in step) await this.waitForAudio(step.waitForAudio);
      else if ('waitForQuiet' in step) await this.hearing.waitForQuiet(step.waitForQuiet.quietMs, step.waitForQuiet.timeoutMs);
      else if ('waitForSpeech' in step) await this.hearing.waitForSpeech(step.waitForSpeech.speakingMs, step.waitForSpeech.timeoutMs);
      else if ('expectDigits' in step) {
        const ok = await this.expectDigits(step.expectDigits, step.timeoutMs ?? 15_000);
        if (!ok && step.else) return this.run(step.else);
      } else if ('decide' in step) {
        const next = await step.decide().catch((err: unknown) => {
          this.line.log(`the callee's next steps could not be decided (${(err as Error).message}): it hangs up`);
          return [{ hangup: true as const }];
        });
        await this.run(next);
      } else if ('hangup' in step) {
        if (!this.stopped) this.line.hangup();
        return;
      }
    }
  }
}

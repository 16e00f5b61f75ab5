/**
 * The human's side of a warm transfer: Dialer calls them on a second leg (`CallIO.consult`), speaks
 * the briefing, and listens for their decision (a key: 1 accepts, 2 declines; or their words: "yes",
 * "no"), then bridges the person to them or hangs their leg up. The flow engine decides what the
 * briefing says and what the person hears about the outcome (flow/engine.ts).
 *
 * Terminology
 * - leg: the human's call (`ConsultLeg`), whose audio the agent has to itself until the bridge.
 * - decision: accepted, declined, or why nobody decided (no_answer, busy, failed).
 */
import { resample, rms } from '../lib/audio.js';
import type { CallIO, ConsultLeg } from './agent.js';
import type { WarmTransferDecision, WarmTransferRun } from './flow/types.js';
import type { STT, SttStream, TTS } from './services.js';

/** Asked of the human after the briefing. */
export const DECISION_PROMPT = 'Say yes or press 1 to take the call. Say no or press 2 to decline.';
/** How long the human has to decide once the briefing was heard. */
export const DECISION_TIMEOUT_MS = 15_000;
/** A frame louder than this is the human speaking; this much quiet after it ends what they said. */
const SPEECH_RMS = 400;
const QUIET_MS = 500;

const ACCEPT = /\b(yes|yeah|yep|sure|ok|okay|accept|put (them|him|her) through|i'?ll take it)\b/i;
const DECLINE = /\b(no|nope|decline|not now|can'?t|cannot|busy)\b/i;

/** What the human's words say: accepted, declined, or nothing yet. */
export function decisionOfWords(text: string): 'accepted' | 'declined' | undefined {
  const yes = ACCEPT.test(text);
  const no = DECLINE.test(text);
  if (yes && !no) return 'accepted';
  if (no) return 'declined';
  return undefined;
}

export interface ConsultServices {
  tts: TTS;
  stt: STT;
}

/**
 * Runs a warm transfer's call to the human on `io` (which must offer `consult`). Never throws: a
 * failure is a `failed` decision with its reason in `error`.
 */
export async function consultHuman(io: CallIO, services: ConsultServices, run: WarmTransferRun): Promise<WarmTransferDecision> {
  const events: WarmTransferDecision['events'] = [];
  const mark = (event: string) => events.push({ event, at: new Date().toISOString() });
  mark('dial');
  let answer;
  try {
    answer = await io.consult!(run.to);
  } catch (err) {
    mark('failed');
    return { decision: 'failed', events, error: (err as Error).message };
  }
  if (!answer.answered) {
    mark(answer.reason);
    return { decision: answer.reason, events, ...(answer.detail ? { error: answer.detail } : {}) };
  }
  mark('answered');
  const leg = answer.leg;
  const heard = new Listener(leg, services.stt);
  try {
    const briefing = await synthesize(services.tts, `${await run.briefing} ${DECISION_PROMPT}`, leg.signal, leg.sampleRateHz);
    const played = heard.decided ? 'played' : await leg.play(briefing);
    if (played === 'played') mark('briefed');
    const decided = await heard.decision(DECISION_TIMEOUT_MS);
    if (!decided) {
      mark(leg.signal.aborted ? 'hung_up' : 'timeout');
      leg.hangup();
      return { decision: 'declined', via: leg.signal.aborted ? 'hangup' : 'timeout', events };
    }
    mark(decided.decision);
    if (decided.decision === 'declined') {
      leg.hangup();
      return { decision: 'declined', via: decided.via, ...(decided.heard ? { heard: decided.heard } : {}), events };
    }
    await leg.bridge();
    mark('bridged');
    return { decision: 'accepted', via: decided.via, ...(decided.heard ? { heard: decided.heard } : {}), events };
  } catch (err) {
    mark('failed');
    leg.hangup();
    return { decision: 'failed', events, error: (err as Error).message };
  } finally {
    await heard.close();
  }
}

type Decided = { decision: 'accepted' | 'declined'; via: 'key' | 'voice'; heard?: string };

/** Hears the human's keys and words from the moment they answer (they may decide during the briefing). */
class Listener {
  decided: Decided | undefined;
  private wake: (() => void) | undefined;
  private readonly stt: SttStream | undefined;
  private readonly sttRateHz: number;
  private speakingMs = 0;
  private quietMs = 0;
  private closed = false;

  constructor(
    private readonly leg: ConsultLeg,
    stt: STT,
  ) {
    leg.onDtmf((digit) => {
      if (digit === '1') this.decide({ decision: 'accepted', via: 'key' });
      else if (digit === '2') this.decide({ decision: 'declined', via: 'key' });
    });
    this.sttRateHz = stt.sampleRatesHz.includes(leg.sampleRateHz) ? leg.sampleRateHz : stt.sampleRatesHz[0]!;
    try {
      this.stt = stt.open({ signal: leg.signal, sampleRateHz: this.sttRateHz });
    } catch {
      this.stt = undefined; // keys still decide
    }
    if (!this.stt) return;
    leg.onAudio((pcm) => this.audio(pcm));
    void this.words(this.stt);
    leg.signal.addEventListener('abort', () => this.wake?.(), { once: true });
  }

  private decide(d: Decided): void {
    if (this.decided || this.closed) return;
    this.decided = d;
    this.wake?.();
  }

  /** Feeds the STT and ends a stretch of speech after a quiet spell (for a per-segment STT). */
  private audio(pcm: Int16Array): void {
    if (this.closed || this.decided || !this.stt) return;
    this.stt.write(this.sttRateHz === this.leg.sampleRateHz ? pcm : resample(pcm, this.leg.sampleRateHz, this.sttRateHz));
    const ms = (pcm.length * 1000) / this.leg.sampleRateHz;
    if (rms(pcm) > SPEECH_RMS) {
      this.speakingMs += ms;
      this.quietMs = 0;
    } else if (this.speakingMs > 0) {
      this.quietMs += ms;
      if (this.quietMs >= QUIET_MS) {
        this.speakingMs = 0;
        this.quietMs = 0;
        this.stt.endSegment();
      }
    }
  }

  private async words(stream: SttStream): Promise<void> {
    try {
      for await (const event of stream.events) {
        if (event.type !== 'final' || !event.text.trim()) continue;
        const decision = decisionOfWords(event.text);
        if (decision) this.decide({ decision, via: 'voice', heard: event.text.trim() });
      }
    } catch {
      /* the STT failed: keys still decide */
    }
  }

  /** The decision, or undefined when none came in `timeoutMs` (or the human hung up). */
  async decision(timeoutMs: number): Promise<Decided | undefined> {
    if (this.decided || this.leg.signal.aborted) return this.decided;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.wake = () => (clearTimeout(timer), resolve());
    });
    return this.decided;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.stt?.close().catch(() => undefined);
  }
}

async function synthesize(tts: TTS, text: string, signal: AbortSignal, sampleRateHz: number): Promise<Int16Array> {
  const chunks: Int16Array[] = [];
  for await (const chunk of tts.synthesize(text, { signal })) chunks.push(chunk);
  const pcm = new Int16Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) (pcm.set(c, at), (at += c.length));
  return resample(pcm, tts.sampleRateHz, sampleRateHz);
}

/**
 * The built-in agent that needs no AI service: it greets the person with the local voice,
 * listens (an energy detector finds speech), stops talking the moment the person talks over it
 * (barge-in), waits for them to finish, says goodbye and hangs up. Keys pressed are kept.
 * It proves the whole call path (dial, media both ways, barge-in, DTMF, recording, outcome) with
 * no AI service configured. Like a phone menu, pressing 0 moves the person to a human when the
 * lead's payload names one in `transfer_number` (a warm transfer through the provider).
 */
import { rms } from '../lib/audio.js';
import { synthesize, type LocalVoice } from '../lib/speech.js';
import { recordingAt, type CallAgent, type CallContext, type CallIO, type ConversationResult } from './agent.js';
import { dropVoicemail } from './voicemail/drop.js';
import { speakDisclosure } from './disclosure.js';
import type { TranscriptLine } from './flow/types.js';
import { MediaClock } from './media-clock.js';

export interface GreeterOptions {
  /** Said first; `{variable}` is replaced from the lead payload. The payload's `greeting` wins. */
  greeting: string;
  farewell: string;
  /** Frame level (RMS) above which a 20 ms frame counts as speech. */
  speechLevel: number;
  /** How long the person may stay silent before the agent gives up waiting. */
  listenMs: number;
  /** Silence after speech that ends the person's turn. */
  endOfTurnMs: number;
  /** The voice it speaks with (default: flite's). */
  voice?: LocalVoice;
  /** Speech to synthesise: the local voice by default (injectable so a unit test can run without it). */
  speak?: (text: string, sampleRateHz: number, signal: AbortSignal) => Promise<Int16Array>;
}

export const GREETER_DEFAULTS: GreeterOptions = {
  greeting: 'Hello! This is an automated call from Dialer. How are you today?',
  farewell: 'Thank you for your time. Goodbye!',
  speechLevel: 400,
  listenMs: 8000,
  endOfTurnMs: 700,
};

const cache = new Map<string, Int16Array>();

async function localVoice(text: string, sampleRateHz: number, signal: AbortSignal, voice?: LocalVoice): Promise<Int16Array> {
  const key = `${voice?.engine}:${voice?.voice}:${sampleRateHz}:${text}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const pcm = await synthesize(text, { sampleRateHz, signal, ...(voice ? { voice } : {}) });
  if (cache.size > 100) cache.delete(cache.keys().next().value!);
  cache.set(key, pcm);
  return pcm;
}

function substitute(text: string, payload: Record<string, unknown>): string {
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => {
    const value = payload[name];
    return typeof value === 'string' || typeof value === 'number' ? String(value) : whole;
  });
}

/** Tracks whether the person is speaking, frame by frame. */
class SpeechDetector {
  private loudFrames = 0;
  private quietMs = 0;
  speaking = false;
  heardSpeech = false;
  private waiters: Array<() => void> = [];

  constructor(private readonly level: number, private readonly endOfTurnMs: number) {}

  push(pcm: Int16Array, sampleRateHz: number): { started: boolean } {
    const ms = (pcm.length * 1000) / sampleRateHz;
    if (rms(pcm) >= this.level) {
      this.loudFrames++;
      this.quietMs = 0;
      if (!this.speaking && this.loudFrames >= 3) {
        this.speaking = true;
        this.heardSpeech = true;
        return { started: true };
      }
    } else {
      this.loudFrames = 0;
      this.quietMs += ms;
      if (this.speaking && this.quietMs >= this.endOfTurnMs) {
        this.speaking = false;
        for (const w of this.waiters.splice(0)) w();
      }
    }
    return { started: false };
  }

  /** Resolves when a turn that has started ends. */
  turnEnded(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

export class GreeterAgent implements CallAgent {
  readonly label = 'greeter';
  private readonly options: GreeterOptions;

  constructor(options: Partial<GreeterOptions> = {}) {
    this.options = { ...GREETER_DEFAULTS, ...options };
  }

  async converse(context: CallContext, io: CallIO): Promise<ConversationResult> {
    const o = this.options;
    const speak = o.speak ?? ((text: string, rate: number, signal: AbortSignal) => localVoice(text, rate, signal, o.voice));
    if (context.machine && context.voicemail?.action === 'leave_message') {
      const message = substitute(context.voicemail.message ?? '', context.payload);
      const machine = context.machine;
      const { outcome, record, transcript } = await dropVoicemail({
        io,
        message,
        detectedBy: 'provider',
        ...(machine.greetingEnded ? { providerEnd: { how: machine.greetingEnded, ...(machine.detectionMs !== undefined ? { detectionMs: machine.detectionMs } : {}) } } : {}),
        speak: (text, signal) => speak(text, io.sampleRateHz, signal),
      });
      return { outcome, metaData: { agent: this.label, transcription: transcript, call_ended_by: 'agent', voicemail: record } };
    }
    // The disclosure goes first, whole: nobody listens to the callee until it is over.
    const disclosure = await speakDisclosure(context, io, (text, signal) => speak(text, io.sampleRateHz, signal));
    if (disclosure && !disclosure.heard) {
      return {
        outcome: 'no_response',
        metaData: {
          agent: this.label,
          transcription: [disclosure.line],
          call_ended_by: io.signal.aborted && !disclosure.record.error ? 'customer' : 'agent',
          disclosure: disclosure.record,
          ...(disclosure.record.error ? { errors: [disclosure.record.error] } : {}),
        },
      };
    }
    const transcription: TranscriptLine[] = disclosure ? [disclosure.line] : [];
    const errors: string[] = [];
    let dtmf = '';
    let bargeIns = 0;
    let agentSpeaking = false;
    const detector = new SpeechDetector(o.speechLevel, o.endOfTurnMs);
    let transfer = 'none' as 'none' | 'started' | 'failed';
    let transferDone: Promise<void> = Promise.resolve();
    const transferNumber = typeof context.payload.transfer_number === 'string' ? context.payload.transfer_number : undefined;
    io.onDtmf((digit) => {
      dtmf += digit;
      if (digit === '0' && transferNumber && transfer === 'none') {
        transfer = 'started';
        io.clear();
        transferDone = io.transfer(transferNumber).catch((err: unknown) => {
          errors.push(`the transfer to ${transferNumber} failed: ${(err as Error).message}`);
          transfer = 'failed';
        });
      }
    });
    const clock = new MediaClock(io.sampleRateHz);
    io.onAudio((pcm, timestampMs) => {
      clock.arrived(pcm.length, timestampMs);
      const { started } = detector.push(pcm, io.sampleRateHz);
      if (started && agentSpeaking) {
        bargeIns++;
        io.clear();
      }
    });

    const say = async (text: string): Promise<void> => {
      const pcm = await speak(text, io.sampleRateHz, io.signal);
      if (io.signal.aborted) return;
      agentSpeaking = true;
      const at = recordingAt(io.recordingMs?.());
      const result = await io.play(pcm);
      agentSpeaking = false;
      const content = result === 'played' ? text : `${text} [interrupted]`;
      transcription.push({ role: 'assistant', content, ...at });
      io.observe?.({ type: 'transcript', role: 'assistant', text: content, final: true, ...at });
    };

    try {
      const greeting = typeof context.payload.greeting === 'string' && context.payload.greeting.trim() ? context.payload.greeting : o.greeting;
      await say(substitute(greeting, context.payload));
      // Listen: for a turn in progress (perhaps the one that interrupted us) or one that starts soon.
      if (!io.signal.aborted) {
        const deadline = Date.now() + o.listenMs;
        while (!io.signal.aborted && transfer === 'none' && !detector.speaking && !detector.heardSpeech && Date.now() < deadline) await sleep(50, io.signal);
        if (detector.speaking) await Promise.race([detector.turnEnded(), sleep(Math.max(0, deadline - Date.now()) + o.listenMs, io.signal)]);
      }
      // After a transfer the person talks to a human: stay out of the way until the call is over.
      if (transfer !== 'none') await transferDone;
      if (transfer === 'started') await new Promise<void>((resolve) => (io.signal.aborted ? resolve() : io.signal.addEventListener('abort', () => resolve(), { once: true })));
      else if (!io.signal.aborted) await say(o.farewell);
    } catch (err) {
      if (!io.signal.aborted) errors.push(`the agent could not speak: ${(err as Error).message}`);
    }
    const endedBy = transfer === 'started' ? 'transfer' : io.signal.aborted ? 'customer' : 'agent';
    if (!io.signal.aborted && transfer !== 'started') io.hangup();
    return {
      outcome: detector.heardSpeech ? 'conversation_completed' : 'no_response',
      traceScores: { media_frames: clock.frames, media_frames_late: clock.late },
      metaData: {
        agent: this.label,
        transcription,
        ...(disclosure ? { disclosure: disclosure.record } : {}),
        call_ended_by: endedBy,
        barge_ins: bargeIns,
        ...(dtmf ? { dtmf } : {}),
        ...(transfer === 'started' ? { transfer_number: transferNumber } : {}),
        ...(errors.length ? { errors } : {}),
      },
    };
  }
}

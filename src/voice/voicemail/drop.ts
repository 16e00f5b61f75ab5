/**
 * Leaving a message on an answering machine: wait until the greeting is over (the provider already
 * waited for it, or Dialer hears the beep; a greeting without a beep is over after a stretch of
 * silence, and a long one after a timeout), speak the message, hang up. The attempt's outcome is
 * `voicemail_left` when the message played to its end, `voicemail` otherwise (the machine hung up
 * first, the message could not be spoken).
 */
import { rms } from '../../lib/audio.js';
import { recordingAt, type CallIO } from '../agent.js';
import { BeepDetector } from './beep.js';

export const VOICEMAIL_LEFT = 'voicemail_left';
export const VOICEMAIL = 'voicemail';

export interface VoicemailRecord {
  /** provider: the provider's answering-machine detection; first_words: the callee's first words sounded like a greeting. */
  detected_by: 'provider' | 'first_words';
  /** What ended the wait: the provider (it waited for the greeting's end), the beep, silence after the greeting, or the timeout. */
  waited_for: 'provider' | 'beep' | 'silence' | 'timeout' | 'hangup';
  /** How the provider said the greeting ended (Twilio: beep, silence, other). */
  provider_greeting_end?: string;
  /** The greeting's length as measured (ms): until the beep started, or the provider's detection time. */
  greeting_ms?: number;
  /** When the beep ended, in ms of the machine's audio since the wait began; and its pitch. */
  beep_at_ms?: number;
  beep_hz?: number;
  /** The message spoken, and whether it was heard to its end. */
  message: string;
  message_played: boolean;
  error?: string;
}

export interface DropOptions {
  io: CallIO;
  /** The message, already filled in. */
  message: string;
  /** Speech of `text` at the line's rate. */
  speak(text: string, signal: AbortSignal): Promise<Int16Array>;
  detectedBy: VoicemailRecord['detected_by'];
  /** The provider waited for the greeting's end and said how it ended. */
  providerEnd?: { how?: string; detectionMs?: number };
  /** Longest wait for the beep (default 30 s). */
  timeoutMs?: number;
  /** Silence after the greeting's speech that ends it when no beep comes (default 3 s). */
  silenceMs?: number;
  /** The machine's audio just before the wait began (the beep may already have come while its words were transcribed). */
  heardBefore?: Int16Array;
}

/** Level (RMS) above which a 20 ms frame is the greeting's sound rather than the line's hiss. */
const SOUND_RMS = 300;

/** Resolves when the greeting is over: how, and what the beep detector heard. */
function greetingOver(o: DropOptions): Promise<Pick<VoicemailRecord, 'waited_for' | 'greeting_ms' | 'beep_at_ms' | 'beep_hz'>> {
  const { io } = o;
  const detector = new BeepDetector({ sampleRateHz: io.sampleRateHz });
  const silenceMs = o.silenceMs ?? 3000;
  let heardSound = false;
  let quietMs = 0;
  let active = true;
  return new Promise((resolve) => {
    const done = (result: Pick<VoicemailRecord, 'waited_for' | 'greeting_ms' | 'beep_at_ms' | 'beep_hz'>) => {
      if (!active) return;
      active = false;
      clearTimeout(timer);
      io.signal.removeEventListener('abort', onAbort);
      resolve(result);
    };
    const timer = setTimeout(() => done({ waited_for: 'timeout', greeting_ms: detector.heardMs }), o.timeoutMs ?? 30_000);
    const onAbort = () => done({ waited_for: 'hangup' });
    if (io.signal.aborted) return onAbort();
    const early = o.heardBefore?.length ? detector.push(o.heardBefore) : undefined;
    if (early) return done({ waited_for: 'beep', greeting_ms: early.startMs, beep_at_ms: early.endMs, beep_hz: early.frequencyHz });
    io.signal.addEventListener('abort', onAbort, { once: true });
    io.onAudio((pcm) => {
      if (!active) return;
      const beep = detector.push(pcm);
      if (beep) return done({ waited_for: 'beep', greeting_ms: beep.startMs, beep_at_ms: beep.endMs, beep_hz: beep.frequencyHz });
      const frameMs = (pcm.length * 1000) / io.sampleRateHz;
      if (rms(pcm) >= SOUND_RMS) {
        heardSound = true;
        quietMs = 0;
      } else if (heardSound && (quietMs += frameMs) >= silenceMs) done({ waited_for: 'silence', greeting_ms: Math.round(detector.heardMs - quietMs) });
    });
  });
}

/** `transcript`: the message's line, placed in the recording where it began, when it was heard to its end. */
export async function dropVoicemail(o: DropOptions): Promise<{ outcome: string; record: VoicemailRecord; transcript: Array<{ role: 'assistant'; content: string; at_ms?: number }> }> {
  const { io } = o;
  const record: VoicemailRecord = { detected_by: o.detectedBy, waited_for: 'provider', message: o.message, message_played: false };
  if (o.providerEnd) {
    if (o.providerEnd.how) record.provider_greeting_end = o.providerEnd.how;
    if (o.providerEnd.detectionMs !== undefined) record.greeting_ms = o.providerEnd.detectionMs;
  } else Object.assign(record, await greetingOver(o));
  let at: { at_ms?: number } = {};
  if (!io.signal.aborted) {
    try {
      const pcm = await o.speak(o.message, io.signal);
      at = recordingAt(io.recordingMs?.());
      record.message_played = !io.signal.aborted && (await io.play(pcm)) === 'played';
    } catch (err) {
      if (!io.signal.aborted) record.error = `the message could not be spoken: ${(err as Error).message}`;
    }
  }
  if (!io.signal.aborted) io.hangup();
  return { outcome: record.message_played ? VOICEMAIL_LEFT : VOICEMAIL, record, transcript: record.message_played ? [{ role: 'assistant', content: o.message, ...at }] : [] };
}

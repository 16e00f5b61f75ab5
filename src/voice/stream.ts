/**
 * WEBRTC_STREAM's agent: speech-to-text, text-to-speech and the transcript, no LLM and no flow.
 * The client decides what the agent says (`tts-speak`) and reads what the caller said from the
 * live transcript events; the session ends when the client hangs up or the peer goes away.
 *
 *   caller audio -> VAD (barge-in) -> STT -> turns -> transcript      client text -> sentences -> TTS -> playout
 */
import { recordingAt, type CallAgent, type CallContext, type CallIO, type ConversationResult, type SpeakRequest } from './agent.js';
import type { VoiceServices } from './conversation.js';
import { DEFAULT_PRICING, type Pricing } from './conversation.js';
import { frame, type Direction, type Frame } from './frames.js';
import { ConversationMetrics } from './metrics.js';
import { TranscriptTap } from './observe.js';
import { FrameProcessor, Pipeline } from './pipeline.js';
import { hearing, type SttFallback } from './processors/listen.js';
import { TurnTakingProcessor } from './processors/turns.js';
import { resolveTurnTaking, vadOptionsFor } from './turns/settings.js';
import { OutputProcessor } from './processors/output.js';
import { SentenceProcessor, TtsProcessor } from './processors/speak.js';

export interface StreamAgentOptions {
  services: Pick<VoiceServices, 'stt' | 'tts' | 'vad'>;
  maxCallMs?: number;
  pricing?: Pricing;
}

type Line = { role: 'user' | 'assistant'; content: string; at_ms?: number };

/** Keeps the caller's finished turns as transcript lines; nothing goes further down. */
class TranscriptSink extends FrameProcessor {
  readonly name = 'transcript';
  constructor(private readonly onUserTurn: (text: string) => void) {
    super();
  }
  protected process(f: Frame, direction: Direction): void {
    if (f.kind === 'user_turn') {
      this.onUserTurn(f.text);
      return;
    }
    this.push(f, direction);
  }
}

export class StreamAgent implements CallAgent {
  readonly label = 'stream';

  constructor(private readonly options: StreamAgentOptions) {}

  async converse(_context: CallContext, io: CallIO): Promise<ConversationResult> {
    const o = this.options;
    const startedAt = performance.now();
    const transcription: Line[] = [];
    const errors: string[] = [];
    const metrics = new ConversationMetrics();
    let spokenCharacters = 0;
    let endedBy: 'customer' | 'timeout' | 'error' | undefined;
    let resolveEnd!: () => void;
    const over = new Promise<void>((r) => (resolveEnd = r));
    const finish = (by: NonNullable<typeof endedBy>) => {
      if (endedBy) return;
      endedBy = by;
      resolveEnd();
    };
    const observe = io.observe ?? (() => {});

    const sttFailed = (message: string) => {
      errors.push(message);
      finish('error');
    };
    // The client decides what the agent says and when: the plain VAD turns (no speculative replies to hold).
    const turnTaking = resolveTurnTaking({ mode: 'vad' }, undefined);
    let sttFallback: (SttFallback & { at_ms?: number }) | undefined;
    const { vad, stt } = hearing(o.services, io.sampleRateHz, sttFailed, vadOptionsFor(turnTaking), {}, (fallback) => (sttFallback ??= { ...fallback, ...recordingAt(io.recordingMs?.()) }));
    const sentences = new SentenceProcessor();
    const pipeline = new Pipeline(
      [
        vad,
        stt,
        new TranscriptTap(observe),
        new TurnTakingProcessor({ settings: turnTaking }),
        new TranscriptSink((text) => {
          transcription.push({ role: 'user', content: text, ...recordingAt(io.recordingMs?.()) });
          observe({ type: 'transcript', role: 'user', text, final: true });
        }),
        sentences,
        new TtsProcessor(o.services.tts, io.sampleRateHz, metrics, (err, text) => {
          errors.push(`text-to-speech failed for "${text.slice(0, 40)}": ${(err as Error).message}`);
        }),
        new OutputProcessor(io, metrics, {
          spoke: (_turn, text) => {
            spokenCharacters += text.length;
            transcription.push({ role: 'assistant', content: text, ...recordingAt(io.recordingMs?.()) });
            observe({ type: 'transcript', role: 'assistant', text, final: true });
          },
          ended: () => {},
          transferred: () => {},
        }),
      ],
      {
        onError: (err, p) => {
          errors.push(`${p.name}: ${(err as Error).message}`);
          finish('error');
        },
      },
    );

    let turn = 0;
    const speak = (request: SpeakRequest) => {
      if (endedBy || !request.text.trim()) return;
      if (request.interrupt) pipeline.send(frame({ kind: 'interruption' as const }));
      turn++;
      pipeline.sendTo(sentences, frame({ kind: 'agent_text' as const, text: request.text, turn }));
      pipeline.sendTo(sentences, frame({ kind: 'turn_done' as const, turn }));
    };
    io.onAudio((pcm) => pipeline.send(frame({ kind: 'input_audio' as const, pcm, sampleRateHz: io.sampleRateHz })));
    io.onDtmf(() => {});
    if (io.signal.aborted) finish('customer');
    else io.signal.addEventListener('abort', () => finish('customer'), { once: true });
    const maxCall = setTimeout(() => finish('timeout'), o.maxCallMs ?? 30 * 60_000);
    maxCall.unref?.();

    pipeline.send(frame({ kind: 'start' as const }));
    io.onSpeak?.(speak);
    await over;
    clearTimeout(maxCall);
    pipeline.send(frame({ kind: 'end' as const, reason: endedBy! }));
    if (endedBy !== 'customer' && !io.signal.aborted) io.hangup();

    const minutes = (performance.now() - startedAt) / 60_000;
    const pricing = o.pricing ?? DEFAULT_PRICING;
    const cost = minutes * pricing.sttPerMinute + (spokenCharacters * pricing.ttsPerMillionCharacters) / 1e6;
    return {
      cost: Math.round(cost * 10_000) / 10_000,
      traceScores: { interruptions: metrics.interruptions, utterances: turn },
      metaData: { agent: this.label, transcription, node_traversal: [], call_ended_by: endedBy, errors, ...(sttFallback ? { stt_fallback: sttFallback } : {}) },
    };
  }
}

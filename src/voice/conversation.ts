/**
 * The template-driven agent: one pipeline per call
 *   caller audio -> VAD (barge-in) -> STT -> turns -> flow engine + LLM -> sentences -> TTS -> playout
 * and the call record it leaves: transcript, node traversal, function calls, errors, who ended the
 * call, outcome, sentiment, cost, and trace scores (turn latency, interruptions).
 */
import { DEFAULT_PRICING, type Pricing } from '../config/voice.js';
import type { Flow } from './flow/schema.js';
import type { CallAgent, CallContext, CallIO, ConversationResult } from './agent.js';
import { createFlowSession } from './flow/index.js';
import { frame, type EndFrame } from './frames.js';
import { ConversationMetrics, percentile } from './metrics.js';
import { Pipeline, type FrameProcessor } from './pipeline.js';
import { RecordPublisher, TranscriptTap } from './observe.js';
import { ConverseProcessor, VOICEMAIL_PATTERN } from './processors/converse.js';
import { hearing, TurnProcessor } from './processors/listen.js';
import { OutputProcessor } from './processors/output.js';
import { SentenceProcessor, TtsProcessor } from './processors/speak.js';
import { sentimentScore } from './sentiment.js';
import { CallTrace } from './tracing.js';
import type { LLM, STT, TTS, VAD, VadOptions } from './services.js';

export interface VoiceServices {
  llm: LLM;
  stt: STT;
  tts: TTS;
  vad: VAD;
}

export { DEFAULT_PRICING, type Pricing } from '../config/voice.js';

export interface ConversationOptions {
  services: VoiceServices;
  /** The template's flow (the voice engine reads no database: the caller supplies this). */
  loadFlow(templateId: string): Promise<Flow | undefined>;
  idleMs?: number;
  maxIdlePrompts?: number;
  maxCallMs?: number;
  vad?: Partial<VadOptions>;
  pricing?: Pricing;
}

type EndedBy = EndFrame['reason'];

export class ConversationAgent implements CallAgent {
  readonly label = 'flow';

  constructor(private readonly options: ConversationOptions) {}

  async converse(context: CallContext, io: CallIO): Promise<ConversationResult> {
    const o = this.options;
    const startedAt = performance.now();
    const flow = context.templateId ? await o.loadFlow(context.templateId) : undefined;
    if (!flow) {
      io.hangup();
      return { outcome: 'error', metaData: { call_ended_by: 'error', errors: [`template ${context.templateId ?? '(none)'} was not found`] } };
    }
    const variables: Record<string, unknown> = {
      call_id: context.callId,
      from_number: context.ourNumber,
      to_number: context.theirNumber,
      call_direction: context.direction,
      ...context.payload,
    };
    const callTrace = new CallTrace(context.traceContext, { stt: o.services.stt.label, tts: o.services.tts.label });
    // The flow engine's LLM requests and hooks belong to the turn being run (`converse` is set below).
    let converse: ConverseProcessor | undefined;
    const session = createFlowSession(flow, {
      llm: o.services.llm,
      variables,
      ...(callTrace.recording ? { traceParent: () => callTrace.context(converse?.currentTurn) } : {}),
    });
    const metrics = new ConversationMetrics(callTrace.recording ? (turn, latencyMs, overheadMs) => callTrace.latency(turn, latencyMs, overheadMs) : undefined);
    const errors: string[] = [];
    const dtmf: string[] = [];
    let spokenCharacters = 0;
    let endedBy: EndedBy | undefined;
    let giveUpOutcome: string | undefined;
    let transferredTo: string | undefined;
    let resolveEnd!: () => void;
    const over = new Promise<void>((r) => (resolveEnd = r));
    const finish = (by: EndedBy) => {
      if (endedBy) return;
      endedBy = by;
      resolveEnd();
    };

    const sttFailed = (message: string) => {
      errors.push(message);
      finish('error');
    };
    const { vad, stt } = hearing(o.services, io.sampleRateHz, sttFailed, o.vad);
    converse = new ConverseProcessor(session, metrics, {
      onNodeSettings: (settings) => vad.setEndOfSpeech(settings.endOfSpeechMs),
      idleMs: o.idleMs ?? 8000,
      maxIdlePrompts: o.maxIdlePrompts ?? 2,
      voicemail: context.voicemailDetection === false ? undefined : VOICEMAIL_PATTERN,
      onGiveUp: (reason) => {
        if (reason === 'voicemail') giveUpOutcome = 'voicemail';
        finish(reason === 'voicemail' ? 'agent' : 'timeout');
      },
      ...(callTrace.recording ? { trace: callTrace } : {}),
    });
    const processors: FrameProcessor[] = [
      vad,
      stt,
      ...(io.observe ? [new TranscriptTap(io.observe)] : []),
      new TurnProcessor(),
      converse,
      new SentenceProcessor(),
      new TtsProcessor(
        o.services.tts,
        io.sampleRateHz,
        metrics,
        (err, text) => {
          errors.push(`text-to-speech failed for "${text.slice(0, 40)}": ${(err as Error).message}`);
        },
        callTrace.recording ? callTrace : undefined,
      ),
      new OutputProcessor(io, metrics, {
        spoke: (turn, text) => {
          spokenCharacters += text.length;
          callTrace.heard(turn, text);
        },
        turnOver: (turn, interrupted) => callTrace.endTurn(turn, { interrupted, node: session.currentNode }),
        ended: () => finish('agent'),
        transferred: (to) => {
          transferredTo = to;
          finish('transfer');
        },
      }),
    ];
    const pipeline = new Pipeline(processors, {
      onError: (err, p) => {
        errors.push(`${p.name}: ${(err as Error).message}`);
        finish('error');
      },
    });

    // Media clock: a frame handled more than one frame (plus 20 ms) behind its time is late. Its time
    // is the transport's timestamp when it gives one (relative to the first frame's), else the
    // steady 20 ms pace of the audio received so far.
    let firstFrameAt: number | undefined;
    let firstTimestampMs: number | undefined;
    let mediaMs = 0;
    let frames = 0;
    let lateFrames = 0;
    io.onAudio((pcm, timestampMs) => {
      const now = performance.now();
      firstFrameAt ??= now;
      if (timestampMs !== undefined) firstTimestampMs ??= timestampMs;
      const frameMs = (pcm.length * 1000) / io.sampleRateHz;
      const dueMs = timestampMs !== undefined && firstTimestampMs !== undefined ? timestampMs - firstTimestampMs : mediaMs;
      if (now - (firstFrameAt + dueMs) > frameMs + 20) lateFrames++;
      mediaMs += frameMs;
      frames++;
      pipeline.send(frame({ kind: 'input_audio' as const, pcm, sampleRateHz: io.sampleRateHz }));
    });
    io.onDtmf((digit) => {
      dtmf.push(digit);
      pipeline.sendTo(converse, frame({ kind: 'dtmf' as const, digit }));
    });
    if (io.signal.aborted) finish('customer');
    else io.signal.addEventListener('abort', () => finish('customer'), { once: true });
    const maxCall = setTimeout(() => finish('timeout'), o.maxCallMs ?? 30 * 60_000);
    maxCall.unref?.();

    const publisher = io.observe ? new RecordPublisher(session.record, io.observe) : undefined;
    pipeline.send(frame({ kind: 'start' as const }));
    await over;
    clearTimeout(maxCall);
    publisher?.close();
    pipeline.send(frame({ kind: 'end' as const, reason: endedBy! }));
    callTrace.close(session.currentNode);
    if (endedBy !== 'customer' && endedBy !== 'transfer' && !io.signal.aborted) io.hangup();

    const record = session.record;
    const userWords = record.transcription.filter((t) => t.role === 'user').map((t) => t.content);
    const sentiment = sentimentScore(userWords);
    const minutes = (performance.now() - startedAt) / 60_000;
    const pricing = o.pricing ?? DEFAULT_PRICING;
    const cost =
      minutes * (pricing.telephonyPerMinute + pricing.sttPerMinute) +
      (record.usage.promptTokens * pricing.llmInputPerMillionTokens + record.usage.completionTokens * pricing.llmOutputPerMillionTokens) / 1e6 +
      (spokenCharacters * pricing.ttsPerMillionCharacters) / 1e6;
    const traceScores: Record<string, number> = {
      interruptions: metrics.interruptions,
      turns: metrics.turnLatenciesMs.length,
      media_frames: frames,
      media_frames_late: lateFrames,
      output_frames: metrics.outputFrames,
      output_frames_late: metrics.outputFramesLate,
    };
    const p50 = percentile(metrics.turnLatenciesMs, 50);
    const p95 = percentile(metrics.turnLatenciesMs, 95);
    if (p50 !== undefined) traceScores.turn_latency_p50_ms = Math.round(p50);
    if (p95 !== undefined) traceScores.turn_latency_p95_ms = Math.round(p95);
    if (sentiment !== undefined) traceScores.sentiment = sentiment;
    return {
      outcome: giveUpOutcome ?? record.outcome ?? (endedBy === 'timeout' ? 'no_response' : undefined),
      sentiment,
      cost: Math.round(cost * 10_000) / 10_000,
      traceScores,
      metaData: {
        agent: this.label,
        transcription: record.transcription,
        node_traversal: record.node_traversal,
        function_calls: record.function_calls,
        call_ended_by: endedBy,
        errors: [...record.errors, ...errors],
        usage: record.usage,
        turn_latency_ms: metrics.turnLatenciesMs.map(Math.round),
        turn_overhead_ms: metrics.turnOverheadsMs.map((v) => Math.round(v * 10) / 10),
        ...(dtmf.length ? { dtmf: dtmf.join('') } : {}),
        ...(transferredTo ? { transfer_number: transferredTo } : {}),
      },
    };
  }
}

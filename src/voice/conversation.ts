/**
 * The template-driven agent: one pipeline per call
 *   caller audio -> VAD (barge-in) -> STT -> turns -> flow engine + LLM -> sentences -> TTS -> playout
 * and the call record it leaves: transcript, node traversal, function calls, errors, who ended the
 * call, outcome, sentiment, cost, and trace scores (turn latency, interruptions).
 */
import { DEFAULT_PRICING, type Pricing } from '../config/voice.js';
import type { OutboundFetch } from '../lib/outbound/index.js';
import type { Flow } from './flow/schema.js';
import { recordingAt, type CallAgent, type CallContext, type CallIO, type ConversationResult } from './agent.js';
import { createFlowSession } from './flow/index.js';
import { conversationCost, conversationOutcome, flowMetaData, flowVariables, postCallAnalysis, traceScores } from './result.js';
import { frame, type EndFrame } from './frames.js';
import { ConversationMetrics } from './metrics.js';
import { Pipeline, type FrameProcessor } from './pipeline.js';
import { RecordPublisher, TranscriptTap } from './observe.js';
import { ConverseProcessor, VOICEMAIL_PATTERN } from './processors/converse.js';
import { hearing, type SttFallback } from './processors/listen.js';
import { TurnTakingProcessor } from './processors/turns.js';
import type { BargeInRecord, EndOfTurn, TurnDecisionRecord } from './turns/index.js';
import { resolveTurnTaking, vadOptionsFor, type TurnTakingSettings } from './turns/settings.js';
import { OutputProcessor } from './processors/output.js';
import { SentenceProcessor, TtsProcessor } from './processors/speak.js';
import { sentimentScore } from './sentiment.js';
import { CallTrace } from './tracing.js';
import { substitute } from './flow/substitute.js';
import { dropVoicemail, type VoicemailRecord } from './voicemail/drop.js';
import { speakDisclosure } from './disclosure.js';
import { resample } from '../lib/audio.js';
import { PcmRing } from '../lib/pcm-buffers.js';
import { MediaClock } from './media-clock.js';
import type { KnowledgeChunk, LLM, STT, TTS, VAD, VadOptions } from './services.js';
import type { AgentChoice } from './agent-choice.js';
import type { WarmTransferRun } from './flow/types.js';
import { consultHuman } from './warm-transfer.js';

export interface VoiceServices {
  llm: LLM;
  stt: STT;
  tts: TTS;
  vad: VAD;
  /** The voice of each template language that does not speak with `tts` (agent.language_voices; voice/language.ts). */
  voices?: Record<string, TTS>;
  /** The services with a template's choices (voice, model, temperature, language) over these defaults. */
  choose?(choice: AgentChoice): VoiceServices;
}

/** The voice of the call's current language: its own (agent.language_voices), else the call's. */
export function voiceOf(services: Pick<VoiceServices, 'tts' | 'voices'>, language: string | undefined): TTS {
  return (language && services.voices?.[language]) || services.tts;
}

/** What the agent runs of a template: its flow, and its choices of the AI services (none: the defaults). */
export interface AgentTemplate {
  flow: Flow;
  agent?: AgentChoice | null;
}

export { DEFAULT_PRICING, type Pricing } from '../config/voice.js';

/** What running a template's flow needs, whichever agent carries the call (the chat pipeline or a realtime model). */
export interface FlowParts {
  /** The template's flow and agent choices (the voice engine reads no database: the caller supplies this). */
  loadTemplate(templateId: string): Promise<AgentTemplate | undefined>;
  /** The template's knowledge base (its documents and its reseller's shared ones), for the built-in search_knowledge. */
  searchKnowledge?(templateId: string, query: string): Promise<KnowledgeChunk[]>;
  /** Template hooks are sent through it: the outbound URL policy's fetch (default: the strict policy). */
  hookFetch?: OutboundFetch;
  pricing?: Pricing;
  idleMs?: number;
  maxIdlePrompts?: number;
  maxCallMs?: number;
  /** How long the post-call analysis may take before the call's result goes without it (default 20 s). */
  analysisTimeoutMs?: number;
}

export interface ConversationOptions extends FlowParts {
  services: VoiceServices;
  /** The end-of-turn judge of adaptive mode (a learned model); by default the rules with each node's waits. */
  endOfTurn?: EndOfTurn;
  vad?: Partial<VadOptions>;
}

type EndedBy = EndFrame['reason'];

export class ConversationAgent implements CallAgent {
  readonly label = 'flow';

  constructor(private readonly options: ConversationOptions) {}

  /** Warms the LLM's and TTS's connections while the call rings (unless the template keeps the plain VAD pipeline). */
  async prepare(context: CallContext): Promise<void> {
    try {
      const template = context.templateId ? await this.options.loadTemplate(context.templateId) : undefined;
      if (!template) return;
      const { flow } = template;
      const initial = flow.nodes.find((n) => n.node_name === flow.initial_node);
      if (resolveTurnTaking(flow.turn_taking, initial?.turn_taking).mode !== 'adaptive') return;
      const services = servicesOf(this.options.services, template.agent);
      await Promise.all([services.llm.warm?.(), services.tts.warm?.()]);
    } catch {
      /* the call goes on cold */
    }
  }

  async converse(context: CallContext, io: CallIO): Promise<ConversationResult> {
    const o = this.options;
    const startedAt = performance.now();
    const template = context.templateId ? await o.loadTemplate(context.templateId) : undefined;
    if (!template) {
      io.hangup();
      return { outcome: 'error', metaData: { call_ended_by: 'error', errors: [`template ${context.templateId ?? '(none)'} was not found`] } };
    }
    const { flow } = template;
    const services = servicesOf(o.services, template.agent);
    const variables = flowVariables(context);
    const leaveMessage = context.voicemail?.action === 'leave_message' && context.voicemailDetection !== false;
    // A machine the provider detected: no conversation, only the message.
    if (context.machine && leaveMessage) return this.leaveMessage(services.tts, context, io, variables, 'provider');
    // The disclosure goes first, whole: the pipeline (and with it barge-in) starts once it is over.
    const disclosure = await speakDisclosure(context, io, (text, signal) => this.synthesize(services.tts, text, signal, io.sampleRateHz));
    if (disclosure && !disclosure.heard) {
      const errors = disclosure.record.error ? [disclosure.record.error] : [];
      return { metaData: { agent: this.label, transcription: [disclosure.line], disclosure: disclosure.record, call_ended_by: io.signal.aborted && !errors.length ? 'customer' : 'agent', errors } };
    }
    const callTrace = new CallTrace(context.traceContext, { stt: services.stt.label, tts: services.tts.label });
    // The flow engine's LLM requests and hooks belong to the turn being run (`converse` is set below).
    let converse: ConverseProcessor | undefined;
    // The template's languages: a switch reopens the speech-to-text in the new one and gives the backchannels its lexicon.
    const languages = template.agent?.languages ?? [];
    let switchHearing: ((language: string) => void) | undefined;
    const session = createFlowSession(flow, {
      llm: services.llm,
      variables,
      ...(o.hookFetch ? { fetch: o.hookFetch } : {}),
      ...(context.optOut ? { optOut: true } : {}),
      ...(io.sendDigits ? { sendDigits: (digits: string) => io.sendDigits!(digits) } : {}),
      ...(io.recordingMs ? { recordingMs: () => io.recordingMs!() } : {}),
      ...(context.timeZone ? { timeZone: context.timeZone } : {}),
      ...(o.searchKnowledge && context.templateId ? { searchKnowledge: (query: string) => o.searchKnowledge!(context.templateId!, query) } : {}),
      ...(callTrace.recording ? { traceParent: () => callTrace.context(converse?.currentTurn) } : {}),
      ...(languages.length ? { languages, onLanguage: (language: string) => switchHearing?.(language) } : {}),
      ...(io.consult ? { warmTransfer: (run: WarmTransferRun) => consultHuman(io, services, run) } : {}),
    });
    /** The node's turn-taking, its backchannels in the call's language when the template declares languages. */
    const inLanguage = (settings: TurnTakingSettings): TurnTakingSettings => (session.languages?.current ? { ...settings, language: session.languages.current } : settings);
    const metrics = new ConversationMetrics(callTrace.recording ? (turn, latencyMs, overheadMs) => callTrace.latency(turn, latencyMs, overheadMs) : undefined);
    const errors: string[] = [];
    const dtmf: string[] = [];
    let spokenCharacters = 0;
    let endedBy: EndedBy | undefined;
    let giveUpOutcome: string | undefined;
    let voicemailHeard = false;
    /** The caller's last few seconds, for a beep that came while the greeting's words were being transcribed. */
    const recent = leaveMessage ? new PcmRing((io.sampleRateHz * 4000) / 1000) : undefined;
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
    const initial = inLanguage(session.nodeSettings.turnTaking);
    /** The switch to the second speech-to-text service, when the first failed (metaData.stt_fallback). */
    let sttFallback: (SttFallback & { at_ms?: number }) | undefined;
    const { vad, stt } = hearing(
      services,
      io.sampleRateHz,
      sttFailed,
      { ...o.vad, ...vadOptionsFor(initial) },
      {
        ...(languages[0] ? { language: languages[0] } : {}),
        ...(template.agent?.detect_language ? { detect: languages } : {}),
      },
      (fallback) => (sttFallback ??= { ...fallback, ...recordingAt(io.recordingMs?.()) }),
    );
    // Warm connections: the LLM's and TTS's are opened when the call is answered and kept open while
    // the caller speaks, so no reply (the first included) waits for a handshake.
    let warmedAt = -Infinity;
    const warm = () => {
      if (session.nodeSettings.turnTaking.mode !== 'adaptive' || performance.now() - warmedAt < 2000) return;
      warmedAt = performance.now();
      void services.llm.warm?.();
      void services.tts.warm?.();
    };
    warm();
    const decisions: TurnDecisionRecord[] = [];
    const bargeIns: BargeInRecord[] = [];
    if (o.endOfTurn?.wants?.audioMs) vad.keepAudio(o.endOfTurn.wants.audioMs);
    const turns = new TurnTakingProcessor({
      settings: initial,
      ...(o.endOfTurn ? { endOfTurn: o.endOfTurn } : {}),
      conversation: () => session.record.transcription,
      interimResults: services.stt.interimResults,
      agentSaid: () => [...session.record.transcription].reverse().find((t) => t.role === 'assistant')?.content,
      onTurn: (record) => decisions.push(record),
      onSpeech: warm,
      onBargeIn: (record) => {
        bargeIns.push(record);
        callTrace.bargeIn(record.kind, record.text, record.after_ms);
      },
    });
    switchHearing = (language) => {
      stt.switchLanguage(language);
      turns.update(inLanguage(session.nodeSettings.turnTaking));
    };
    const sentences = new SentenceProcessor(initial.firstClause);
    converse = new ConverseProcessor(session, metrics, {
      onNodeSettings: (settings) => {
        vad.update(vadOptionsFor(settings.turnTaking));
        turns.update(inLanguage(settings.turnTaking));
        sentences.firstClause = settings.turnTaking.firstClause;
      },
      idleMs: o.idleMs ?? 8000,
      maxIdlePrompts: o.maxIdlePrompts ?? 2,
      voicemail: context.voicemailDetection === false ? undefined : VOICEMAIL_PATTERN,
      onGiveUp: (reason) => {
        if (reason === 'voicemail' && leaveMessage) voicemailHeard = true;
        else if (reason === 'voicemail') giveUpOutcome = 'voicemail';
        finish(reason === 'voicemail' ? 'agent' : 'timeout');
      },
      ...(callTrace.recording ? { trace: callTrace } : {}),
    });
    const processors: FrameProcessor[] = [
      vad,
      stt,
      ...(io.observe ? [new TranscriptTap(io.observe)] : []),
      turns,
      converse,
      sentences,
      new TtsProcessor(
        services.tts,
        io.sampleRateHz,
        metrics,
        (err, text) => {
          errors.push(`text-to-speech failed for "${text.slice(0, 40)}": ${(err as Error).message}`);
        },
        callTrace.recording ? callTrace : undefined,
        (language) => voiceOf(services, language),
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

    const clock = new MediaClock(io.sampleRateHz);
    io.onAudio((pcm, timestampMs) => {
      clock.arrived(pcm.length, timestampMs);
      recent?.append(pcm);
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

    if (disclosure) session.record.transcription.unshift(disclosure.line);
    const publisher = io.observe ? new RecordPublisher(session.record, io.observe, 150, disclosure ? 1 : 0) : undefined;
    pipeline.send(frame({ kind: 'start' as const }));
    await over;
    clearTimeout(maxCall);
    publisher?.close();
    pipeline.send(frame({ kind: 'end' as const, reason: endedBy! }));
    callTrace.close(session.currentNode);
    if (voicemailHeard) {
      // The agent's words queued for the greeting are dropped; the message goes after the beep.
      io.clear();
      return this.leaveMessage(services.tts, context, io, variables, 'first_words', recent?.last(), session.record.transcription);
    }
    if (endedBy !== 'customer' && endedBy !== 'transfer' && !io.signal.aborted) io.hangup();

    const record = session.record;
    const analysis = await postCallAnalysis(services.llm, flow, record, errors, o.analysisTimeoutMs);
    const userWords = record.transcription.filter((t) => t.role === 'user').map((t) => t.content);
    const sentiment = sentimentScore(userWords);
    const minutes = (performance.now() - startedAt) / 60_000;
    const cost = conversationCost(o.pricing ?? DEFAULT_PRICING, { minutes, usage: record.usage, spokenCharacters });
    return {
      outcome: conversationOutcome(record, endedBy, giveUpOutcome),
      sentiment,
      cost,
      traceScores: traceScores({
        interruptions: metrics.interruptions,
        turnLatenciesMs: metrics.turnLatenciesMs,
        mediaFrames: clock.frames,
        mediaFramesLate: clock.late,
        outputFrames: metrics.outputFrames,
        outputFramesLate: metrics.outputFramesLate,
        sentiment,
      }),
      metaData: {
        agent: this.label,
        ...flowMetaData(record, { disclosure: disclosure?.record, endedBy, errors, turnLatenciesMs: metrics.turnLatenciesMs, dtmf, analysis, transferredTo }),
        turn_taking: { mode: initial.mode, turns: decisions, barge_ins: bargeIns },
        turn_overhead_ms: metrics.turnOverheadsMs.map((v) => Math.round(v * 10) / 10),
        ...(sttFallback ? { stt_fallback: sttFallback } : {}),
      },
    };
  }

  /** Whole words from the TTS, at the call's rate (a disclosure, a voicemail message). */
  private async synthesize(tts: TTS, text: string, signal: AbortSignal, sampleRateHz: number): Promise<Int16Array> {
    const chunks: Int16Array[] = [];
    for await (const chunk of tts.synthesize(text, { signal })) chunks.push(chunk);
    const pcm = new Int16Array(chunks.reduce((n, c) => n + c.length, 0));
    let at = 0;
    for (const c of chunks) (pcm.set(c, at), (at += c.length));
    return resample(pcm, tts.sampleRateHz, sampleRateHz);
  }

  /** A machine answered and a message is to be left: wait for the beep, speak it, hang up. */
  private async leaveMessage(
    tts: TTS,
    context: CallContext,
    io: CallIO,
    variables: Record<string, unknown>,
    detectedBy: VoicemailRecord['detected_by'],
    heardBefore?: Int16Array,
    transcription: Array<{ role: 'user' | 'assistant'; content: string; at_ms?: number }> = [],
  ): Promise<ConversationResult> {
    const errors: string[] = [];
    const message = substitute(context.voicemail?.message ?? '', variables, (name) => errors.push(`no value for {${name}}`));
    const { outcome, record, transcript } = await dropVoicemail({
      io,
      message,
      detectedBy,
      ...(context.machine?.greetingEnded || context.machine?.detectionMs !== undefined
        ? { providerEnd: { ...(context.machine.greetingEnded ? { how: context.machine.greetingEnded } : {}), ...(context.machine.detectionMs !== undefined ? { detectionMs: context.machine.detectionMs } : {}) } }
        : {}),
      ...(heardBefore ? { heardBefore } : {}),
      speak: (text, signal) => this.synthesize(tts, text, signal, io.sampleRateHz),
    });
    if (record.error) errors.push(record.error);
    transcription.push(...transcript);
    return {
      outcome,
      metaData: { agent: this.label, transcription, call_ended_by: io.signal.aborted && !record.message_played ? 'customer' : 'agent', voicemail: record, errors },
    };
  }
}

/** The call's services: the template's choices over the defaults (providers/choices.ts decides how). */
export function servicesOf(services: VoiceServices, choice: AgentChoice | null | undefined): VoiceServices {
  return choice && services.choose ? services.choose(choice) : services;
}

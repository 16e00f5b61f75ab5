/**
 * A template's flow carried by a realtime speech-to-speech model (the OpenAI Realtime API, Gemini Live): the
 * caller's audio goes to the model as it comes, the model's voice activity detection takes the
 * turns, and its audio is played as it streams. The flow engine runs as it does on the chat
 * pipeline (nodes, functions, hooks, transitions, actions, variables, the record), with the model
 * as its LLM (brain.ts): a transition sends the new node's instructions and tools in a
 * `session.update`. Lines the flow speaks itself (tts_say, an apology) go through the TTS (lines.ts).
 *
 * Barge-in: when the caller starts speaking over the agent's audio, the playout is cleared, the
 * model's item is truncated at the audio the caller heard (`audio_end_ms`), and the transcript
 * keeps the words of that share (of a reply still streaming, once the model ends it). A session that fails (an error answering a request, the socket
 * closing) ends the call with the error recorded, after an apology; a model that cannot be reached
 * at the start hands the call to the chat pipeline when one is configured.
 *
 * Languages (a template's `agent.languages`, voice/language.ts): the flow engine keeps the call's
 * language, marks the transcript and records the switches as on the chat pipeline; the brain
 * sends the language with the session's config, so a switch updates the session's instructions
 * (the language line), its transcription language and, where the provider can, its voice.
 *
 * Warm transfer (a function's `warm_transfer`, where the transport can call a second leg): as on
 * the chat pipeline (warm-transfer.ts), the flow's hold message is spoken by the TTS, the human is
 * called, briefed by the TTS and heard by the speech-to-text. The customer is on hold meanwhile:
 * their audio does not reach the model, which would otherwise answer it over the hold. The human
 * who accepts is bridged and the session closes; a decline gives the call back to the model.
 */
import { DEFAULT_PRICING } from '../../config/voice.js';
import type { CallAgent, CallContext, CallIO, ConversationResult } from '../agent.js';
import { createFlowSession } from '../flow/index.js';
import type { Flow } from '../flow/schema.js';
import { servicesOf, voiceOf, type FlowParts, type VoiceServices } from '../conversation.js';
import type { AgentAction, WarmTransferRun } from '../flow/types.js';
import { keypressText, VOICEMAIL_PATTERN } from '../processors/converse.js';
import { RecordPublisher } from '../observe.js';
import { conversationCost, conversationOutcome, flowMetaData, flowVariables, postCallAnalysis, traceScores } from '../result.js';
import { sentimentScore } from '../sentiment.js';
import { speakDisclosure } from '../disclosure.js';
import { consultHuman } from '../warm-transfer.js';
import { MediaClock } from '../media-clock.js';
import type { LLM, RealtimeEvent, RealtimeModel, RealtimeSession } from '../services.js';
import { RealtimeBrain } from './brain.js';
import { Playout } from './playout.js';
import { SpokenLines } from './lines.js';

/**
 * The flow's parts as for the chat pipeline. The realtime model is the deployment's; the flow's own
 * lines speak in the template's voice choices (its voice, and each language's) as on the chat pipeline.
 */
export interface RealtimeAgentOptions extends FlowParts {
  model: RealtimeModel;
  /** Their voices (`tts`, `voices`, `choose`) speak the flow's own lines (tts_say, the disclosure, an apology). */
  services: VoiceServices;
  temperature?: number;
  /** The chat LLM: runs the template's post-call analysis and writes a warm transfer's briefing; none: the analysis is skipped and the briefing is the template's or the fixed sentence. */
  chatLlm?: LLM;
  /** Takes a call the realtime model cannot (it does not connect, a machine to leave a message on). */
  fallback?: CallAgent;
}

/** How long after the end of the caller's turn its transcription may come. */
const TRANSCRIPT_WAIT_MS = 5000;

type EndedBy = 'agent' | 'customer' | 'timeout' | 'error' | 'transfer';

/** One barge-in: the model's item cut at what the caller heard of it. */
export interface Truncation {
  item_id: string;
  audio_end_ms: number;
  audio_sent_ms: number;
}

export class RealtimeAgent implements CallAgent {
  readonly label = 'realtime';
  /** The flow's own lines, kept for the calls that say them again. */
  private readonly lines: SpokenLines;

  constructor(private readonly options: RealtimeAgentOptions) {
    this.lines = new SpokenLines();
  }

  async converse(context: CallContext, io: CallIO): Promise<ConversationResult> {
    const o = this.options;
    const startedAt = performance.now();
    const template = context.templateId ? await o.loadTemplate(context.templateId) : undefined;
    const flow = template?.flow;
    if (!flow) {
      io.hangup();
      return { outcome: 'error', metaData: { call_ended_by: 'error', errors: [`template ${context.templateId ?? '(none)'} was not found`] } };
    }
    const leaveMessage = context.voicemail?.action === 'leave_message' && context.voicemailDetection !== false;
    if (context.machine && leaveMessage && o.fallback) return o.fallback.converse(context, io);
    const errors: string[] = [];
    /** What the turn in hand put on the call, in order, for what a barge-in leaves of it. */
    let turnLines: Array<{ responseId: string } | { text: string; heard: boolean }> = [];
    // The template's languages: a switch changes the session's instructions, transcription language and (where it can) voice.
    const languages = template.agent?.languages ?? [];
    let session: ReturnType<typeof createFlowSession> | undefined;
    /** A warm transfer is consulting the human: the customer's audio is not the model's. */
    let onHold = false;
    const brain = new RealtimeBrain(o.model.label, o.model.model, {
      ...(o.temperature !== undefined ? { temperature: o.temperature } : {}),
      onDelivered: (responseId) => turnLines.push({ responseId }),
      ...(languages.length ? { language: () => session?.languages?.current ?? languages[0] } : {}),
    });
    let rt: RealtimeSession;
    try {
      rt = await o.model.connect({ signal: io.signal, sampleRateHz: io.sampleRateHz, config: { instructions: '', tools: [], ...(languages[0] ? { language: languages[0] } : {}) } });
    } catch (err) {
      const message = `realtime model ${o.model.model} failed to connect: ${(err as Error).message}`;
      if (o.fallback && !io.signal.aborted) {
        const result = await o.fallback.converse(context, io);
        const before = Array.isArray(result.metaData.errors) ? (result.metaData.errors as string[]) : [];
        return { ...result, metaData: { ...result.metaData, errors: [message, ...before] } };
      }
      if (!io.signal.aborted) io.hangup();
      return { outcome: 'error', metaData: { agent: this.label, call_ended_by: io.signal.aborted ? 'customer' : 'error', errors: [message] } };
    }
    brain.attach(rt);

    // The flow's own lines in the voice of the call's language, as the template chose them.
    const voices = servicesOf(o.services, template.agent);
    const speak = (text: string, signal: AbortSignal): Promise<Int16Array> => this.lines.speak(voiceOf(voices, session?.languages?.current), text, io.sampleRateHz, signal);
    const disclosure = await speakDisclosure(context, io, speak);
    if (disclosure && !disclosure.heard) {
      await rt.close();
      const failed = disclosure.record.error ? [disclosure.record.error] : [];
      return { metaData: { agent: this.label, transcription: [disclosure.line], disclosure: disclosure.record, call_ended_by: io.signal.aborted && !failed.length ? 'customer' : 'agent', errors: failed } };
    }

    session = createFlowSession(flow, {
      llm: brain,
      ...(o.chatLlm ? { writer: o.chatLlm } : {}),
      variables: flowVariables(context),
      ...(o.hookFetch ? { fetch: o.hookFetch } : {}),
      ...(context.optOut ? { optOut: true } : {}),
      ...(io.sendDigits ? { sendDigits: (digits: string) => io.sendDigits!(digits) } : {}),
      ...(io.recordingMs ? { recordingMs: () => io.recordingMs!() } : {}),
      ...(context.timeZone ? { timeZone: context.timeZone } : {}),
      ...(o.searchKnowledge && context.templateId ? { searchKnowledge: (query: string) => o.searchKnowledge!(context.templateId!, query) } : {}),
      ...(languages.length ? { languages } : {}),
      ...(io.consult
        ? {
            warmTransfer: async (warm: WarmTransferRun) => {
              onHold = true;
              try {
                return await consultHuman(io, { tts: voiceOf(voices, session?.languages?.current), stt: voices.stt }, warm);
              } finally {
                onHold = false;
              }
            },
          }
        : {}),
    });

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

    const playout = new Playout(io, () => armIdle());
    const truncations: Truncation[] = [];
    const dtmf: string[] = [];
    const turnLatenciesMs: number[] = [];
    let speechStoppedAt: number | undefined;
    let interruptions = 0;
    let spokenCharacters = 0;
    let failed = false;
    const drained = () => playout.drained();

    // The flow's turns, one after another; `running` is the one in hand.
    let work: Promise<void> = Promise.resolve();
    let running: AbortController | undefined;
    let ended = false;
    const run = (actions: (signal: AbortSignal) => AsyncIterable<AgentAction>) => {
      work = work.then(async () => {
        if (ended || endedBy) return;
        const controller = new AbortController();
        running = controller;
        turnLines = [];
        try {
          for await (const action of actions(controller.signal)) {
            if (controller.signal.aborted) break;
            if (action.type === 'say') {
              if (action.voiced) continue;
              const line = { text: action.text, heard: false };
              turnLines.push(line);
              brain.spokeLocally(action.text);
              spokenCharacters += action.text.length;
              try {
                playout.play(await speak(action.text, controller.signal), (yes) => (line.heard = yes));
              } catch (err) {
                if (!controller.signal.aborted) errors.push(`text-to-speech failed for "${action.text.slice(0, 40)}": ${(err as Error).message}`);
              }
            } else {
              ended = true;
              await drained();
              if (action.type === 'end') finish('agent');
              else if (action.bridged) {
                // A warm transfer's human accepted: the calls are joined already.
                transferredTo = action.to;
                finish('transfer');
              } else {
                try {
                  await io.transfer(action.to);
                  transferredTo = action.to;
                  finish('transfer');
                } catch {
                  finish('agent');
                }
              }
            }
          }
        } finally {
          if (running === controller) running = undefined;
        }
        if (!playout.playing) armIdle();
        // A session that failed ends the call once the apology was heard.
        if (failed) {
          await drained();
          finish('error');
        }
      });
    };

    // Idle: the caller said nothing for the node's idle time after the agent stopped.
    let idleTimer: NodeJS.Timeout | undefined;
    let idlePrompts = 0;
    const stopIdle = () => {
      clearTimeout(idleTimer);
      idleTimer = undefined;
    };
    let callerSpeaking = false;
    /** Armed when all is quiet: the agent's audio played, no turn in hand, the caller not speaking. */
    const armIdle = () => {
      stopIdle();
      if (ended || endedBy || callerSpeaking || running || playout.playing) return;
      idleTimer = setTimeout(() => {
        if (idlePrompts >= (o.maxIdlePrompts ?? 2)) return finish('timeout');
        idlePrompts++;
        run((signal) => session.idle(signal));
      }, session.nodeSettings.idleMs ?? o.idleMs ?? 8000);
      idleTimer.unref?.();
    };

    const bargeIn = () => {
      if (!playout.playing) return;
      interruptions++;
      let delivered = false;
      let finishing = false;
      for (const cut of playout.interrupt()) {
        rt.truncate(cut.itemId, cut.playedMs);
        truncations.push({ item_id: cut.itemId, audio_end_ms: Math.round(cut.playedMs), audio_sent_ms: Math.round(cut.sentMs) });
        delivered = brain.cut(cut.responseId, cut.sentMs > 0 ? cut.playedMs / cut.sentMs : 0) || delivered;
        finishing ||= brain.finishing(cut.responseId);
      }
      // A reply still streaming when the caller spoke ends (cancelled) with the words they heard:
      // the turn waiting for it takes them. Otherwise the turn in hand stops.
      if (!finishing) running?.abort();
      // The turn whose words the engine holds keeps only what the caller heard of them.
      if (delivered) {
        const lines = turnLines;
        work = work.then(() => session.interrupted(lines.map((l) => ('responseId' in l ? brain.heardText(l.responseId) : l.heard ? l.text : '')).filter(Boolean).join(' ')));
      }
    };

    const fatal = (message: string) => {
      if (failed) return;
      failed = true;
      errors.push(message);
      brain.fail(message);
      // No turn in hand to end the call after its apology: end it now.
      work = work.then(async () => {
        await drained();
        finish('error');
      });
    };

    let userTurns = 0;
    /** The caller's turn in words: the flow answers it (the model's reply to it is already under way). */
    const callerSaid = (text: string) => {
      idlePrompts = 0;
      if (userTurns++ === 0 && context.voicemailDetection !== false && VOICEMAIL_PATTERN.test(text)) {
        giveUpOutcome = 'voicemail';
        return finish('agent');
      }
      brain.heardCaller();
      run((signal) => session.userTurn(text || '(inaudible)', signal));
    };
    // A caller's turn whose transcription does not come in time is taken without its words (the
    // flow must still answer the model's reply to it); a transcription that comes later is dropped.
    const awaitingWords = new Map<string, NodeJS.Timeout>();
    const givenUp = new Set<string>();
    rt.onEvent((e: RealtimeEvent) => {
      brain.event(e);
      switch (e.type) {
        case 'speech_started':
          callerSpeaking = true;
          stopIdle();
          bargeIn();
          break;
        case 'speech_stopped': {
          callerSpeaking = false;
          speechStoppedAt = performance.now();
          const itemId = e.itemId;
          if (itemId) {
            const timer = setTimeout(() => {
              awaitingWords.delete(itemId);
              givenUp.add(itemId);
              errors.push(`realtime model: no transcription of the caller's turn ${itemId} within ${TRANSCRIPT_WAIT_MS} ms`);
              callerSaid('');
            }, TRANSCRIPT_WAIT_MS);
            timer.unref?.();
            awaitingWords.set(itemId, timer);
          }
          break;
        }
        case 'audio': {
          if (endedBy || !playout.model(e.responseId, e.itemId, e.pcm)) return;
          if (speechStoppedAt !== undefined) {
            turnLatenciesMs.push(performance.now() - speechStoppedAt);
            speechStoppedAt = undefined;
          }
          stopIdle();
          break;
        }
        case 'user_transcript':
          if (givenUp.delete(e.itemId)) break;
          clearTimeout(awaitingWords.get(e.itemId));
          awaitingWords.delete(e.itemId);
          callerSaid(e.text);
          break;
        case 'error':
          // An error while a reply was asked for leaves the conversation without one; others are only recorded.
          if (brain.awaiting) fatal(`realtime model error: ${e.message}`);
          else errors.push(`realtime model error: ${e.message}`);
          break;
        case 'closed':
          if (e.error && !endedBy) fatal(`realtime model: ${e.error}`);
          break;
      }
    });
    const clock = new MediaClock(io.sampleRateHz);
    io.onAudio((pcm, timestampMs, mulaw) => {
      clock.arrived(pcm.length, timestampMs);
      if (!onHold) rt.appendAudio(pcm, mulaw);
    });
    io.onDtmf((digit) => {
      dtmf.push(digit);
      run((signal) => session.userTurn(keypressText(digit), signal));
    });
    if (io.signal.aborted) finish('customer');
    else io.signal.addEventListener('abort', () => finish('customer'), { once: true });
    const maxCall = setTimeout(() => finish('timeout'), o.maxCallMs ?? 30 * 60_000);
    maxCall.unref?.();

    if (disclosure) session.record.transcription.unshift(disclosure.line);
    const publisher = io.observe ? new RecordPublisher(session.record, io.observe, 150, disclosure ? 1 : 0) : undefined;
    run((signal) => session.start(signal));
    await over;
    ended = true;
    clearTimeout(maxCall);
    for (const timer of awaitingWords.values()) clearTimeout(timer);
    stopIdle();
    running?.abort();
    publisher?.close();
    await rt.close();
    if (endedBy !== 'customer' && endedBy !== 'transfer' && !io.signal.aborted) io.hangup();

    const record = session.record;
    const analysis = o.chatLlm ? await postCallAnalysis(o.chatLlm, flow, record, errors, o.analysisTimeoutMs) : undefined;
    const sentiment = sentimentScore(record.transcription.filter((t) => t.role === 'user').map((t) => t.content));
    const minutes = (performance.now() - startedAt) / 60_000;
    playout.close();
    return {
      outcome: conversationOutcome(record, endedBy, giveUpOutcome),
      sentiment,
      cost: conversationCost(o.pricing ?? DEFAULT_PRICING, { minutes, usage: record.usage, spokenCharacters, realtime: true }),
      traceScores: traceScores({ interruptions, turnLatenciesMs, mediaFrames: clock.frames, mediaFramesLate: clock.late, outputFrames: playout.outputFrames, outputFramesLate: playout.outputFramesLate, sentiment }),
      metaData: {
        agent: this.label,
        realtime: { model: o.model.model, truncations },
        ...flowMetaData(record, { disclosure: disclosure?.record, endedBy, errors, turnLatenciesMs, dtmf, analysis, transferredTo }),
      },
    };
  }
}

/**
 * npm run bench:turns: how well and how fast Dialer takes turns, on a corpus of scripted caller
 * behaviours (bench/turns/corpus.ts) played by the provider emulator's callees over Twilio's media
 * stream into live calls of `dialer serve`, with local speech-to-text, LLM and TTS servers that
 * answer at fixed latencies (bench/turns/far.ts). Each engine runs the whole corpus in its own
 * Dialer process (so no engine inherits another's warm connections): today's plain VAD pipeline
 * (the baseline, a template setting away) and the adaptive one. What is measured is what the callee
 * heard (bench/turns/measure.ts). Method and figures: docs/turn-taking.md.
 *
 *   npm run bench:turns                  every engine (the baseline, the realtime models, the language switch, the adaptive)
 *   ENGINES=adaptive npm run bench:turns one engine
 *   CALLS=6 npm run bench:turns          calls at once per engine (the corpus is split among them)
 *
 * The last line: `turns: false-end X%, false-barge-in Y%, missed-barge-in Z%, latency p50 A ms p95 B ms`
 * (the adaptive engine's, or the only engine run).
 */
import { fork, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { planCalls, type Behaviour } from './turns/corpus.js';
import type { CollectedCall, FarReply, FarRequest } from './turns/far.js';
import { DEEPGRAM_KEY, HANDSHAKE_MS, REALTIME } from './turns/setup.js';
import { measureCall, percentile, summarise, type Outcome, type Played } from './turns/measure.js';
import { startBenchDialer } from './lib/dialer.js';

const TWILIO = { accountSid: 'AC00000000000000000000000000000020', authToken: 'bench-turns-token' };
const CALLS = Number(process.env.CALLS ?? 8);

interface Engine {
  name: string;
  label: string;
  /** The flow node's turn-taking settings. */
  settings: Record<string, unknown>;
  /** The flow runs on the far side's realtime model (of this protocol) instead of the chat pipeline. */
  realtime?: 'openai' | 'gemini';
  /** The template's agent choice (its languages). */
  agent?: Record<string, unknown>;
  /** More of Dialer's environment. */
  env?: Record<string, string>;
}

const ALL_ENGINES: Engine[] = [
  { name: 'baseline', label: "today's engine, turn_taking.mode vad: VAD silence wait and the final words, barge-in on any speech", settings: { turn_taking: { mode: 'vad' } } },
  {
    name: 'realtime',
    label: `the flow on a realtime model (the OpenAI Realtime protocol, local: its VAD ends a turn after ${REALTIME.silenceMs} ms of quiet, first audio ${REALTIME.firstAudioMs} ms later; its own reply latency ${REALTIME.silenceMs + REALTIME.firstAudioMs} ms), Dialer relaying audio`,
    settings: {},
    realtime: 'openai',
  },
  {
    name: 'gemini',
    label: `the flow on Gemini Live (its protocol, local: its activity detection ends a turn after ${REALTIME.silenceMs} ms of quiet, first audio ${REALTIME.firstAudioMs} ms later; its own reply latency ${REALTIME.silenceMs + REALTIME.firstAudioMs} ms), Dialer relaying audio`,
    settings: {},
    realtime: 'gemini',
  },
  {
    name: 'language-switch',
    label:
      'the default engine on a template of two languages (en-US and es, as Deepgram names them; a voice each) with detect_language: the far side\'s multilingual stream names half the clips Spanish, so turns switch the call back and forth (the other voice, the LLM told the language; the multilingual stream goes on); backchannels are judged in the language the call is in',
    settings: {},
    agent: { languages: ['en-US', 'es'], language_voices: { es: 'openai:nova' }, detect_language: true },
    env: { DEEPGRAM_MODEL: 'nova-3' },
  },
  { name: 'adaptive', label: 'the default: barge-in confirmed by words, adaptive end of turn, speculative replies, warm connections, first clause', settings: {} },
];
const chosen = process.env.ENGINES?.split(',').map((s) => s.trim());
const ENGINES = ALL_ENGINES.filter((e) => !chosen || chosen.includes(e.name));

const far: ChildProcess = fork(path.join(import.meta.dirname, 'turns', 'far.ts'), [], { execArgv: ['--import', 'tsx'], env: { ...process.env, BENCH_TWILIO: JSON.stringify(TWILIO) } });
const farSend = (m: FarRequest) => far.send(m);
const farReply = <T extends FarReply['type']>(type: T) =>
  new Promise<Extract<FarReply, { type: T }>>((resolve, reject) => {
    const onMessage = (m: FarReply) => {
      if (m.type !== type) return;
      far.off('message', onMessage);
      resolve(m as Extract<FarReply, { type: T }>);
    };
    far.on('message', onMessage);
    far.once('exit', (code, signal) => reject(new Error(`the far side exited (${code ?? signal})`)));
  });
const ready = await farReply('ready');
const behaviours = ready.behaviours as Array<Played & Pick<Behaviour, 'afterAgentMs'>>;
const byId = new Map(behaviours.map((b) => [b.id, b]));

const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
const kinds = (k: Behaviour['kind']) => behaviours.filter((b) => b.kind === k).length;
process.stdout.write(
  `bench:turns: ${behaviours.length} caller behaviours (${kinds('pause')} pauses inside an utterance, ${kinds('complete')} complete answers, ${kinds('continued')} complete then more, ` +
    `${kinds('backchannel')} backchannels, ${kinds('interruption')} interruptions, ${kinds('noise')} noises) in ${CALLS} calls at once per engine; ` +
    `services: STT final 150 ms after speech, LLM first token 350 ms, TTS first audio 120 ms (sum 620 ms), ${HANDSHAKE_MS} ms handshake per new connection; ` +
    `${os.cpus().length} CPUs, load average ${load()}\n`,
);

interface Run {
  engine: Engine;
  outcomes: Outcome[];
  greetingMs: number[];
  tokenToAudioMs: number[];
  llmRequests: number;
  llmCancelled: number;
  cancelledChunks: number;
  loadAtEnd: string;
  /** The language-switch engine's: the switches its calls made, from their records. */
  languageSwitches?: number;
}

let calleeSeq = 0;
async function run(engine: Engine): Promise<Run> {
  const dialer = await startBenchDialer({
    DIALER_AGENT: 'flow',
    DIALER_POLL_MS: '100',
    DIALER_MAX_CONCURRENT_CALLS: '100',
    LLM_BASE_URL: ready.aiUrl,
    TTS_PROVIDER: 'openai',
    TTS_BASE_URL: ready.aiUrl,
    STT_PROVIDER: 'deepgram',
    DEEPGRAM_API_KEY: DEEPGRAM_KEY,
    DEEPGRAM_URL: ready.sttUrl,
    TWILIO_ACCOUNT_SID: TWILIO.accountSid,
    TWILIO_AUTH_TOKEN: TWILIO.authToken,
    TWILIO_API_URL: ready.emulatorUrl,
    ...(engine.realtime === 'openai' ? { DIALER_REALTIME_URL: ready.realtimeUrl, DIALER_REALTIME_MODEL: 'bench-realtime' } : {}),
    ...(engine.realtime === 'gemini' ? { DIALER_REALTIME_PROVIDER: 'gemini', DIALER_REALTIME_URL: ready.geminiUrl, DIALER_REALTIME_API_KEY: ready.geminiKey } : {}),
    ...engine.env,
  });
  try {
    const { api } = dialer;
    const reseller = (await api('POST', '/resellers', { name: `Turns ${engine.name}` })).body.id;
    const flow = {
      initial_node: 'talk',
      nodes: [
        {
          node_name: 'talk',
          role_messages: [{ role: 'system', content: 'You are Maya from Acme Deliveries, calling {customer_mobile_number}. Be brief.' }],
          task_messages: [{ role: 'system', content: 'Confirm the delivery time and note any changes the caller asks for.' }],
          ...engine.settings,
        },
      ],
    };
    const tpl = await api('POST', '/templates', { name: `turns-${engine.name}`, reseller_id: reseller, flow, ...(engine.agent ? { agent: engine.agent } : {}) });
    if (tpl.status !== 200) throw new Error(`template refused: ${JSON.stringify(tpl.body)}`);
    await api('POST', '/configurations', { reseller_id: reseller, template: tpl.body.id, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00' });
    // BEHAVIOURS=regex: only the matching behaviours (to look at a few closely, with TURNS_DEBUG=1).
    const only = process.env.BEHAVIOURS ? new RegExp(process.env.BEHAVIOURS) : undefined;
    const plan = planCalls((behaviours as unknown as Behaviour[]).filter((b) => !only || only.test(b.id)), CALLS).filter((list) => list.length > 0);
    const calls = plan.map((list) => ({ callee: `+1415555${String(1000 + ++calleeSeq)}`, behaviours: list.map((b) => b.id) }));
    for (let i = 0; i < calls.length; i++) await api('POST', '/numbers', { phone_number: `+1212555${String(1000 + calleeSeq * 10 + i)}`, provider: 'PROVIDER_A' });
    farSend({ type: 'calls', calls });
    const collected = farReply('collected');
    const pushed = await api('POST', '/leads/batch', {
      leads: calls.map((c, i) => ({ request_id: `turns-${engine.name}-${i}`, template: `turns-${engine.name}`, reseller_id: reseller, payload: { customer_mobile_number: c.callee } })),
    });
    if (pushed.status >= 300) throw new Error(`push refused: ${JSON.stringify(pushed.body)}`);
    farSend({ type: 'collect', callees: calls.map((c) => c.callee) });
    const got = (await collected).calls;
    if (process.env.TURNS_DEBUG) {
      for (const id of pushed.body.results.map((r: any) => r.result.lead_call_tracker_id)) {
        for (let i = 0; i < 100; i++) {
          const lead = (await api('GET', `/leads/${id}`)).body;
          if (lead.status === 'FINISHED' || lead.status === 'RETRY' || i === 99) {
            const m = lead.metaData ?? {};
            process.stdout.write(`${engine.name} lead ${lead.payload?.customer_mobile_number}: ${JSON.stringify({ turn_taking: m.turn_taking, latency: m.turn_latency_ms, errors: m.errors, usage: m.usage })}\n  ${(m.transcription ?? []).map((t: any) => `${t.role}: ${t.content}`).join('\n  ')}\n`);
            break;
          }
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    }
    const run = measured(engine, calls, got);
    if (engine.agent?.languages) {
      run.languageSwitches = 0;
      for (const id of pushed.body.results.map((r: any) => r.result.lead_call_tracker_id)) {
        for (let i = 0; i < 50; i++) {
          const lead = (await api('GET', `/leads/${id}`)).body;
          if (lead.status === 'FINISHED' || lead.status === 'RETRY') {
            run.languageSwitches += (lead.metaData?.language_switches ?? []).filter((x: any) => !x.refused).length;
            break;
          }
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    }
    return run;
  } finally {
    await dialer.stop();
  }
}

function measured(engine: Engine, calls: Array<{ callee: string; behaviours: string[] }>, got: CollectedCall[]): Run {
  const r: Run = { engine, outcomes: [], greetingMs: [], tokenToAudioMs: [], llmRequests: 0, llmCancelled: 0, cancelledChunks: 0, loadAtEnd: load() };
  for (const call of calls) {
    const c = got.find((g) => g.callee === call.callee);
    if (!c) continue;
    r.outcomes.push(...measureCall(call.behaviours.map((id) => byId.get(id)!), c.heard));
    // TURNS_DEBUG=1: what the callee heard, to see why a behaviour went wrong.
    if (process.env.TURNS_DEBUG) {
      const events = [
        ...c.heard.timeline.map((t) => ({ at: t.fromMs, text: `caller ${t.label} ${Math.round(t.fromMs)}-${Math.round(t.toMs ?? NaN)}` })),
        ...c.heard.voiced.map((v) => ({ at: v.fromMs, text: `  agent ${v.fromMs}-${v.toMs}` })),
      ].sort((a, b) => a.at - b.at);
      process.stdout.write(`${engine.name} call ${call.callee}:\n${events.map((e) => `  ${e.text}`).join('\n')}\n`);
    }
    const first = c.heard.voiced[0];
    if (first) r.greetingMs.push(first.fromMs);
    for (const req of c.llm) {
      r.llmRequests++;
      if (req.cancelled) {
        r.llmCancelled++;
        r.cancelledChunks += req.chunks;
        continue;
      }
      if (req.firstTokenAt === undefined) continue;
      const voice = c.heard.voiced.find((s) => c.streamStartedAt + s.fromMs >= req.firstTokenAt!);
      if (voice && c.streamStartedAt + voice.fromMs - req.firstTokenAt < 3000) r.tokenToAudioMs.push(c.streamStartedAt + voice.fromMs - req.firstTokenAt);
    }
  }
  return r;
}

const pct = (x: { n: number; of: number }) => (x.of ? (100 * x.n) / x.of : NaN);
const ms = (v: number | undefined) => (v === undefined ? 'n/a' : `${Math.round(v)}`);

function report(r: Run): void {
  const s = summarise(r.outcomes);
  const missedIds = r.outcomes.filter((o) => o.falseEnd || o.stopped || o.missed).map((o) => o.id);
  process.stdout.write(
    `${r.engine.name} (${r.engine.label}):\n` +
      `  false-end ${s.falseEnd.n}/${s.falseEnd.of} (${pct(s.falseEnd).toFixed(1)}%), false-barge-in ${s.falseBargeIn.n}/${s.falseBargeIn.of} (${pct(s.falseBargeIn).toFixed(1)}%), ` +
      `missed-barge-in ${s.missedBargeIn.n}/${s.missedBargeIn.of} (${pct(s.missedBargeIn).toFixed(1)}%), behaviours not played as scripted ${s.invalid}\n` +
      `  reply latency p50 ${ms(percentile(s.latencies, 50))} ms p95 ${ms(percentile(s.latencies, 95))} ms (n ${s.latencies.length}); first turn p50 ${ms(percentile(s.firstTurnLatencies, 50))} ms, later turns p50 ${ms(percentile(s.laterTurnLatencies, 50))} ms; ` +
      `greeting (answer to first audio) p50 ${ms(percentile(r.greetingMs, 50))} ms; first LLM token to first audio p50 ${ms(percentile(r.tokenToAudioMs, 50))} ms p95 ${ms(percentile(r.tokenToAudioMs, 95))} ms\n` +
      (r.languageSwitches !== undefined ? `  language switches ${r.languageSwitches} in ${r.outcomes.length} behaviours\n` : '') +
      `  interruptions: agent heard until p50 ${ms(percentile(s.stopAfterMs, 50))} ms p95 ${ms(percentile(s.stopAfterMs, 95))} ms after the caller began; LLM requests ${r.llmRequests}, cancelled ${r.llmCancelled} (${r.cancelledChunks} streamed pieces dropped); load at end ${r.loadAtEnd}\n` +
      (missedIds.length ? `  wrong: ${missedIds.join(' ')}\n` : ''),
  );
}

const runs: Run[] = [];
try {
  for (const engine of ENGINES) {
    const r = await run(engine);
    runs.push(r);
    report(r);
  }
} finally {
  if (far.exitCode === null) {
    farSend({ type: 'close' });
    await new Promise((r) => far.once('exit', r));
  }
}
const last = runs[runs.length - 1]!;
const s = summarise(last.outcomes);
process.stdout.write(
  `turns: false-end ${pct(s.falseEnd).toFixed(1)}%, false-barge-in ${pct(s.falseBargeIn).toFixed(1)}%, missed-barge-in ${pct(s.missedBargeIn).toFixed(1)}%, latency p50 ${ms(percentile(s.latencies, 50))} ms p95 ${ms(percentile(s.latencies, 95))} ms\n`,
);

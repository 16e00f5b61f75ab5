/**
 * npm run bench:voice: simultaneous calls through the provider emulator's media WebSockets
 * (Twilio protocol) into one `dialer serve` process running the full voice pipeline (codecs,
 * resampling, Silero VAD, turn taking, the flow engine) with local OpenAI-compatible LLM,
 * transcription and speech servers that answer at once. Each call: the agent greets, the callee answers in real speech, the agent calls a
 * function, says goodbye and hangs up.
 *
 * It ramps the number of calls (CALLS="10,20,40,...") and prints, per round, the share of late
 * 20 ms media frames (handled more than one frame behind the media clock) and the engine's own
 * latency per turn (end of caller speech to the first agent audio, minus the AI services' time).
 * Baseline beside it: the same calls with the built-in greeter agent (the bare media bridge), as a
 * ratio of Dialer CPU per call. Last line: `voice: N calls/core, turn overhead p99 X ms`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { API_PREFIX } from '../src/app.js';
import { startEmulator } from '../src/telephony/emulator/index.js';
import { percentile } from '../src/voice/metrics.js';
import { startOpenAIServer } from '../test/helpers/openai-server.js';
import { benchPostgres, createDatabase } from './lib/pg.js';
import { freePort } from '../test/helpers/net.js';

const ROUNDS = (process.env.CALLS ?? '10,25,50,75,100,150').split(',').map(Number);
const TWILIO = { accountSid: 'AC00000000000000000000000000000009', authToken: 'bench-voice-token' };
const CLK_TCK = 100;


/** CPU seconds a process has used (user + system), from /proc. */
function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

// PostgreSQL, as a production worker uses: embedded PGlite would run every query on the event loop the media shares.
const pgServer = await benchPostgres();
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void pgServer.stop().finally(() => process.exit(130)));
let dbSeq = 0;
const ai = await startOpenAIServer();
ai.respond = (body) => {
  const last = body.messages[body.messages.length - 1];
  return last?.role === 'user' ? { tools: [{ name: 'confirm_order', arguments: { confirmed: true } }] } : { text: 'Hello! Shall I confirm your order?' };
};
ai.transcribe = () => 'Yes, please confirm it.';

async function startDialer(agent: 'flow' | 'greeter'): Promise<{ url: string; child: ChildProcess; dataDir: string; token: string }> {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-bench-voice-'));
  const url = `http://127.0.0.1:${port}${API_PREFIX}`;
  const database = await createDatabase(pgServer.url, `dialer_bench_voice_${process.pid}_${++dbSeq}`);
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve'], {
    env: {
      ...process.env,
      PORT: String(port),
      DIALER_DATA_DIR: dataDir,
      DATABASE_URL: database.url,
      DIALER_ADMIN_EMAIL: 'bench@example.com',
      DIALER_ADMIN_PASSWORD: 'bench-password',
      DIALER_MAX_CONCURRENT_CALLS: '1000',
      DIALER_POLL_MS: '100',
      DIALER_AGENT: agent,
      LOG_LEVEL: 'error',
      LLM_BASE_URL: ai.url,
      STT_BASE_URL: ai.url,
      TTS_BASE_URL: ai.url,
      TWILIO_ACCOUNT_SID: TWILIO.accountSid,
      TWILIO_AUTH_TOKEN: TWILIO.authToken,
      TWILIO_API_URL: emulatorUrl,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (let i = 0; ; i++) {
    try {
      const login = await fetch(`${url}/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'bench@example.com', password: 'bench-password' }) });
      if (login.ok) return { url, child, dataDir, token: ((await login.json()) as { access_token: string }).access_token };
    } catch {
      /* not up yet */
    }
    if (i > 300) throw new Error('dialer did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
}

let emulatorUrl = '';
const emulator = await startEmulator({ dialerUrl: 'http://127.0.0.1:1', twilio: TWILIO, plivo: { authId: 'MAX', authToken: 'x' }, exotel: { accountSid: 'x', apiKey: 'x', apiToken: 'x' } });
emulatorUrl = emulator.url;

let numberSeq = 0;
let calleeSeq = 0;

interface Round {
  calls: number;
  finished: number;
  frames: number;
  late: number;
  overheads: number[];
  cpuPerCall: number;
  harnessLagP99Ms: number;
  harnessCpuS: number;
  dialerCpuS: number;
}

async function round(dialer: { url: string; token: string; child: ChildProcess }, calls: number, template: string, reseller: string): Promise<Round> {
  const api = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(`${dialer.url}${p}`, { method, headers: { authorization: `Bearer ${dialer.token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as any };
  };
  for (let i = 0; i < calls; i++) await api('POST', '/numbers', { phone_number: `+1212${String(5000000 + ++numberSeq)}`, provider: 'PROVIDER_A' });
  const leads: Array<{ request_id: string; template: string; reseller_id: string; payload: Record<string, unknown> }> = [];
  for (let i = 0; i < calls; i++) {
    const callee = `+1415${String(6000000 + ++calleeSeq)}`;
    emulator.script(callee, { answer: 'answer', ringMs: 100, steps: [{ waitForAudio: 15_000 }, { say: 'Yes, please confirm it.' }, { waitForAudio: 15_000 }], maxSeconds: 45 });
    leads.push({ request_id: `bench-${calleeSeq}`, template, reseller_id: reseller, payload: { customer_mobile_number: callee } });
  }
  const cpuBefore = cpuSeconds(dialer.child.pid!);
  const benchCpuBefore = process.cpuUsage();
  // The emulator (the callees' side) runs in this process: its own lag shows up as late frames too.
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  const pushed = await api('POST', '/leads/batch', { leads });
  const ids: string[] = pushed.body.results.map((r: any) => r.result.lead_call_tracker_id);
  const deadline = Date.now() + 120_000;
  const done = new Map<string, any>();
  while (done.size < ids.length && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 1000));
    for (const id of ids) {
      if (done.has(id)) continue;
      const lead = (await api('GET', `/leads/${id}`)).body;
      if (lead.status === 'FINISHED' || lead.status === 'RETRY') done.set(id, lead);
    }
  }
  const cpu = cpuSeconds(dialer.child.pid!) - cpuBefore;
  lag.disable();
  const benchCpu = process.cpuUsage(benchCpuBefore);
  const r: Round = { calls, finished: 0, frames: 0, late: 0, overheads: [], cpuPerCall: cpu / calls, harnessLagP99Ms: lag.percentile(99) / 1e6, harnessCpuS: (benchCpu.user + benchCpu.system) / 1e6, dialerCpuS: cpu };
  for (const lead of done.values()) {
    if (lead.status === 'FINISHED' && lead.outcome !== 'error') r.finished++;
    r.frames += lead.trace_scores?.media_frames ?? 0;
    r.late += lead.trace_scores?.media_frames_late ?? 0;
    r.overheads.push(...(lead.metaData?.turn_overhead_ms ?? []));
  }
  return r;
}

async function setup(dialer: { url: string; token: string }): Promise<{ template: string; reseller: string }> {
  const api = async (p: string, body: unknown) =>
    (await (await fetch(`${dialer.url}${p}`, { method: 'POST', headers: { authorization: `Bearer ${dialer.token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as any;
  const reseller = (await api('/resellers', { name: 'Bench' })).id;
  const flow = {
    initial_node: 'greet',
    nodes: [
      { node_name: 'greet', task_messages: [{ role: 'system', content: 'Ask to confirm the order.' }], functions: [{ name: 'confirm_order', properties: { confirmed: { type: 'boolean' } }, required: ['confirmed'], transition_to: 'bye' }] },
      { node_name: 'bye', task_messages: [{ role: 'system', content: 'Bye.' }], pre_actions: [{ type: 'tts_say', text: 'Thank you, goodbye!' }, { type: 'end_conversation', outcome: 'confirmed' }] },
    ],
  };
  const tpl = await api('/templates', { name: 'bench', reseller_id: reseller, flow });
  await api('/configurations', { reseller_id: reseller, template: tpl.id, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00' });
  return { template: 'bench', reseller };
}

const stop = async (d: { child: ChildProcess; dataDir: string }) => {
  d.child.kill('SIGTERM');
  await new Promise((r) => d.child.once('exit', r));
  fs.rmSync(d.dataDir, { recursive: true, force: true });
};

process.stdout.write(`bench:voice: ${os.cpus().length} cores; rounds of ${ROUNDS.join(', ')} simultaneous calls\n`);
// Baseline: the bare media bridge (greeter agent), 10 calls.
const bridge = await startDialer('greeter');
const bridgeSetup = await setup(bridge);
const base = await round(bridge, 10, bridgeSetup.template, bridgeSetup.reseller);
await stop(bridge);
process.stdout.write(`baseline bridge: 10 calls, ${base.finished} finished, ${(base.cpuPerCall * 1000).toFixed(0)} ms CPU per call\n`);

const dialer = await startDialer('flow');
const { template, reseller } = await setup(dialer);
let best = 0;
let bestOverheads: number[] = [];
for (const calls of ROUNDS) {
  const r = await round(dialer, calls, template, reseller);
  const lateShare = r.frames ? r.late / r.frames : 1;
  const p50 = percentile(r.overheads, 50) ?? NaN;
  const p99 = percentile(r.overheads, 99) ?? NaN;
  process.stdout.write(
    `${String(calls).padStart(4)} calls: ${r.finished}/${calls} confirmed, late frames ${(lateShare * 100).toFixed(2)}% of ${r.frames}, ` +
      `turn overhead p50 ${p50.toFixed(1)} ms p99 ${p99.toFixed(1)} ms, CPU per call ${(r.cpuPerCall * 1000).toFixed(0)} ms (${(r.cpuPerCall / base.cpuPerCall).toFixed(2)}x the bare bridge); ` +
      `CPU dialer ${r.dialerCpuS.toFixed(1)} s vs emulator ${r.harnessCpuS.toFixed(1)} s, emulator event-loop lag p99 ${r.harnessLagP99Ms.toFixed(0)} ms\n`,
  );
  if (lateShare >= 0.01 || r.finished < calls) break;
  best = calls;
  bestOverheads = r.overheads;
}
await stop(dialer);
await emulator.close();
await ai.close();
await pgServer.stop();
// One Dialer process uses one core (Node's event loop; Silero runs single-threaded WebAssembly in it).
process.stdout.write(`voice: ${best} calls/core, turn overhead p99 ${(percentile(bestOverheads, 99) ?? NaN).toFixed(1)} ms\n`);

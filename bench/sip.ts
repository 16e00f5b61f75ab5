/**
 * npm run bench:sip: simultaneous SIP calls with RTP through Dialer's SIP driver (its user agent,
 * RTP streams, jitter buffer, recorder), in a process pinned to one CPU, against a lean SIP and
 * RTP far side (bench/sip-far.ts) on the other CPUs. Method and figures: docs/benchmarks.md and
 * bench/RESULTS.md.
 *
 * Processes:
 * - Dialer's side (bench/sip-ua.ts), pinned with `taskset` to DIALER_CPUS (default: the last CPU
 *   this process may use), started with `--single-threaded-gc` there as docs/configuration.md says
 *   to start Dialer on one CPU;
 * - the far side (bench/sip-far.ts) and this process on the other CPUs.
 *
 * The baseline, beside it in the same run: the floor (bench/sip-ua.ts `floor`), the least a SIP and
 * RTP endpoint can do for the same calls (prebuilt INVITE and frames, nothing decoded or
 * recorded), one round of FLOOR_CALLS (default 150) calls. Dialer's CPU per call and its setup
 * overhead are printed as ratios to the floor's.
 *
 * Per round (CALLS="50,100,...", ramped until a round fails): the N calls are placed evenly over
 * SPREAD_MS (default 2000 ms: 75 calls a second at 150, a trunk's pace rather than one burst); the
 * far side answers each after a ring time drawn from RING_MS (default 100-2000 ms, a fixed seed),
 * both sides send speech for HOLD_S seconds (default 15) after the answer, and the far side hangs
 * up. A round passes when every call completed, ended by the far side's BYE, all N were up at
 * once, and fewer than 1 % of the frames Dialer sent and of those it heard were late:
 * - sent late: a frame its 20 ms clock sent more than one frame after its time;
 * - heard late: a frame the agent was handed more than a frame plus 20 ms after its time (the
 *   call's first frame's arrival plus 20 ms a frame), the far side's own sending lag included: a
 *   round in which the far side sent 1 % or more of its frames late is not counted against
 *   Dialer, and is run once more.
 * - setup overhead: INVITE sent to the answer handled and the media going (the driver's
 *   `sip_setup_ms`), minus the far side's own answer delay for that call (INVITE handled to
 *   200 OK sent).
 * A failed round is run once more; the ramp stops when it fails again. The last line,
 * `sip: N calls/core, late X%, setup overhead p99 Y ms`, is the largest passing N over the CPUs
 * Dialer's side was allowed, that round's late share (sent or heard, the larger) and its p99.
 */
import { fork, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { cpuPlan, cpuSeconds } from './lib/cpu.js';
import { percentileOf } from './lib/serve.js';
import type { FarReply, FarRequest } from './sip-far.js';
import type { UaReply, UaRequest } from './sip-ua.js';

const ROUNDS = (process.env.CALLS ?? '50,100,150,200,250,300').split(',').map(Number);
const FLOOR_CALLS = Number(process.env.FLOOR_CALLS ?? 150);
const [RING_MIN_MS, RING_MAX_MS] = ((r) => [r[0]!, r[1] ?? r[0]!])((process.env.RING_MS ?? '100-2000').split('-').map(Number));
const HOLD_MS = Number(process.env.HOLD_S ?? 15) * 1000;
/** A round's calls are placed evenly over this long (a trunk's pace), not in one burst. */
const SPREAD_MS = Number(process.env.SPREAD_MS ?? 2000);
const LATE_SHARE = 0.01;
/**
 * The niceness of the far side and Dialer's side: on a machine shared with other work (other
 * engineers' test suites) they go first, so the figures are Dialer's, not its neighbours'. Lowering
 * it needs root; BENCH_NICE=0 leaves both as they are.
 */
const NICE = Number(process.env.BENCH_NICE ?? -10);
function prioritise(pid: number): boolean {
  if (NICE === 0) return false;
  try {
    os.setPriority(pid, NICE);
    return true;
  } catch {
    return false; // not root: the figures share the CPUs with whatever else runs
  }
}

const plan = cpuPlan();
const gcArgs = plan.pinned && plan.dialer.length === 1 && !process.env.BENCH_PARALLEL_GC ? ['--single-threaded-gc'] : [];
if (plan.pinned) spawnSync('taskset', ['-a', '-p', '-c', plan.rest.join(','), String(process.pid)], { stdio: 'ignore' });

const children: ChildProcess[] = [];

function reply<R extends { type: string }, T extends R['type']>(child: ChildProcess, type: T): Promise<Extract<R, { type: T }>> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`a bench process exited (${code})`));
    const onMessage = (m: R) => {
      if (m.type !== type) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(m as Extract<R, { type: T }>);
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

const far = fork(path.join(import.meta.dirname, 'sip-far.ts'), [], { execArgv: ['--import', 'tsx'] });
children.push(far);
const niced = prioritise(far.pid!);
const farAsk = (m: FarRequest) => far.send(m);
const { sip: trunk } = await reply<FarReply, 'ready'>(far, 'ready');

/** Dialer's side (or the floor) on Dialer's CPUs. */
async function startUa(mode: 'dialer' | 'floor'): Promise<ChildProcess> {
  const node = [process.execPath, ...gcArgs, ...(process.env.DIALER_NODE_ARGS ?? '').split(' ').filter(Boolean), '--import', 'tsx', path.join(import.meta.dirname, 'sip-ua.ts'), mode];
  const [cmd, ...args] = plan.pinned ? ['taskset', '-c', plan.dialer.join(','), ...node] : node;
  const child = spawn(cmd!, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.push(child);
  prioritise(child.pid!);
  await reply<UaReply, 'ready'>(child, 'ready');
  return child;
}

interface Round {
  calls: number;
  completed: number;
  peakLive: number;
  sent: number;
  sentLate: number;
  heard: number;
  heardLate: number;
  overheadsMs: number[];
  /** Dialer's side's CPU seconds per call per second of call. */
  cpuPerCallSecond: number;
  cpuShare: number;
  loopP99Ms: number;
  loopMaxMs: number;
  farSentLateShare: number;
  farCpuShare: number;
  farLagP99Ms: number;
  problems: string[];
}

async function round(ua: ChildProcess, calls: number, seed: number): Promise<Round> {
  farAsk({ type: 'round', ringMinMs: RING_MIN_MS, ringMaxMs: RING_MAX_MS, holdMs: HOLD_MS, seed });
  const cpuBefore = cpuSeconds([ua.pid!]);
  const startedAt = performance.now();
  const done = reply<UaReply, 'done'>(ua, 'done');
  ua.send({ type: 'round', calls, trunk, spreadMs: SPREAD_MS } satisfies UaRequest);
  const result = await done;
  const wallS = (performance.now() - startedAt) / 1000;
  const cpu = cpuSeconds([ua.pid!]) - cpuBefore;
  const stats = reply<FarReply, 'stats'>(far, 'stats');
  farAsk({ type: 'stats' });
  const farStats = await stats;
  const answerDelay = new Map(farStats.calls.map((c) => [c.callId, c.answerDelayMs]));
  const overheadsMs = result.calls.flatMap((c) => (answerDelay.has(c.callId) && Number.isFinite(c.setupMs) ? [c.setupMs - answerDelay.get(c.callId)!] : []));
  const callSeconds = (calls * HOLD_MS) / 1000;
  return {
    calls,
    completed: result.calls.filter((c) => c.completed && c.endedByFarSide).length,
    peakLive: farStats.peakLive,
    sent: result.framesSent,
    sentLate: result.framesSentLate,
    heard: result.calls.reduce((n, c) => n + c.framesHeard, 0),
    heardLate: result.calls.reduce((n, c) => n + c.framesHeardLate, 0),
    overheadsMs,
    cpuPerCallSecond: cpu / callSeconds,
    cpuShare: cpu / wallS,
    loopP99Ms: result.loopP99Ms,
    loopMaxMs: result.loopMaxMs,
    farSentLateShare: farStats.framesSent ? farStats.framesSentLate / farStats.framesSent : 0,
    farCpuShare: farStats.cpuS / wallS,
    farLagP99Ms: farStats.lagP99Ms,
    problems: [...new Set(result.calls.flatMap((c) => (c.problem ? [c.problem] : [])))].slice(0, 3),
  };
}

const share = (late: number, of: number) => (of ? late / of : 1);
const lateOf = (r: Round) => Math.max(share(r.sentLate, r.sent), share(r.heardLate, r.heard));
const pct = (x: number) => `${(x * 100).toFixed(2)}%`;

const where = plan.pinned ? `Dialer's side pinned to CPU ${plan.dialer.join(',')}${gcArgs.length ? ' (node --single-threaded-gc)' : ''}, the far side and the bench to CPU ${plan.rest.join(',')}` : `nothing pinned (${plan.dialer.length} CPUs shared)`;
process.stdout.write(`bench:sip: ${os.cpus().length} CPUs, ${where}${niced ? `, both at nice ${NICE}` : ''}; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}; rounds of ${ROUNDS.join(', ')} calls placed over ${SPREAD_MS} ms, ring ${RING_MIN_MS}-${RING_MAX_MS} ms, ${HOLD_MS / 1000} s of speech both ways each\n`);

async function main(): Promise<{ best: Round | undefined; failedOnce: number[]; farLimited: number }> {
  // The floor, beside it: the same far side, the same calls, the least an endpoint can do.
  const floorUa = await startUa('floor');
  await round(floorUa, 10, 1);
  const base = await round(floorUa, FLOOR_CALLS, 2);
  floorUa.send({ type: 'close' } satisfies UaRequest);
  await new Promise((r) => floorUa.once('exit', r));
  const baseP99 = percentileOf(base.overheadsMs, 99);
  process.stdout.write(
    `floor: ${base.calls} calls, ${base.completed} completed, ${base.peakLive} up at once, late sent ${pct(share(base.sentLate, base.sent))} heard ${pct(share(base.heardLate, base.heard))}, ` +
      `setup overhead p50 ${percentileOf(base.overheadsMs, 50).toFixed(1)} ms p99 ${baseP99.toFixed(1)} ms, CPU ${(base.cpuPerCallSecond * 1000).toFixed(2)} ms per call-second (${pct(base.cpuShare)} of a CPU); far side sent ${pct(base.farSentLateShare)} late\n`,
  );

  const ua = await startUa('dialer');
  await round(ua, 10, 3); // warm-up (JIT), not counted
  let best: Round | undefined;
  const failedOnce: number[] = [];
  let farLimited = 0;
  let seed = 10;
  const measured = async (calls: number): Promise<Round | undefined> => {
    let r = await round(ua, calls, ++seed);
    for (let again = false; r.farSentLateShare >= LATE_SHARE; again = true) {
      process.stdout.write(`${String(calls).padStart(4)} calls: FAR SIDE LATE (${pct(r.farSentLateShare)} of its frames, lag p99 ${r.farLagP99Ms.toFixed(0)} ms, ${pct(r.farCpuShare)} of a CPU; Dialer's side late sent ${pct(share(r.sentLate, r.sent))}, heard ${pct(share(r.heardLate, r.heard))}, ${pct(r.cpuShare)} of a CPU; load ${os.loadavg()[0]!.toFixed(2)}); not counted against Dialer${again ? ', the ramp stops: the far side was the limit' : ', run again'}\n`);
      if (again) {
        farLimited = calls;
        return undefined;
      }
      r = await round(ua, calls, ++seed);
    }
    return r;
  };
  const report = (r: Round, again: boolean): boolean => {
    const passed = r.completed === r.calls && r.peakLive === r.calls && lateOf(r) < LATE_SHARE;
    const p99 = percentileOf(r.overheadsMs, 99);
    process.stdout.write(
      `${String(r.calls).padStart(4)} calls: ${r.completed}/${r.calls} completed, ${r.peakLive} up at once, late sent ${pct(share(r.sentLate, r.sent))} of ${r.sent}, heard ${pct(share(r.heardLate, r.heard))} of ${r.heard}, ` +
        `setup overhead p50 ${percentileOf(r.overheadsMs, 50).toFixed(1)} ms p99 ${p99.toFixed(1)} ms (${(p99 / baseP99).toFixed(1)}x the floor's), ` +
        `CPU ${(r.cpuPerCallSecond * 1000).toFixed(2)} ms per call-second (${(r.cpuPerCallSecond / base.cpuPerCallSecond).toFixed(1)}x the floor's; ${pct(r.cpuShare)} of a CPU), event-loop delay p99 ${r.loopP99Ms.toFixed(0)} ms max ${r.loopMaxMs.toFixed(0)} ms; ` +
        `far side ${pct(r.farCpuShare)} of a CPU, sent ${pct(r.farSentLateShare)} late; load ${os.loadavg()[0]!.toFixed(2)}` +
        `${r.problems.length ? `; ends: ${r.problems.join(' | ')}` : ''}${passed ? '' : again ? ' FAILED again: the ramp stops' : ' FAILED: run once more'}\n`,
    );
    return passed;
  };
  for (const calls of ROUNDS) {
    let r = await measured(calls);
    if (!r) break;
    if (!report(r, false)) {
      failedOnce.push(calls);
      r = await measured(calls);
      if (!r || !report(r, true)) break;
    }
    best = r;
  }
  ua.send({ type: 'close' } satisfies UaRequest);
  await new Promise((r) => ua.once('exit', r));
  return { best, failedOnce, farLimited };
}

let outcome: Awaited<ReturnType<typeof main>>;
try {
  outcome = await main();
} finally {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
}
const { best, failedOnce, farLimited } = outcome;
const perCore = (best?.calls ?? 0) / plan.dialer.length;
process.stdout.write(
  `(per core: ${best?.calls ?? 0} calls on the ${plan.dialer.length} CPU(s) Dialer's side was allowed` +
    `${failedOnce.length ? `; failed once and run again: ${failedOnce.join(', ')} calls` : ''}${farLimited ? `; the far side, not Dialer, was late at ${farLimited} calls` : ''})\n`,
);
process.stdout.write(
  `sip: ${Number.isInteger(perCore) ? perCore : perCore.toFixed(1)} calls/core, late ${best ? (lateOf(best) * 100).toFixed(2) : 'n/a'}%, setup overhead p99 ${best ? percentileOf(best.overheadsMs, 99).toFixed(1) : 'n/a'} ms\n`,
);

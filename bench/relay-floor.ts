/**
 * npm run bench:relay-floor: the floor under `bench:voice AGENT=realtime` on this machine, the
 * least CPU any relay between Twilio media streams and the OpenAI Realtime API spends per call
 * (what it does and does not do: bench/lib/relay-floor.ts). The relay is pinned as bench:voice
 * pins Dialer; this process plays the callers and the model on the other CPUs.
 *
 *   CALLS=100,200,300 HOLD_S=20 npm run bench:relay-floor
 *
 * Per round: the relay's CPU per call-second and the share of its CPU it used, and the share of
 * frames the callers themselves sent late (1% or more: the far end, not the relay, was the limit).
 * Dialer's own CPU per call-second (`bench:voice AGENT=realtime`, which runs this floor beside it)
 * divided by the floor's is what Dialer's work costs over the protocols'. Method and figures:
 * docs/voice-benchmark.md.
 */
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import { cpuPlan } from './lib/cpu.js';
import { floorLine, startRelayFloor } from './lib/relay-floor.js';

const ROUNDS = (process.env.CALLS ?? '100,200,300').split(',').map(Number);
const HOLD_S = Number(process.env.HOLD_S ?? 20);
if (ROUNDS.some((n) => !Number.isInteger(n) || n <= 0) || !(HOLD_S > 0)) {
  process.stderr.write(`bench:relay-floor: CALLS must list call counts (it is ${JSON.stringify(process.env.CALLS)}), HOLD_S a number of seconds (${JSON.stringify(process.env.HOLD_S)})\n`);
  process.exit(2);
}

const plan = cpuPlan();
if (plan.pinned) spawnSync('taskset', ['-a', '-p', '-c', plan.rest.join(','), String(process.pid)], { stdio: 'ignore' });
const floor = await startRelayFloor({ ...(plan.pinned ? { cpus: plan.dialer } : {}), nodeArgs: plan.pinned && plan.dialer.length === 1 ? ['--single-threaded-gc'] : [] });
process.stdout.write(
  `bench:relay-floor: ${os.cpus().length} CPUs, ${plan.pinned ? `the relay pinned to CPU ${plan.dialer.join(',')}, the callers and the model on CPU ${plan.rest.join(',')}` : 'nothing pinned'}; ` +
    `load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}; rounds of ${ROUNDS.join(', ')} calls, ${HOLD_S} s each\n`,
);
try {
  await floor.round(10, 3); // warm-up: the JIT
  for (const calls of ROUNDS) {
    const r = await floor.round(calls, HOLD_S);
    process.stdout.write(`${String(calls).padStart(4)} calls: ${floorLine(r)}; load ${os.loadavg()[0]!.toFixed(2)}\n`);
  }
} finally {
  await floor.close();
}

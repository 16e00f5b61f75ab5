/**
 * Where the garbage collector runs. V8 marks the old generation on helper threads beside the event
 * loop and copies the young generation on several threads at once. With CPUs to spare that
 * shortens the event loop's pauses; with one CPU the helpers take turns on it with the event loop
 * that paces every live call's audio, which then waits for them: in the voice benchmark (Dialer
 * pinned to one CPU) its event loop was kept waiting for its CPU about twice as long as with
 * node's `--single-threaded-gc` (bench/RESULTS.md). That flag can only be given when node
 * starts (V8 aborted when it was set at run time during a collection), so `dialer serve` says when
 * it runs on one CPU without it.
 */
import fs from 'node:fs';
import os from 'node:os';
import v8 from 'node:v8';

/**
 * CPUs this process may use: its CPU affinity (taskset, a cpuset), lowered by a cgroup v2 CPU
 * quota (`cpu.max`, e.g. a container limited to one CPU), fractional quotas included.
 */
export function usableCpus(readFile: (path: string) => string | undefined = readIfThere): number {
  const affinity = os.availableParallelism();
  const own = /^0::(\/.*)$/m.exec(readFile('/proc/self/cgroup') ?? '')?.[1];
  for (const dir of [...(own && own !== '/' ? [`/sys/fs/cgroup${own}`] : []), '/sys/fs/cgroup']) {
    const max = readFile(`${dir}/cpu.max`);
    if (max === undefined) continue;
    const [quota, period] = max.trim().split(/\s+/);
    const q = Number(quota);
    const p = Number(period);
    return quota !== 'max' && q > 0 && p > 0 ? Math.min(affinity, q / p) : affinity;
  }
  return affinity;
}

function readIfThere(path: string): string | undefined {
  try {
    return fs.readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** How this process collects garbage: node's flags, as it was started. */
export function gcThreads(execArgv: readonly string[] = process.execArgv): 'single-threaded' | 'parallel' {
  return execArgv.some((a) => a === '--single-threaded-gc' || a === '--single_threaded_gc') ? 'single-threaded' : 'parallel';
}

/** What the collector and the CPUs are, and the advice when they do not suit each other. */
export function gcReport(cpus = usableCpus(), gc = gcThreads()): { gc: 'single-threaded' | 'parallel'; cpus: number; advice?: string } {
  if (cpus > 1 || gc === 'single-threaded') return { gc, cpus };
  return {
    gc,
    cpus,
    advice:
      "this process may use one CPU, where V8's garbage collector threads take turns with the event loop that paces live calls' audio: " +
      'start node with --single-threaded-gc (docs/configuration.md, "One CPU")',
  };
}

/**
 * How far the old generation may grow past what the last full collection left alive before the
 * next one starts, in percent: 100, twice the live heap. V8 picks the factor from how fast its
 * collector runs against how fast the program fills the old generation, aiming at 97% of the time
 * for the program. Dialer's old generation fills slowly (call state, audio held while it plays), so
 * V8 chose about 1.1 to 1.4 and started a full collection every second or two at 50 to 125 live
 * calls, each with a pause of 10 to 40 ms on the thread that paces every call's audio; at twice the
 * live heap there are one or two per 11 s round (bench/RESULTS.md). It costs memory: up to
 * the live heap again (about 65 MB at 100 calls).
 */
export const HEAP_GROWTH_PERCENT = 100;

/**
 * Sets the old generation's growth (a V8 flag read at every full collection, so it applies from
 * the next one) unless node was started with its own `--heap-growing-percent`. Returns the growth
 * in force.
 */
export function setHeapGrowth(execArgv: readonly string[] = process.execArgv, setFlags: (flags: string) => void = v8.setFlagsFromString): number {
  // Node takes V8's flag only as `--heap-growing-percent=N` on its command line (not in NODE_OPTIONS).
  const given = execArgv.map((a) => /^--heap[-_]growing[-_]percent=(\d+)$/.exec(a)?.[1]).find((v) => v !== undefined);
  if (given !== undefined) return Number(given);
  setFlags(`--heap-growing-percent=${HEAP_GROWTH_PERCENT}`);
  return HEAP_GROWTH_PERCENT;
}

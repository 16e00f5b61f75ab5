/**
 * Where the garbage collector runs. V8 marks the old generation on helper threads beside the event
 * loop and copies the young generation on several threads at once. With CPUs to spare that
 * shortens the event loop's pauses; with one CPU the helpers take turns on it with the event loop
 * that paces every live call's audio, which then waits for them: in the voice benchmark (Dialer
 * pinned to one CPU) its event loop was kept waiting for its CPU about twice as long as with
 * node's `--single-threaded-gc` (docs/voice-benchmark.md). That flag can only be given when node
 * starts (V8 aborted when it was set at run time during a collection), so `dialer serve` says when
 * it runs on one CPU without it.
 */
import fs from 'node:fs';
import os from 'node:os';

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

/**
 * Where the garbage collector runs. V8 marks and sweeps the old generation on helper threads
 * beside the event loop, and copies the young generation on several threads at once. On a machine
 * with CPUs to spare that shortens the event loop's pauses; with one CPU the helpers run on the
 * same CPU as the event loop that paces every live call's audio, and it waits for them: in the
 * voice benchmark (Dialer pinned to one CPU) the event loop was kept waiting for its CPU about
 * twice as long as with the collector on its own thread (docs/voice-benchmark.md). So, as JVMs
 * choose a serial collector on one CPU, a process that may use a single CPU (its affinity, or its
 * container's CPU quota) collects on one thread.
 */
import fs from 'node:fs';
import os from 'node:os';
import v8 from 'node:v8';

export const GC_MODES = ['auto', 'single-threaded', 'parallel'] as const;
export type GcSetting = (typeof GC_MODES)[number];

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

/** What `auto` means on `cpus` usable CPUs. */
export function gcMode(setting: GcSetting, cpus: number): 'single-threaded' | 'parallel' {
  if (setting !== 'auto') return setting;
  return cpus <= 1 ? 'single-threaded' : 'parallel';
}

/**
 * Sets the collector for the rest of the process's life; call it first thing. Returns the mode and
 * the CPUs it was decided on (for the start-up log line).
 */
export function applyGcSetting(setting: GcSetting, cpus = usableCpus()): { gc: 'single-threaded' | 'parallel'; cpus: number } {
  const gc = gcMode(setting, cpus);
  if (gc === 'single-threaded') v8.setFlagsFromString('--single-threaded-gc');
  return { gc, cpus };
}

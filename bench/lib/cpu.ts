/**
 * CPU time of processes, read from /proc (Linux), so a benchmark can say where the machine's CPU
 * went in a phase: per item, in the load generator, the service and the database. Figures are
 * user + system seconds, including children that have exited and been waited for.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

function readStat(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: fields are counted after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime, stime, cutime, cstime are fields 14 to 17 of stat(5); here 11 to 14 (0-based).
    return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0) / TICKS_PER_SECOND;
  } catch {
    return 0; // gone
  }
}

/** Write system calls a process has made (each statement a client sends is one, or part of one). */
function readWrites(pid: number): number {
  try {
    return Number(/^syscw: (\d+)$/m.exec(fs.readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0; // gone
  }
}

/** Write system calls of the given processes. */
export function writeCalls(pids: number[]): number {
  return pids.reduce((sum, pid) => sum + readWrites(pid), 0);
}

/** CPU seconds of the given processes. */
export function cpuSeconds(pids: number[]): number {
  return pids.reduce((sum, pid) => sum + readStat(pid), 0);
}

/** A process and its children, e.g. a PostgreSQL postmaster and its backends. */
export function processTree(rootPid: number): number[] {
  const pids = [rootPid];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === rootPid) pids.push(Number(entry));
    } catch {
      /* exited meanwhile */
    }
  }
  return pids;
}

/** Measures the CPU seconds and write system calls of each named group of processes while `work` runs. */
export async function cpuDuring<T>(
  groups: Record<string, () => number[]>,
  work: () => Promise<T>,
): Promise<{ result: T; cpu: Record<string, number>; writes: Record<string, number> }> {
  const measure = (of: (pids: number[]) => number) => Object.fromEntries(Object.entries(groups).map(([name, pids]) => [name, of(pids())]));
  const [cpuBefore, writesBefore] = [measure(cpuSeconds), measure(writeCalls)];
  const result = await work();
  const [cpuAfter, writesAfter] = [measure(cpuSeconds), measure(writeCalls)];
  const since = (after: Record<string, number>, before: Record<string, number>) => Object.fromEntries(Object.entries(after).map(([name, v]) => [name, v - before[name]!]));
  return { result, cpu: since(cpuAfter, cpuBefore), writes: since(writesAfter, writesBefore) };
}

/** "0-2,5" -> [0, 1, 2, 5]. */
function cpuList(list: string): number[] {
  return list.split(',').flatMap((part) => {
    const [a, b] = part.split('-').map(Number);
    return b === undefined ? [a!] : Array.from({ length: b - a! + 1 }, (_, i) => a! + i);
  });
}

/**
 * Which CPUs the process being measured runs on (DIALER_CPUS, default the last CPU this process may
 * use) and which the rest of the bench does. Without `taskset` or with a single CPU nothing is
 * pinned, and "per core" divides by every CPU.
 */
export function cpuPlan(): { dialer: number[]; rest: number[]; pinned: boolean } {
  const allowed = /Cpus_allowed_list:\s*(\S+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1];
  const cpus = allowed ? cpuList(allowed) : os.cpus().map((_, i) => i);
  const hasTaskset = spawnSync('taskset', ['--version']).status === 0;
  if (!hasTaskset || cpus.length < 2) return { dialer: cpus, rest: cpus, pinned: false };
  const dialer = process.env.DIALER_CPUS ? cpuList(process.env.DIALER_CPUS) : [cpus[cpus.length - 1]!];
  const rest = cpus.filter((c) => !dialer.includes(c));
  return { dialer, rest: rest.length ? rest : cpus, pinned: true };
}

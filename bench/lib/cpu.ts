/**
 * CPU time of processes, read from /proc (Linux), so a benchmark can say where the machine's CPU
 * went in a phase: per item, in the load generator, the service and the database. Figures are
 * user + system seconds, including children that have exited and been waited for.
 */
import fs from 'node:fs';

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

/** Measures the CPU seconds each named group of processes spends while `work` runs. */
export async function cpuDuring<T>(groups: Record<string, () => number[]>, work: () => Promise<T>): Promise<{ result: T; cpu: Record<string, number> }> {
  const before = Object.fromEntries(Object.entries(groups).map(([name, pids]) => [name, cpuSeconds(pids())]));
  const result = await work();
  const cpu = Object.fromEntries(Object.entries(groups).map(([name, pids]) => [name, cpuSeconds(pids()) - before[name]!]));
  return { result, cpu };
}

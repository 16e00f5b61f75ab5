import assert from 'node:assert/strict';
import os from 'node:os';
import { describe, it } from 'node:test';
import { gcReport, gcThreads, HEAP_GROWTH_PERCENT, setHeapGrowth, usableCpus } from '../../src/lib/gc.js';

const files = (entries: Record<string, string>) => (path: string) => entries[path];

describe('garbage collector threads', () => {
  it('counts the CPUs a process may use: its affinity, lowered by its cgroup CPU quota', () => {
    const affinity = os.availableParallelism();
    assert.equal(usableCpus(files({})), affinity, 'no cgroup files: the affinity');
    assert.equal(usableCpus(files({ '/proc/self/cgroup': '0::/\n', '/sys/fs/cgroup/cpu.max': 'max 100000\n' })), affinity, 'no quota');
    assert.equal(usableCpus(files({ '/proc/self/cgroup': '0::/\n', '/sys/fs/cgroup/cpu.max': '50000 100000\n' })), Math.min(affinity, 0.5));
    // The process's own cgroup is read first (a container's limit set on a nested group).
    const nested = files({ '/proc/self/cgroup': '0::/pods/p1\n', '/sys/fs/cgroup/pods/p1/cpu.max': '100000 100000', '/sys/fs/cgroup/cpu.max': 'max 100000' });
    assert.equal(usableCpus(nested), 1);
  });

  it('reads how node was started, and advises --single-threaded-gc on one CPU without it', () => {
    assert.equal(gcThreads(['--import', 'tsx']), 'parallel');
    assert.equal(gcThreads(['--single-threaded-gc', '--import', 'tsx']), 'single-threaded');
    assert.match(gcReport(1, 'parallel').advice ?? '', /start node with --single-threaded-gc/);
    assert.match(gcReport(0.5, 'parallel').advice ?? '', /one CPU/);
    assert.equal(gcReport(1, 'single-threaded').advice, undefined);
    assert.equal(gcReport(2, 'parallel').advice, undefined, 'with CPUs to spare the helpers help');
  });

  it("lets the old generation grow to twice the live heap, unless node was started with a growth of its own", () => {
    const set: string[] = [];
    assert.equal(setHeapGrowth(['--import', 'tsx'], (f) => set.push(f)), HEAP_GROWTH_PERCENT);
    assert.deepEqual(set, ['--heap-growing-percent=100']);
    assert.equal(setHeapGrowth(['--heap-growing-percent=50'], (f) => set.push(f)), 50);
    assert.equal(setHeapGrowth(['--heap_growing_percent=300'], (f) => set.push(f)), 300);
    assert.equal(setHeapGrowth(['--heap-growing-percent=0', '--import', 'tsx'], (f) => set.push(f)), 0, "0: V8's own choice");
    assert.equal(set.length, 1, "the operator's own flag is left alone");
  });
});

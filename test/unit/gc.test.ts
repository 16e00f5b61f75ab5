import assert from 'node:assert/strict';
import os from 'node:os';
import { describe, it } from 'node:test';
import { gcMode, usableCpus } from '../../src/lib/gc.js';

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

  it('runs the collector on the event loop thread with one CPU, on helper threads with more, unless told', () => {
    assert.equal(gcMode('auto', 1), 'single-threaded');
    assert.equal(gcMode('auto', 0.5), 'single-threaded');
    assert.equal(gcMode('auto', 2), 'parallel');
    assert.equal(gcMode('parallel', 1), 'parallel');
    assert.equal(gcMode('single-threaded', 8), 'single-threaded');
  });
});

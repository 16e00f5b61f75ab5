import assert from 'node:assert/strict';
import { PerformanceObserver } from 'node:perf_hooks';
import { describe, it } from 'node:test';
import { registry } from '../../src/metrics/index.js';

/** The pauses of each kind counted in `dialer_nodejs_gc_duration_seconds`, as GET /metrics serves them. */
async function counted(): Promise<{ total: number; buckets: string[] }> {
  const text = await registry.getSingleMetricAsString('dialer_nodejs_gc_duration_seconds');
  const total = [...text.matchAll(/^dialer_nodejs_gc_duration_seconds_count\{[^}]*\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
  const buckets = [...new Set([...text.matchAll(/le="([^"]+)"/g)].map((m) => m[1]!))];
  return { total, buckets };
}

/** Young-generation collections, several in one turn of the event loop (as under load). */
function allocate(): void {
  let keep: unknown[] = [];
  for (let i = 0; i < 300_000; i++) {
    keep.push({ i, list: [i] });
    if (keep.length > 50_000) keep = [];
  }
}

describe('garbage collection metric', () => {
  it('counts every pause, also several collections in one turn, in buckets around the 20 ms a caller hears', async () => {
    const before = (await counted()).total;
    let seen = 0;
    let batches = 0;
    const observer = new PerformanceObserver((list) => {
      batches++;
      seen += list.getEntries().length;
    });
    observer.observe({ entryTypes: ['gc'] });
    for (let round = 0; round < 20; round++) {
      allocate();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    observer.disconnect();
    const after = await counted();
    assert.ok(seen > batches, `several collections were delivered together (${seen} in ${batches} deliveries)`);
    assert.ok(after.total - before >= seen, `every pause counted: ${after.total - before} of at least ${seen}`);
    for (const le of ['0.005', '0.01', '0.02', '0.05', '0.1']) assert.ok(after.buckets.includes(le), `a ${le} s bucket`);
  });
});

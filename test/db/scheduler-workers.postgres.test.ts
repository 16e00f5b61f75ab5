/**
 * Many workers on one PostgreSQL: three worker processes share 2,000 leads; one is killed with
 * SIGKILL mid-call. Every lead is dialled once per attempt and never twice at once, no number is
 * in two calls at once, the rate limit holds across workers, the dead worker's leads are
 * recovered, and an abort racing the claims never yields an aborted lead that was dialled.
 * PostgreSQL only (PGlite is one process; the lifecycle suite covers it).
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDb } from '../helpers/db.js';
import { buildWorld, type World } from '../helpers/world.js';
import { endCall, startCallee, startWorker, type CalleeDial } from '../helpers/workers.js';

const LEADS = 2000;
const LIMITED = 120; // leads of the rate-limited configuration
const RATE = { max: 40, windowSeconds: 2 };
const NUMBERS = 30;

interface Dial extends CalleeDial {
  start: number;
  end?: number;
  abandoned?: boolean;
}

describe('three worker processes on one PostgreSQL', () => {
  let t: TestApp;
  let w: World;
  let callee: Awaited<ReturnType<typeof startCallee>>;
  const dials: Dial[] = [];
  let held = 0;
  let killedAt: number | undefined;
  const workers: ChildProcess[] = [];

  before(async () => {
    const db = await createTestDb('postgres');
    t = await buildTestApp({ db });
    w = await buildWorld(t);
    callee = await startCallee((d, res) => {
      const dial: Dial = { ...d, start: performance.now() };
      // A dial the killed worker sent just before it died may arrive after the kill: it ends at once.
      if (d.worker === 'w1' && killedAt !== undefined) Object.assign(dial, { end: dial.start, abandoned: true });
      dials.push(dial);
      // A short call; one in ten is busy (retried). Worker 1's calls become long after a while,
      // so that it surely has calls in flight when it is killed.
      const long = d.worker === 'w1' && dials.length > 250;
      if (long) held++;
      setTimeout(() => {
        // (A killed worker's call was closed at the kill; Node's server would notice only now.)
        if (dial.abandoned) return void res.destroy();
        dial.end = performance.now();
        const busy = parseInt(d.leadId.slice(0, 2), 16) % 10 === 0 && d.attempt === 1;
        endCall(res, busy ? { kind: 'busy' } : { kind: 'completed', outcome: 'confirmed', durationSeconds: 7 });
      }, long ? 10_000 : 5 + Math.random() * 40);
    });
  });

  after(async () => {
    for (const p of workers) p.kill('SIGKILL');
    await callee.close();
    await t.close();
    await t.db.close();
  });

  async function startOne(id: string): Promise<void> {
    const worker = startWorker(id, { databaseUrl: (t.db as { url?: string }).url!, calleeUrl: callee.url, leaseSeconds: 8, maxCalls: 15 });
    workers.push(worker.child);
    await worker.ready;
  }

  it('dials every lead once per attempt, never twice at once, within the pool and the rate limit, and survives kill -9', async () => {
    const flow = { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] };
    const configure = async (name: string, extra: Record<string, unknown>) => {
      const tpl = await w.reseller1.post('/templates', { name, reseller_id: w.r1, flow });
      const cfg = await w.reseller1.post('/configurations', {
        reseller_id: w.r1, template: tpl.body.id, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00', retry_offset: 0, max_retry: 1, ...extra,
      });
      assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
      return name;
    };
    const open = await configure('open', {});
    const limited = await configure('limited', { rate_limit_enabled: true, rate_limit_max_calls: RATE.max, rate_limit_window_seconds: RATE.windowSeconds });
    for (let i = 0; i < NUMBERS; i++) {
      assert.equal((await t.admin.post('/numbers', { phone_number: `+1212555${String(2000 + i)}`, provider: 'PROVIDER_A' })).status, 200);
    }
    const body = (template: string, i: number) => ({ request_id: `w-${i}`, template, reseller_id: w.r1, payload: { customer_mobile_number: `+1646${String(5000000 + i)}` } });
    const all: string[] = [];
    for (let start = 0; start < LEADS; start += 1000) {
      const batch = Array.from({ length: Math.min(1000, LEADS - start) }, (_, k) => body(start + k < LIMITED ? limited : open, start + k));
      const res = await w.reseller1.post('/leads/batch', { leads: batch });
      assert.equal(res.body.queued, batch.length);
      all.push(...res.body.results.map((r: any) => r.result.lead_call_tracker_id));
    }
    const limitedIds = new Set(all.slice(0, LIMITED));

    await Promise.all(['w1', 'w2', 'w3'].map(startOne));
    const victim = workers[0]!;

    // While they work: more leads, aborted as they are being claimed.
    const racing: string[] = [];
    const raceBatch = Array.from({ length: 200 }, (_, k) => body(open, LEADS + k));
    const raced = await w.reseller1.post('/leads/batch', { leads: raceBatch });
    racing.push(...raced.body.results.map((r: any) => r.result.lead_call_tracker_id));
    const abort = await w.reseller1.post('/lead/abort', { leads: racing.map((lead_id) => ({ lead_id, cancellation_reason: 'race' })) });

    // Kill worker 1 with SIGKILL while it has calls in flight.
    const deadline = Date.now() + 60_000;
    while (held === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    assert.ok(held > 0, 'worker 1 has live calls');
    victim.kill('SIGKILL');
    killedAt = performance.now();
    // Its calls in flight end with it.
    for (const d of dials) {
      if (d.worker === 'w1' && d.end === undefined) Object.assign(d, { end: killedAt, abandoned: true });
    }

    // Wait for every lead to finish.
    for (;;) {
      const { rows } = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM leads WHERE status <> 'FINISHED'`);
      if (rows[0]!.n === 0) break;
      assert.ok(Date.now() < deadline + 60_000, `${rows[0]!.n} leads still unfinished`);
      await new Promise((r) => setTimeout(r, 200));
    }
    for (const p of workers.slice(1)) p.kill('SIGTERM');

    const t0 = killedAt;
    // Once per attempt.
    const seen = new Set<string>();
    for (const d of dials) {
      const key = `${d.leadId}#${d.attempt}`;
      assert.ok(!seen.has(key), `${key} dialled twice`);
      seen.add(key);
    }
    // Never two calls at once on one lead or one number.
    const overlapFree = (key: (d: Dial) => string, what: string) => {
      const groups = new Map<string, Dial[]>();
      for (const d of dials) groups.set(key(d), [...(groups.get(key(d)) ?? []), d]);
      for (const [k, list] of groups) {
        list.sort((a, b) => a.start - b.start);
        for (let i = 1; i < list.length; i++) assert.ok(list[i]!.start >= list[i - 1]!.end!, `${what} ${k} in two calls at once: ${JSON.stringify([list[i - 1], list[i]].map((d) => ({ ...d, start: Math.round(d!.start - t0), end: Math.round(d!.end! - t0) })))}`);
      }
    };
    overlapFree((d) => d.leadId, 'lead');
    overlapFree((d) => d.from, 'number');
    // The rate limit, across workers, on arrival times (a little jitter allowed at the window's edge).
    const limitedStarts = dials.filter((d) => limitedIds.has(d.leadId)).map((d) => d.start).sort((a, b) => a - b);
    for (let i = 0; i < limitedStarts.length; i++) {
      let j = i;
      while (j < limitedStarts.length && limitedStarts[j]! - limitedStarts[i]! < RATE.windowSeconds * 1000 - 250) j++;
      assert.ok(j - i <= RATE.max, `${j - i} dials within one rate-limit window`);
    }
    // The dead worker's calls were recovered and, with retries left, dialled again.
    const abandoned = dials.filter((d) => d.abandoned);
    assert.ok(abandoned.length > 0);
    for (const d of abandoned) {
      const { rows } = await t.db.query<{ status: string; outcome: string; attempt_count: number }>('SELECT status, outcome, attempt_count FROM leads WHERE id = $1', [d.leadId]);
      const lead = rows[0]!;
      assert.equal(lead.status, 'FINISHED');
      if (d.attempt === 1) {
        const again = dials.find((x) => x.leadId === d.leadId && x.attempt === 2);
        assert.ok(again && again.start > killedAt, 'recovered and dialled again after the kill');
      } else assert.equal(lead.outcome, 'worker_lost');
    }
    // An aborted lead was never dialled; the others were.
    const dialled = new Set(dials.map((d) => d.leadId));
    for (const item of abort.body.leads) {
      if (item.status === 'success') assert.ok(!dialled.has(item.id), 'aborted and dialled');
      else assert.ok(dialled.has(item.id));
    }
    // Every dial has its attempt in the history; the only attempts without a dial are the killed
    // worker's, claimed but not yet placed when it died (recovered as worker_lost).
    const { rows: history } = await t.db.query<{ lead_id: string; attempt: number; outcome: string; worker_id: string }>(
      'SELECT lead_id, attempt, outcome, worker_id FROM call_attempts',
    );
    const { rows: sums } = await t.db.query<{ n: number }>('SELECT coalesce(sum(attempt_count), 0)::int AS n FROM leads');
    assert.equal(sums[0]!.n, history.length, 'attempt_count agrees with the history');
    const recorded = new Set(history.map((h) => `${h.lead_id}#${h.attempt}`));
    for (const d of dials) assert.ok(recorded.has(`${d.leadId}#${d.attempt}`), 'a dial without its attempt row');
    for (const h of history.filter((x) => !seen.has(`${x.lead_id}#${x.attempt}`))) {
      assert.equal(h.worker_id, 'w1');
      assert.equal(h.outcome, 'worker_lost');
    }
    const { rows: busy } = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbound_numbers WHERE status <> 'AVAILABLE'`);
    assert.equal(busy[0]!.n, 0);
  });
});

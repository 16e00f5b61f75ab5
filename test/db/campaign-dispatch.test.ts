/**
 * Campaigns at dispatch: two schedulers (on PostgreSQL each with connections of its own) share
 * campaigns' leads. The cap is sampled at the far side (the driver counts the calls it carries at
 * once), the pace from the recorded start times, pause by a plain lead that is called while the
 * paused campaign's leads are not, the breaker by callees that are busy. Runs on PGlite and on
 * PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openPostgres, type Db } from '../../src/db/index.js';
import { createLogger } from '../../src/lib/logger.js';
import type { CallEnd } from '../../src/lifecycle/index.js';
import { Scheduler } from '../../src/scheduler/index.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ScriptedDriver } from '../helpers/drivers.js';
import { buildWorld, type World } from '../helpers/world.js';

let t: TestApp;
let w: World;
let second: Db;
let seq = 0;
const log = createLogger('silent');

before(async () => {
  t = await buildTestApp();
  w = await buildWorld(t);
  const url = (t.db as { url?: string }).url;
  second = url ? await openPostgres(url, { max: 5 }) : t.db;
  const flow = { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] };
  const tpl = await w.reseller1.post('/templates', { name: 'dispatch', reseller_id: w.r1, flow });
  const cfg = await w.reseller1.post('/configurations', {
    reseller_id: w.r1, template: tpl.body.id, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00', retry_offset: 0, max_retry: 0,
  });
  assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
  for (let i = 0; i < 10; i++) assert.equal((await t.admin.post('/numbers', { phone_number: `+1212555${3000 + i}`, provider: 'PROVIDER_A' })).status, 200);
});
after(async () => {
  if (second !== t.db) await second.close();
  await t.close();
});

async function until(check: () => boolean | Promise<boolean>) {
  while (!(await check())) await new Promise((r) => setTimeout(r, 20));
}

/** The far side: every call of every worker, how many of each campaign are live at once at most. */
class Callee {
  readonly live = new Map<string, number>();
  readonly peak = new Map<string, number>();
  constructor(
    readonly campaignOf: Map<string, string>,
    readonly end: (leadId: string) => CallEnd = () => ({ kind: 'completed', outcome: 'confirmed', durationSeconds: 3 }),
  ) {}
  driver(): ScriptedDriver {
    return new ScriptedDriver('PROVIDER_A', async (request) => {
      const campaign = this.campaignOf.get(request.leadId) ?? 'none';
      const now = (this.live.get(campaign) ?? 0) + 1;
      this.live.set(campaign, now);
      this.peak.set(campaign, Math.max(this.peak.get(campaign) ?? 0, now));
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 60));
      this.live.set(campaign, this.live.get(campaign)! - 1);
      return this.end(request.leadId);
    });
  }
}

function workers(callee: Callee): Scheduler[] {
  return [t.db, second].map(
    (db, i) =>
      new Scheduler({ db, drivers: new Map([['PROVIDER_A', callee.driver()]]), log, workerId: `campaign-w${i}`, maxConcurrentCalls: 10, pollMs: 50, recoverEveryMs: 0, outbound: t.outbound }),
  );
}

async function campaign(body: Record<string, unknown>): Promise<string> {
  const res = await w.reseller1.post('/campaigns', { name: `c${++seq}`, reseller_id: w.r1, template: 'dispatch', ...body });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.id;
}

async function pushLeads(campaignId: string | undefined, n: number, campaignOf: Map<string, string>): Promise<string[]> {
  const leads = Array.from({ length: n }, () => ({
    request_id: `d-${++seq}`, template: 'dispatch', reseller_id: w.r1, payload: { customer_mobile_number: `+1646555${String(6000 + ++seq).padStart(4, '0')}` },
    ...(campaignId ? { campaign_id: campaignId } : {}),
  }));
  const res = await w.reseller1.post('/leads/batch', { leads });
  assert.equal(res.body.queued, n, JSON.stringify(res.body.results.find((r: { status: number }) => r.status !== 201)));
  const ids: string[] = res.body.results.map((r: { result: { lead_call_tracker_id: string } }) => r.result.lead_call_tracker_id);
  for (const id of ids) campaignOf.set(id, campaignId ?? 'none');
  return ids;
}

const progress = async (id: string) => (await w.reseller1.get(`/campaigns/${id}`)).body;

describe('campaigns at dispatch', () => {
  it('two workers never exceed the cap, space the paced starts by 1/rate, and progress adds up at every sample', async () => {
    const campaignOf = new Map<string, string>();
    const capped = await campaign({ max_concurrent_calls: 3 });
    const paced = await campaign({ max_calls_per_second: 20 });
    await pushLeads(capped, 40, campaignOf);
    await pushLeads(paced, 20, campaignOf);
    await pushLeads(undefined, 10, campaignOf);
    const callee = new Callee(campaignOf);
    const [a, b] = workers(callee);
    a!.start();
    b!.start();
    let samples = 0;
    try {
      await until(async () => {
        const [c, p] = await Promise.all([progress(capped), progress(paced)]);
        for (const x of [c, p]) assert.equal(x.progress.queued + x.progress.in_progress + x.progress.finished, x.progress.total, JSON.stringify(x.progress));
        assert.ok(c.progress.live_calls <= 3, JSON.stringify(c.progress));
        samples++;
        return c.status === 'completed' && p.status === 'completed';
      });
    } finally {
      await Promise.all([a!.stop(), b!.stop()]);
    }
    assert.ok(samples > 1);
    assert.equal(callee.peak.get(capped), 3, `peak ${callee.peak.get(capped)}`);
    // Leads without a campaign were called as before, beside them.
    const plain = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM leads WHERE template_name = 'dispatch' AND campaign_id IS NULL AND status = 'FINISHED'`);
    assert.equal(plain.rows[0]!.n, 10);
    // The pace: no two starts of the paced campaign closer than 1/rate (50 ms), by the recorded start times.
    const { rows } = await t.db.query<{ gap_ms: number | null }>(
      `SELECT extract(epoch FROM a.started_at - lag(a.started_at) OVER (ORDER BY a.started_at)) * 1000 AS gap_ms
       FROM call_attempts a JOIN leads l ON l.id = a.lead_id WHERE l.campaign_id = $1`,
      [paced],
    );
    const gaps = rows.map((r) => r.gap_ms).filter((g): g is number => g !== null);
    assert.equal(gaps.length, 19);
    assert.ok(Math.min(...gaps) >= 49.9, `closest starts ${Math.min(...gaps)} ms apart`);
    const done = await progress(paced);
    assert.deepEqual(done.progress.by_outcome, { confirmed: 20 });
    assert.equal(done.progress.answer_rate, 1);
  });

  it('pause stops new dials on every worker while other leads are called; resume finishes the rest', async () => {
    const campaignOf = new Map<string, string>();
    const id = await campaign({ max_concurrent_calls: 2 });
    const ids = await pushLeads(id, 30, campaignOf);
    const callee = new Callee(campaignOf);
    const [a, b] = workers(callee);
    a!.start();
    b!.start();
    try {
      await until(async () => (await progress(id)).progress.finished >= 4);
      const paused = await w.reseller1.post(`/campaigns/${id}/pause`);
      assert.equal(paused.status, 200);
      const attemptsAtPause = (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM call_attempts a JOIN leads l ON l.id = a.lead_id WHERE l.campaign_id = $1`, [id])).rows[0]!.n;
      // The workers go on claiming: a lead without a campaign pushed now is called and finished ...
      const [plain] = await pushLeads(undefined, 1, campaignOf);
      await until(async () => (await w.reseller1.get(`/leads/${plain}`)).body.status === 'FINISHED');
      await until(async () => (await progress(id)).progress.in_progress === 0);
      // ... while no call of the paused campaign started after the pause answered.
      const after = (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM call_attempts a JOIN leads l ON l.id = a.lead_id WHERE l.campaign_id = $1`, [id])).rows[0]!.n;
      assert.equal(after, attemptsAtPause);
      const held = (await progress(id)).progress;
      assert.ok(held.queued > 0, JSON.stringify(held));
      const waiting = ids.find((x) => campaignOf.get(x) === id);
      const leadNow = (await w.reseller1.get(`/leads/${waiting}`)).body;
      if (leadNow.status !== 'FINISHED') assert.equal(leadNow.held_reason, 'campaign_paused');

      assert.equal((await w.reseller1.post(`/campaigns/${id}/resume`)).status, 200);
      await until(async () => (await progress(id)).status === 'completed');
      const done = (await progress(id)).progress;
      assert.equal(done.finished, 30);
      assert.ok(callee.peak.get(id)! <= 2);
    } finally {
      await Promise.all([a!.stop(), b!.stop()]);
    }
  });

  it('the breaker pauses a campaign whose callees are busy, with the reason; resume clears it', async () => {
    const campaignOf = new Map<string, string>();
    const id = await campaign({ max_concurrent_calls: 1, circuit_breaker: { failure_ratio: 0.5, window_seconds: 60, min_calls: 3 } });
    await pushLeads(id, 60, campaignOf);
    const callee = new Callee(campaignOf, () => ({ kind: 'busy' }));
    const [a, b] = workers(callee);
    a!.start();
    b!.start();
    try {
      await until(async () => (await progress(id)).status === 'paused');
      const paused = await progress(id);
      assert.match(paused.paused_reason, /circuit breaker: \d+ of the last \d+ attempts failed/);
      await until(async () => (await progress(id)).progress.in_progress === 0);
      assert.ok((await progress(id)).progress.queued > 0);
      assert.equal((await progress(id)).progress.answer_rate, 0);
      const resumed = await w.reseller1.post(`/campaigns/${id}/resume`);
      assert.equal(resumed.body.status, 'running');
      assert.equal(resumed.body.paused_reason, null);
    } finally {
      await Promise.all([a!.stop(), b!.stop()]);
      await w.reseller1.post(`/campaigns/${id}/stop`);
    }
  });
});

/**
 * Caps across worker processes on one PostgreSQL: two worker processes share a campaign's leads
 * (its cap and pace) and the leads of a configuration with a cap of its own; one worker is killed
 * with SIGKILL while it has calls live. The caps are sampled at the far side (the callee server
 * counts the calls it carries at once, a killed worker's calls ending with it): never exceeded,
 * before the kill, while the dead worker's leads hold their leases, or after they are recovered.
 * Every lead finishes, and every lead the dead worker held is dialled again. PostgreSQL only.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDb } from '../helpers/db.js';
import { buildWorld, type World } from '../helpers/world.js';
import { endCall, startCallee, startWorker, type CalleeDial } from '../helpers/workers.js';

const CAMPAIGN_LEADS = 60;
const CAMPAIGN_CAP = 4;
const CONFIG_LEADS = 40;
const CONFIG_CAP = 3;

interface Dial extends CalleeDial {
  group: string;
  end?: number;
}

describe('two worker processes share caps, and one dies', () => {
  let t: TestApp;
  let w: World;
  let callee: Awaited<ReturnType<typeof startCallee>>;
  const dials: Dial[] = [];
  const groupOf = new Map<string, string>();
  const live = new Map<string, number>();
  const peak = new Map<string, number>();
  let killed = false;
  let victimLive = 0;
  const workers: ChildProcess[] = [];

  const ended = (d: Dial) => {
    if (d.end !== undefined) return;
    d.end = performance.now();
    live.set(d.group, live.get(d.group)! - 1);
  };

  before(async () => {
    const db = await createTestDb('postgres');
    t = await buildTestApp({ db });
    w = await buildWorld(t);
    callee = await startCallee((d, res) => {
      const dial: Dial = { ...d, group: groupOf.get(d.leadId)! };
      dials.push(dial);
      const now = (live.get(dial.group) ?? 0) + 1;
      live.set(dial.group, now);
      peak.set(dial.group, Math.max(peak.get(dial.group) ?? 0, now));
      // A dial the killed worker sent just before it died: it ends at once.
      if (d.worker === 'w1' && killed) return void (ended(dial), res.destroy());
      // Worker 1's calls hang on until it is killed: it surely has calls live then.
      if (d.worker === 'w1') {
        victimLive++;
        res.on('close', () => ended(dial));
        return;
      }
      setTimeout(() => {
        ended(dial);
        endCall(res, { kind: 'completed', outcome: 'confirmed', durationSeconds: 2 });
      }, 20 + Math.random() * 60);
    });
  });

  after(async () => {
    for (const p of workers) p.kill('SIGKILL');
    await callee.close();
    await t.close();
    await t.db.close();
  });

  async function startOne(id: string): Promise<ChildProcess> {
    const worker = startWorker(id, { databaseUrl: (t.db as { url?: string }).url!, calleeUrl: callee.url, leaseSeconds: 3, maxCalls: 10 });
    workers.push(worker.child);
    await worker.ready;
    return worker.child;
  }

  it('never exceeds the campaign cap or the configuration cap, and loses no lead', async () => {
    const flow = { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] };
    for (const [name, extra] of [['in-campaign', {}], ['config-capped', { max_concurrent_calls: CONFIG_CAP }]] as const) {
      const tpl = await w.reseller1.post('/templates', { name, reseller_id: w.r1, flow });
      const cfg = await w.reseller1.post('/configurations', {
        reseller_id: w.r1, template: tpl.body.id, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00', retry_offset: 0, max_retry: 1, ...extra,
      });
      assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
    }
    for (let i = 0; i < 20; i++) assert.equal((await t.admin.post('/numbers', { phone_number: `+1212555${String(6000 + i)}`, provider: 'PROVIDER_A' })).status, 200);
    const campaign = await w.reseller1.post('/campaigns', { name: 'shared', reseller_id: w.r1, template: 'in-campaign', max_concurrent_calls: CAMPAIGN_CAP, max_calls_per_second: 20 });
    assert.equal(campaign.status, 201, JSON.stringify(campaign.body));
    let seq = 0;
    const push = async (template: string, n: number, extra: Record<string, unknown>) => {
      const leads = Array.from({ length: n }, () => ({ request_id: `k-${++seq}`, template, reseller_id: w.r1, payload: { customer_mobile_number: `+1646${String(7000000 + seq)}` }, ...extra }));
      const res = await w.reseller1.post('/leads/batch', { leads });
      assert.equal(res.body.queued, n, JSON.stringify(res.body));
      for (const r of res.body.results) groupOf.set(r.result.lead_call_tracker_id, template);
    };
    await push('in-campaign', CAMPAIGN_LEADS, { campaign_id: campaign.body.id });
    await push('config-capped', CONFIG_LEADS, {});

    const [victim] = await Promise.all(['w1', 'w2'].map(startOne));
    const deadline = Date.now() + 60_000;
    while (victimLive < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    assert.ok(victimLive >= 2, 'worker 1 has live calls');
    victim!.kill('SIGKILL');
    killed = true;

    for (;;) {
      const { rows } = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM leads WHERE status <> 'FINISHED'`);
      if (rows[0]!.n === 0) break;
      assert.ok(Date.now() < deadline + 60_000, `${rows[0]!.n} leads still unfinished`);
      await new Promise((r) => setTimeout(r, 100));
    }
    workers[1]!.kill('SIGTERM');

    assert.ok(peak.get('in-campaign')! <= CAMPAIGN_CAP, `campaign peak ${peak.get('in-campaign')}`);
    assert.ok(peak.get('config-capped')! <= CONFIG_CAP, `configuration peak ${peak.get('config-capped')}`);
    // No lead lost: every one finished, and each the dead worker held was dialled again by the other.
    const { rows } = await t.db.query<{ id: string; outcome: string | null; attempt_count: number }>(`SELECT id, outcome, attempt_count FROM leads`);
    assert.equal(rows.length, CAMPAIGN_LEADS + CONFIG_LEADS);
    const lost = dials.filter((d) => d.worker === 'w1' && d.attempt === 1).map((d) => d.leadId);
    assert.ok(lost.length >= 2);
    for (const id of lost) {
      assert.ok(dials.some((d) => d.leadId === id && d.worker === 'w2' && d.attempt === 2), `lead ${id} dialled again`);
    }
    const outcomes = new Map<string, number>();
    for (const r of rows) outcomes.set(r.outcome ?? 'none', (outcomes.get(r.outcome ?? 'none') ?? 0) + 1);
    assert.deepEqual(Object.fromEntries(outcomes), { confirmed: CAMPAIGN_LEADS + CONFIG_LEADS });
    const progress = (await w.reseller1.get(`/campaigns/${campaign.body.id}`)).body;
    assert.equal(progress.status, 'completed');
    assert.equal(progress.progress.finished, CAMPAIGN_LEADS);
  });
});

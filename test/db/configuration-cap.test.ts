/**
 * A configuration's cap on live calls at dispatch: two schedulers (on PostgreSQL each with
 * connections of its own) share a capped template's leads. The cap is sampled at the far side (the
 * driver counts the calls it carries at once); a template without a cap is called beside it as
 * before; a due lead held by the cap says so. Runs on PGlite and on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openPostgres, type Db } from '../../src/db/index.js';
import { createLogger } from '../../src/lib/logger.js';
import { Scheduler } from '../../src/scheduler/index.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ScriptedDriver } from '../helpers/drivers.js';
import { buildWorld, type World } from '../helpers/world.js';

let t: TestApp;
let w: World;
let second: Db;
let seq = 0;
let cappedConfig: string;
const log = createLogger('silent');

before(async () => {
  t = await buildTestApp();
  w = await buildWorld(t);
  const url = (t.db as { url?: string }).url;
  second = url ? await openPostgres(url, { max: 5 }) : t.db;
  const flow = { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] };
  for (const [name, cap] of [['capped', 3], ['free', null]] as const) {
    const tpl = await w.reseller1.post('/templates', { name, reseller_id: w.r1, flow });
    const cfg = await w.reseller1.post('/configurations', {
      reseller_id: w.r1, template: tpl.body.id, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00', retry_offset: 0, max_retry: 0,
      ...(cap ? { max_concurrent_calls: cap } : {}),
    });
    assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
    assert.equal(cfg.body.max_concurrent_calls, cap);
    if (cap) cappedConfig = cfg.body.id;
  }
  for (let i = 0; i < 12; i++) assert.equal((await t.admin.post('/numbers', { phone_number: `+1212555${4000 + i}`, provider: 'PROVIDER_A' })).status, 200);
});
after(async () => {
  if (second !== t.db) await second.close();
  await t.close();
});

async function until(check: () => boolean | Promise<boolean>) {
  while (!(await check())) await new Promise((r) => setTimeout(r, 20));
}

async function pushLeads(template: string, n: number, templateOf: Map<string, string>): Promise<string[]> {
  const leads = Array.from({ length: n }, () => ({
    request_id: `cc-${++seq}`, template, reseller_id: w.r1, payload: { customer_mobile_number: `+1646555${String(7000 + ++seq).padStart(4, '0')}` },
  }));
  const res = await w.reseller1.post('/leads/batch', { leads });
  assert.equal(res.body.queued, n, JSON.stringify(res.body.results.find((r: { status: number }) => r.status !== 201)));
  const ids: string[] = res.body.results.map((r: { result: { lead_call_tracker_id: string } }) => r.result.lead_call_tracker_id);
  for (const id of ids) templateOf.set(id, template);
  return ids;
}

const finished = async (template: string) =>
  (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM leads WHERE template_name = $1 AND reseller_id = $2 AND status = 'FINISHED'`, [template, w.r1])).rows[0]!.n;

describe("a configuration's cap on live calls", () => {
  it('two workers never exceed it, leads of other configurations are called beside it, and a held lead says why', async () => {
    const templateOf = new Map<string, string>();
    const live = new Map<string, number>();
    const peak = new Map<string, number>();
    // The far side: calls of the capped template hang on until released, so the cap is reached and held.
    let release = false;
    const driver = () =>
      new ScriptedDriver('PROVIDER_A', async (request) => {
        const template = templateOf.get(request.leadId)!;
        const now = (live.get(template) ?? 0) + 1;
        live.set(template, now);
        peak.set(template, Math.max(peak.get(template) ?? 0, now));
        await until(() => template !== 'capped' || release);
        await new Promise((r) => setTimeout(r, 20 + Math.random() * 60));
        live.set(template, live.get(template)! - 1);
        return { kind: 'completed', outcome: 'confirmed', durationSeconds: 3 };
      });
    const [a, b] = [t.db, second].map(
      (db, i) =>
        new Scheduler({ db, drivers: new Map([['PROVIDER_A', driver()]]), log, workerId: `cap-w${i}`, maxConcurrentCalls: 10, pollMs: 50, recoverEveryMs: 0, outbound: t.outbound }),
    );
    const capped = await pushLeads('capped', 30, templateOf);
    a!.start();
    b!.start();
    try {
      await until(() => (live.get('capped') ?? 0) === 3);
      // Leads of a configuration without a cap, pushed behind the held ones, are called meanwhile.
      await pushLeads('free', 10, templateOf);
      await until(async () => (await finished('free')) === 10);
      assert.equal(peak.get('capped'), 3);
      const { rows } = await t.db.query<{ id: string }>(`SELECT id FROM leads WHERE id = ANY($1::text[]) AND status = 'BACKLOG' LIMIT 1`, [capped]);
      const held = await w.reseller1.get(`/leads/${rows[0]!.id}`);
      assert.equal(held.body.held_reason, 'configuration_cap');
      release = true;
      await until(async () => (await finished('capped')) === 30);
    } finally {
      await Promise.all([a!.stop(), b!.stop()]);
    }
    assert.equal(peak.get('capped'), 3, `peak ${peak.get('capped')}`);
    const attempts = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM call_attempts WHERE lead_id = ANY($1::text[])`, [capped]);
    assert.equal(attempts.rows[0]!.n, 30);
  });

  it('is refused when not a positive integer, nothing written', async () => {
    const current = (await w.reseller1.get(`/configurations/${cappedConfig}`)).body;
    for (const bad of [0, -1, 2.5, 'three']) {
      const res = await w.reseller1.put(`/configurations/${cappedConfig}`, { ...current, max_concurrent_calls: bad });
      assert.equal(res.status, 400, `${bad}: ${res.status}`);
    }
    assert.equal((await w.reseller1.get(`/configurations/${cappedConfig}`)).body.max_concurrent_calls, 3);
  });
});

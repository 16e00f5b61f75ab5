/**
 * A SIP trunk's caps at dispatch: two schedulers (on PostgreSQL each with connections of its own)
 * share leads of configurations that dial through trunks. Channels are counted at the far side
 * (the driver counts the calls it carries at once on each trunk, as the claim assigned them); a
 * trunk full of calls sends the next ones to its failover trunk, and with both full a due lead
 * says why it waits; a paced trunk's calls start 1/rate apart by the recorded start times. Calls
 * that come in through a trunk hold its channels too, and a full trunk takes no more.
 * Runs on PGlite and on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openPostgres, type Db } from '../../src/db/index.js';
import { openInbound } from '../../src/lifecycle/index.js';
import { createLogger } from '../../src/lib/logger.js';
import { Scheduler } from '../../src/scheduler/index.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ScriptedDriver } from '../helpers/drivers.js';
import { buildWorld, type World } from '../helpers/world.js';

let t: TestApp;
let w: World;
let second: Db;
let seq = 0;
const log = createLogger('silent');
const flow = { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] };

before(async () => {
  t = await buildTestApp();
  w = await buildWorld(t);
  const url = (t.db as { url?: string }).url;
  second = url ? await openPostgres(url, { max: 5 }) : t.db;
  for (let i = 0; i < 8; i++) assert.equal((await t.admin.post('/numbers', { phone_number: `+1212555${6000 + i}`, provider: 'SIP' })).status, 200);
});
after(async () => {
  if (second !== t.db) await second.close();
  await t.close();
});

async function until(check: () => boolean | Promise<boolean>) {
  while (!(await check())) await new Promise((r) => setTimeout(r, 20));
}

async function trunk(name: string, caps: Record<string, unknown>): Promise<string> {
  const res = await w.reseller1.post('/trunks', { reseller_id: w.r1, name, address: 'sip.carrier.example', transport: 'udp', codecs: ['PCMU'], ...caps });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.id;
}

async function sipTemplate(name: string, trunkId: string): Promise<void> {
  const tpl = await w.reseller1.post('/templates', { name, reseller_id: w.r1, flow });
  const cfg = await w.reseller1.post('/configurations', {
    reseller_id: w.r1, template: tpl.body.id, calling_provider: 'SIP', trunk_id: trunkId, call_start_time: '00:00', call_end_time: '00:00', retry_offset: 0, max_retry: 0,
  });
  assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
}

async function pushLeads(template: string, n: number): Promise<string[]> {
  const leads = Array.from({ length: n }, () => ({ request_id: `tc-${++seq}`, template, reseller_id: w.r1, payload: { customer_mobile_number: `+1646555${String(8000 + ++seq).padStart(4, '0')}` } }));
  const res = await w.reseller1.post('/leads/batch', { leads });
  assert.equal(res.body.queued, n, JSON.stringify(res.body.results.find((r: { status: number }) => r.status !== 201)));
  return res.body.results.map((r: { result: { lead_call_tracker_id: string } }) => r.result.lead_call_tracker_id);
}

const finished = async (ids: string[]) => (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM leads WHERE id = ANY($1::text[]) AND status = 'FINISHED'`, [ids])).rows[0]!.n;

/** Two workers whose driver counts the live calls on each trunk (the trunk the claim gave the lead). */
function workers(hold: () => boolean) {
  const live = new Map<string, number>();
  const peak = new Map<string, number>();
  const driver = () =>
    new ScriptedDriver('SIP', async (request) => {
      const { rows } = await t.db.query<{ trunk_id: string }>('SELECT trunk_id FROM leads WHERE id = $1', [request.leadId]);
      const trunkId = rows[0]!.trunk_id;
      live.set(trunkId, (live.get(trunkId) ?? 0) + 1);
      peak.set(trunkId, Math.max(peak.get(trunkId) ?? 0, live.get(trunkId)!));
      await until(() => !hold());
      await new Promise((r) => setTimeout(r, 10 + Math.random() * 30));
      live.set(trunkId, live.get(trunkId)! - 1);
      return { kind: 'completed', outcome: 'confirmed', durationSeconds: 3 };
    });
  const schedulers = [t.db, second].map(
    (db, i) => new Scheduler({ db, drivers: new Map([['SIP', driver()]]), log, workerId: `trunk-w${i}-${++seq}`, maxConcurrentCalls: 10, pollMs: 50, recoverEveryMs: 0, outbound: t.outbound }),
  );
  for (const s of schedulers) s.start();
  return { live, peak, stop: () => Promise.all(schedulers.map((s) => s.stop())) };
}

describe("a SIP trunk's caps across workers", () => {
  it('max_channels holds on two workers, the overflow goes to the failover trunk, and a lead held by both says trunk_cap', async () => {
    const backup = await trunk('backup', { max_channels: 1 });
    const main = await trunk('main', { max_channels: 2, failover_trunk_id: backup });
    await sipTemplate('trunk-capped', main);
    let hold = true;
    const far = workers(() => hold);
    const leads = await pushLeads('trunk-capped', 10);
    try {
      await until(() => far.live.get(main) === 2 && far.live.get(backup) === 1);
      const { rows } = await t.db.query<{ id: string }>(`SELECT id FROM leads WHERE id = ANY($1::text[]) AND status = 'BACKLOG' LIMIT 1`, [leads]);
      const held = await w.reseller1.get(`/leads/${rows[0]!.id}`);
      assert.equal(held.body.held_reason, 'trunk_cap', JSON.stringify(held.body));
      hold = false;
      await until(async () => (await finished(leads)) === 10);
    } finally {
      await far.stop();
    }
    assert.equal(far.peak.get(main), 2);
    assert.equal(far.peak.get(backup), 1);
    const calls = await t.db.query<{ trunk_id: string; n: number }>(`SELECT trunk_id, count(*)::int AS n FROM leads WHERE id = ANY($1::text[]) GROUP BY trunk_id`, [leads]);
    assert.equal(calls.rows.reduce((s, r) => s + r.n, 0), 10);
  });

  it('max_calls_per_second spaces the starts of two workers by 1/rate', async () => {
    const paced = await trunk('paced', { max_calls_per_second: 10 });
    await sipTemplate('trunk-paced', paced);
    const far = workers(() => false);
    const leads = await pushLeads('trunk-paced', 6);
    try {
      await until(async () => (await finished(leads)) === 6);
    } finally {
      await far.stop();
    }
    const { rows } = await t.db.query<{ gap_ms: number | null }>(
      `SELECT extract(epoch FROM a.started_at - lag(a.started_at) OVER (ORDER BY a.started_at)) * 1000 AS gap_ms FROM call_attempts a WHERE a.lead_id = ANY($1::text[])`,
      [leads],
    );
    const gaps = rows.map((r) => r.gap_ms).filter((g): g is number => g !== null).map(Number);
    assert.equal(gaps.length, 5);
    assert.ok(Math.min(...gaps) >= 99.9, `closest starts ${Math.min(...gaps)} ms apart`);
  });

  it('a call that comes in through a trunk holds one of its channels; a full trunk opens no lead for the next', async () => {
    const single = await trunk('single', { max_channels: 1 });
    const tpl = await w.reseller1.post('/templates', { name: 'trunk-inbound', reseller_id: w.r1, flow });
    const { rows } = await t.db.query<{ id: string }>(`SELECT id FROM outbound_numbers WHERE provider = 'SIP' LIMIT 1`);
    const open = (id: string) =>
      t.db.tx((q) =>
        openInbound(
          q,
          { id, resellerId: w.r1, merchantId: null, templateId: tpl.body.id, templateName: 'trunk-inbound', callSid: `in-${id}`, provider: 'SIP', numberId: rows[0]!.id, payload: {}, trunkId: single },
          `attempt-${id}`,
        ),
      );
    assert.equal(await open(`inbound-a-${++seq}`), true);
    assert.equal((await w.reseller1.get(`/trunks/${single}`)).body.channels_in_use, 1);
    const refused = `inbound-b-${++seq}`;
    assert.equal(await open(refused), false);
    assert.equal((await t.db.query('SELECT 1 FROM leads WHERE id = $1', [refused])).rows.length, 0);
  });
});

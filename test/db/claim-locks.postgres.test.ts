/**
 * A claim's row locks on PostgreSQL, where other transactions run beside it: a transaction that
 * only references a number or a lead (a foreign-key check takes a KEY SHARE lock on the row it
 * points at: the number health round writing a number's figures, an attempt row naming its lead)
 * does not hide that number or lead from the claim. The claim changes no key, so it needs no lock
 * that conflicts with those.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { Db } from '../../src/db/index.js';
import { createLogger } from '../../src/lib/logger.js';
import { Scheduler } from '../../src/scheduler/index.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDb } from '../helpers/db.js';
import { gate, ScriptedDriver } from '../helpers/drivers.js';
import { buildWorld, type World } from '../helpers/world.js';

let db: Db;
let t: TestApp;
let w: World;

before(async () => {
  db = await createTestDb('postgres');
  t = await buildTestApp({ db });
  w = await buildWorld(t);
});
after(() => t.close());

it('dials the numbers and leads another transaction holds a KEY SHARE lock on (a foreign-key check), without waiting for it', async () => {
  const tpl = await w.reseller1.post('/templates', {
    name: 'locks',
    reseller_id: w.r1,
    flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] },
  });
  assert.equal(tpl.status, 200);
  const cfg = await w.reseller1.post('/configurations', { reseller_id: w.r1, template: tpl.body.id, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00', max_retry: 0 });
  assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
  await db.query(`UPDATE outbound_numbers SET status = 'DISABLED', lead_id = NULL`);
  const numbers: string[] = [];
  for (const phone_number of ['+12125550601', '+12125550602']) {
    const res = await t.admin.post('/numbers', { phone_number, provider: 'PROVIDER_A' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    numbers.push(res.body.id);
  }
  const leads: string[] = [];
  for (let i = 0; i < 2; i++) {
    const res = await w.reseller1.post('/leads', { request_id: `locks-${i}`, template: 'locks', reseller_id: w.r1, payload: { customer_mobile_number: `+1646555070${i}` } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    leads.push(res.body.lead_call_tracker_id);
  }

  // Another connection holds, in an open transaction, what a foreign-key check holds: the number
  // health round's insert of a number's figures, an insert naming a lead.
  const held = gate();
  const release = gate();
  const holder = db.tx(async (q) => {
    await q.query(
      `INSERT INTO outbound_number_health (number_id, calls, answered, short_calls, pool_calls, pool_answered, measured_at)
       SELECT id, 0, 0, 0, 0, 0, now() FROM outbound_numbers WHERE id = ANY ($1::text[])`,
      [numbers],
    );
    await q.query('SELECT 1 FROM leads WHERE id = ANY ($1::text[]) FOR KEY SHARE', [leads]);
    held.open();
    await release.wait;
  });
  await held.wait;
  try {
    const driver = new ScriptedDriver('PROVIDER_A');
    const sched = new Scheduler({ db, drivers: new Map([[driver.provider, driver]]), log: createLogger('silent'), recoverEveryMs: 0, outbound: t.outbound, maxConcurrentCalls: 2 });
    await sched.drain();
    assert.deepEqual(driver.dials.map((d) => d.leadId).sort(), [...leads].sort(), 'both leads dialled while the other transaction is open');
    assert.deepEqual(new Set(driver.dials.map((d) => d.from)), new Set(['+12125550601', '+12125550602']));
  } finally {
    release.open();
    await holder;
  }
  const after = await db.query<{ status: string }>('SELECT status FROM leads WHERE id = ANY ($1::text[])', [leads]);
  assert.deepEqual(after.rows.map((r) => r.status), ['FINISHED', 'FINISHED']);
});

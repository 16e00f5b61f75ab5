import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../src/lib/logger.js';
import { Scheduler } from '../../src/scheduler/index.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { gate, ScriptedDriver } from '../helpers/drivers.js';
import { buildWorld, type World } from '../helpers/world.js';

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

let t: TestApp;
let w: World;
before(async () => {
  t = await buildTestApp();
  w = await buildWorld(t);
});
after(() => t.close());

let n = 0;
// Valid US numbers in the 646 area (NYC), distinct per call.
const phone = () => `+1646555${String(1000 + ++n).padStart(4, '0')}`;

describe('outbound numbers', () => {
  it('creates with defaults, reads, lists with filters', async () => {
    const p = phone();
    const res = await t.admin.post('/numbers', { phone_number: p, provider: 'PROVIDER_B' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.phone_number, p);
    assert.equal(res.body.status, 'AVAILABLE');
    assert.equal(res.body.channel, 'voice');
    assert.equal(res.body.lead_id, null);
    assert.deepEqual((await w.reseller1.get(`/numbers/${res.body.id}`)).body, res.body);
    const list = await w.reseller1.get(`/numbers?provider=PROVIDER_B&phone_number=${encodeURIComponent(p)}`);
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.data, [res.body]);
    assert.equal((await w.reseller1.get('/numbers?status=BOGUS')).status, 400);
  });

  it('answers 400 for invalid or formatted phone numbers and missing fields', async () => {
    for (const bad of ['+1 (646) 555-1234', '6465551234', '+12', '+1646555123456789', '']) {
      const res = await t.admin.post('/numbers', { phone_number: bad, provider: 'PROVIDER_A' });
      assert.equal(res.status, 400, bad);
      assert.equal(res.body.errors[0].path, '/phone_number');
    }
    // Written right, but no number of its country: said so, under the same code.
    const fictional = await t.admin.post('/numbers', { phone_number: '+15555550104', provider: 'PROVIDER_A' });
    assert.equal(fictional.status, 400);
    assert.equal(fictional.body.code, 'invalid_phone_number');
    assert.deepEqual(fictional.body.errors, [{ path: '/phone_number', message: 'is written as E.164, but is not a valid number for its country (+1, United States and 24 other countries)' }]);
    assert.match(fictional.body.detail, /^phone_number \+15555550104 is written as E\.164, but is not a valid number for its country/);
    assert.equal((await t.admin.post('/numbers', { phone_number: phone() })).status, 400);
    assert.equal((await t.admin.post('/numbers', { phone_number: phone(), provider: 'PROVIDER_Z' })).status, 400);
    assert.equal((await t.admin.post('/numbers', { phone_number: phone(), provider: 'PROVIDER_A', status: 'IN_USE' })).status, 400);
  });

  it('answers 409 for a duplicate phone number, on create and on update', async () => {
    const p = phone();
    const a = await t.admin.post('/numbers', { phone_number: p, provider: 'PROVIDER_A' });
    assert.equal((await t.admin.post('/numbers', { phone_number: p, provider: 'PROVIDER_C' })).status, 409);
    const b = await t.admin.post('/numbers', { phone_number: phone(), provider: 'PROVIDER_A' });
    const res = await t.admin.put(`/numbers/${b.body.id}`, { phone_number: p, provider: 'PROVIDER_A', status: 'AVAILABLE', channel: 'voice' });
    assert.equal(res.status, 409);
    assert.equal(res.body.code, 'duplicate_number');
    assert.ok(a.body.id);
  });

  it('replaces, disables, deletes; 404 for unknown ids', async () => {
    const a = (await t.admin.post('/numbers', { phone_number: phone(), provider: 'PROVIDER_A' })).body;
    const put = await t.admin.put(`/numbers/${a.id}`, { ...a, provider: 'PROVIDER_C', status: 'DISABLED', channel: 'voice' });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.equal(put.body.status, 'DISABLED');
    assert.equal(put.body.provider, 'PROVIDER_C');
    assert.equal((await t.admin.put(`/numbers/${a.id}`, { ...a, id: 'other' })).status, 400);
    assert.equal((await t.admin.put('/numbers/nope', { phone_number: phone(), provider: 'PROVIDER_A' })).status, 404);
    assert.equal((await t.admin.delete(`/numbers/${a.id}`)).status, 200);
    assert.equal((await t.admin.get(`/numbers/${a.id}`)).status, 404);
    assert.equal((await t.admin.delete(`/numbers/${a.id}`)).status, 404);
  });

  it('lets only admins change numbers and resellers read them', async () => {
    const body = { phone_number: phone(), provider: 'PROVIDER_A' };
    assert.equal((await w.reseller1.post('/numbers', body)).status, 403);
    assert.equal((await w.merchant1.get('/numbers')).status, 403);
    assert.equal((await w.user1.get('/numbers')).status, 403);
    assert.equal((await t.anon.get('/numbers')).status, 401);
  });

  it('hands each free number to one call at a time and refuses to change or delete it while IN_USE', async () => {
    const p = phone();
    const num = (await t.admin.post('/numbers', { phone_number: p, provider: 'PROVIDER_A', channel: 'voice' })).body;
    // Only this number is free for PROVIDER_A among the ones this test made available.
    await t.db.query(`UPDATE outbound_numbers SET status = 'DISABLED' WHERE provider = 'PROVIDER_A' AND id <> $1`, [num.id]);
    const tpl = await w.reseller1.post('/templates', { name: 'numbers-pool', reseller_id: w.r1, flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] } });
    assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
    const cfg = await w.reseller1.post('/configurations', { reseller_id: w.r1, template: tpl.body.id, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00', max_retry: 0 });
    assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
    // Two leads, one number: the dialler takes it for one call and gives it back when that call ends.
    const hold = gate();
    const driver = new ScriptedDriver('PROVIDER_A', async () => (await hold.wait, { kind: 'completed', outcome: 'confirmed', durationSeconds: 3 }));
    const scheduler = new Scheduler({ db: t.db, drivers: new Map([['PROVIDER_A', driver]]), log: createLogger('silent'), pollMs: 20, outbound: t.outbound });
    for (const request_id of ['pool-1', 'pool-2']) {
      const pushed = await w.reseller1.post('/leads', { request_id, template: 'numbers-pool', reseller_id: w.r1, payload: { customer_mobile_number: phone() } });
      assert.equal(pushed.status, 201, JSON.stringify(pushed.body));
    }
    scheduler.start();
    try {
      await until('the first call', () => driver.dials.length === 1);
      const read = await t.admin.get(`/numbers/${num.id}`);
      assert.equal(read.body.status, 'IN_USE');
      assert.equal(read.body.lead_id, driver.dials[0]!.leadId);

      const disable = await t.admin.put(`/numbers/${num.id}`, { phone_number: p, provider: 'PROVIDER_A', status: 'DISABLED', channel: 'voice' });
      assert.equal(disable.status, 409);
      assert.equal(disable.body.code, 'number_in_use');
      assert.equal((await t.admin.delete(`/numbers/${num.id}`)).status, 409);
      assert.equal((await t.admin.get(`/numbers/${num.id}`)).body.status, 'IN_USE');
      assert.equal(driver.dials.length, 1, 'the other lead waits: no number is free');

      hold.open();
      await until('the second call, on the number the first gave back', () => driver.dials.length === 2);
      await until('the number given back again', async () => (await t.admin.get(`/numbers/${num.id}`)).body.status === 'AVAILABLE');
    } finally {
      await scheduler.stop();
    }
    assert.deepEqual(driver.dials.map((d) => d.from), [p, p]);
    assert.equal((await t.admin.delete(`/numbers/${num.id}`)).status, 200);
  });
});

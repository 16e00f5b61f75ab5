/**
 * Numbers that stay healthy: a caller ID whose callees never answer is rested by the workers'
 * health rounds while its peers carry on; a rest ends by itself (or by an operator) and the number
 * is measured afresh; the health is in the numbers API. Runs on PGlite and on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../src/lib/logger.js';
import { DEFAULT_NUMBER_HEALTH, judgeNumbers } from '../../src/lifecycle/index.js';
import { Scheduler } from '../../src/scheduler/index.js';
import { HealthRounds } from '../../src/scheduler/health.js';
import type { Driver } from '../../src/telephony/index.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ScriptedDriver } from '../helpers/drivers.js';
import { buildWorld, type World } from '../helpers/world.js';

let t: TestApp;
let w: World;
const log = createLogger('silent');
let seq = 0;

before(async () => {
  t = await buildTestApp();
  w = await buildWorld(t);
});
after(() => t.close());

/** A template and configuration of its own, and these numbers as the only free ones. */
async function setup(phones: string[], config: Record<string, unknown> = {}) {
  const name = `nh-${++seq}`;
  const tpl = await w.reseller1.post('/templates', {
    name,
    reseller_id: w.r1,
    flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] },
  });
  assert.equal(tpl.status, 200);
  const cfg = await w.reseller1.post('/configurations', {
    reseller_id: w.r1,
    template: tpl.body.id,
    calling_provider: 'PROVIDER_A',
    call_start_time: '00:00',
    call_end_time: '00:00',
    max_retry: 0,
    ...config,
  });
  assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
  await t.db.query(`UPDATE outbound_numbers SET status = 'DISABLED', lead_id = NULL`);
  const ids: string[] = [];
  for (const phone_number of phones) {
    const res = await t.admin.post('/numbers', { phone_number, provider: 'PROVIDER_A' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    ids.push(res.body.id);
  }
  return { template: name, ids };
}

let phoneSeq = 0;
async function push(template: string, n: number, phone = () => `+1646555${String(1000 + ++phoneSeq).padStart(4, '0')}`): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await w.reseller1.post('/leads', { request_id: `nh-r-${++seq}`, template, reseller_id: w.r1, payload: { customer_mobile_number: phone() } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    ids.push(res.body.lead_call_tracker_id);
  }
  return ids;
}

const POLICY = { ...DEFAULT_NUMBER_HEALTH, restMinCalls: 5, everyMs: 0 };

function scheduler(driver: Driver) {
  return new Scheduler({ db: t.db, drivers: new Map([[driver.provider, driver]]), log, recoverEveryMs: 0, outbound: t.outbound, maxConcurrentCalls: 3, numberHealth: POLICY });
}

/** Waits for `check` to hold, looking again as the database changes (no fixed sleep decides). */
async function until<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('number health', () => {
  it('rests a number whose callees never answer while its peers carry on, and shows it in the API', async () => {
    const phones = ['+12125550101', '+12125550102', '+12125550103'];
    const s = await setup(phones);
    const bad = phones[0]!;
    // The callees of the bad number never answer; the others' answer and talk for 42 s (those whose number ends in 0 to 2 hang up at 3 s).
    const short = (to: string) => Number(to.slice(-1)) < 3;
    const driver = new ScriptedDriver('PROVIDER_A', (r) =>
      r.from === bad ? { kind: 'no_answer' } : { kind: 'completed', outcome: 'confirmed', durationSeconds: short(r.to) ? 3 : 42 },
    );
    const sched = scheduler(driver);
    await push(s.template, 30);
    await sched.drain();
    const badDials = driver.dials.filter((d) => d.from === bad).length;
    assert.ok(badDials >= 5, `the bad number was used in turn (${badDials} dials)`);
    // The health round after the last calls has seen them all (the worker's own rounds may have
    // rested the bad number already): it is rested once, and the audit trail says so, by the job.
    await new HealthRounds(t.db, log, { ...POLICY, everyMs: 0 }).maybeRun();
    const audited = await t.db.query<{ principal_name: string; details: { phone_number: string; calls: number } }>(
      `SELECT principal_name, details FROM audit_log WHERE action = 'number_rested' AND resource_id = $1`,
      [s.ids[0]],
    );
    assert.equal(audited.rows.length, 1);
    assert.equal(audited.rows[0]!.principal_name, 'number health job');
    assert.equal(audited.rows[0]!.details.phone_number, bad);
    const health = async (id: string) => (await t.admin.get(`/numbers/${id}`)).body.health;
    const badHealth = await health(s.ids[0]!);
    assert.equal(badHealth.answer_rate, 0);
    assert.ok(badHealth.calls >= 5);
    assert.ok(Date.parse(badHealth.rested_until) > Date.now(), JSON.stringify(badHealth));
    assert.match(badHealth.rest_reason, /answered 0 of \d+ calls/);
    assert.equal(badHealth.pool_answer_rate, 1);
    for (const [i, id] of s.ids.entries()) {
      if (i === 0) continue;
      const h = await health(id);
      const dials = driver.dials.filter((d) => d.from === phones[i]);
      assert.equal(h.rested_until, null);
      assert.equal(h.answer_rate, 1);
      assert.equal(h.calls, dials.length);
      assert.equal(h.short_call_rate, Math.round((dials.filter((d) => short(d.to)).length / dials.length) * 10_000) / 10_000);
    }
    const listed = (await t.admin.get('/numbers?status=AVAILABLE')).body;
    assert.equal(listed.data.find((n: { id: string }) => n.id === s.ids[0]).health.answer_rate, 0);
    // Its peers carry on alone.
    const before = driver.dials.length;
    const more = await push(s.template, 12);
    await sched.drain();
    const later = driver.dials.slice(before);
    assert.equal(later.length, 12);
    assert.deepEqual(later.filter((d) => d.from === bad), []);
    for (const id of more) assert.equal((await w.reseller1.get(`/leads/${id}`)).body.status, 'FINISHED');
    // Its rest over, it comes back and is measured afresh: not rested again for the calls before.
    await t.db.query(`UPDATE outbound_numbers SET rested_until = now(), health_since = now() WHERE id = $1`, [s.ids[0]]);
    await judgeNumbers(t.db, POLICY);
    const back = await health(s.ids[0]!);
    assert.equal(back.rested_until, null);
    assert.equal(back.calls, 0);
    const third = driver.dials.length;
    await push(s.template, 3);
    await sched.drain();
    assert.ok(driver.dials.slice(third).some((d) => d.from === bad), 'the rested number dials again');
  });

  it('an operator rests a number; the claim skips it until the rest ends, by itself or through the API', async () => {
    const s = await setup(['+12125550201']);
    const id = s.ids[0]!;
    const rested = await t.admin.post(`/numbers/${id}/rest`, { rest_seconds: 1 });
    assert.equal(rested.status, 200, JSON.stringify(rested.body));
    assert.equal(rested.body.health.rest_reason, 'rested by an operator');
    const driver = new ScriptedDriver('PROVIDER_A');
    const sched = scheduler(driver);
    const [leadId] = await push(s.template, 1);
    assert.equal(await sched.round(), 0, 'the only number rests: nothing is claimed');
    // The rest ends by itself (a second): the lead is dialled from it then.
    await until('the rest to end', async () => ((await sched.round()) > 0 ? true : undefined));
    await sched.drain();
    assert.equal(driver.dials.at(-1)!.leadId, leadId);
    assert.equal((await t.admin.get(`/numbers/${id}`)).body.health.rested_until, null);
    // Through the API: rested for an hour, back at once.
    assert.equal((await t.admin.post(`/numbers/${id}/rest`, { rest_seconds: 3600 })).status, 200);
    await push(s.template, 1);
    assert.equal(await sched.round(), 0);
    const unrested = await t.admin.delete(`/numbers/${id}/rest`);
    assert.equal(unrested.status, 200);
    assert.equal(unrested.body.health.rested_until, null);
    assert.equal(await sched.round(), 1);
    await sched.drain();
  });

  it('refuses a bad rest with a clear 4xx, and changes nothing', async () => {
    const s = await setup(['+12125550301']);
    const id = s.ids[0]!;
    for (const body of [{ rest_seconds: -5 }, { rest_seconds: 0 }, { rest_seconds: 'soon' }, {}, { rest_seconds: 60, extra: 1 }]) {
      const res = await t.admin.post(`/numbers/${id}/rest`, body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
    }
    assert.equal((await t.admin.get(`/numbers/${id}`)).body.health.rested_until, null);
    assert.equal((await t.admin.post('/numbers/no-such-number/rest', { rest_seconds: 60 })).status, 404);
    assert.equal((await t.admin.delete('/numbers/no-such-number/rest')).status, 404);
    // A reseller reads numbers but does not rest them.
    assert.equal((await w.reseller1.post(`/numbers/${id}/rest`, { rest_seconds: 60 })).status, 403);
  });

  it('local presence: a callee is called from a number of their area code, else of their country, when the pool holds one', async () => {
    const phones = ['+12125550401', '+14155550402', '+442071838750'];
    const s = await setup(phones, { local_presence: true });
    const driver = new ScriptedDriver('PROVIDER_A');
    const sched = scheduler(driver);
    const callees = ['+14155555001', '+447911123456', '+12125555002'];
    let i = 0;
    await push(s.template, 3, () => callees[i++]!);
    await sched.drain();
    const from = (to: string) => driver.dials.filter((d) => d.to === to).map((d) => d.from);
    assert.deepEqual(from('+14155555001'), ['+14155550402'], 'the same area code');
    assert.deepEqual(from('+447911123456'), ['+442071838750'], 'the same country');
    assert.deepEqual(from('+12125555002'), ['+12125550401']);
    // No number of Toronto's area code: one of the plan's (+1) while one is free, not the London one.
    i = 0;
    const toronto = ['+16475555001', '+16475555003'];
    await push(s.template, 2, () => toronto[i++]!);
    await sched.drain();
    for (const to of toronto) assert.match(from(to)[0]!, /^\+1(212|415)/, to);
    // A country the pool has no number of: any free number.
    await push(s.template, 1, () => '+33612345678');
    await sched.drain();
    assert.equal(from('+33612345678').length, 1);
  });

  it('without local presence (the default) numbers are taken in rotation, whoever the callee', async () => {
    const phones = ['+12125550501', '+14155550502'];
    const s = await setup(phones);
    const driver = new ScriptedDriver('PROVIDER_A');
    const sched = scheduler(driver);
    await push(s.template, 4, () => '+14155555' + String(100 + ++phoneSeq).slice(-3));
    await sched.drain();
    const used = driver.dials.map((d) => d.from);
    assert.equal(used.length, 4);
    assert.deepEqual(new Set(used), new Set(phones), 'both numbers in turn, not only the local one');
  });

  it('refuses a local_presence that is not a boolean', async () => {
    const tpl = await w.reseller1.post('/templates', {
      name: `nh-bad-${++seq}`,
      reseller_id: w.r1,
      flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] },
    });
    const res = await w.reseller1.post('/configurations', { reseller_id: w.r1, template: tpl.body.id, calling_provider: 'PROVIDER_A', local_presence: 'yes' });
    assert.equal(res.status, 400);
  });
});

/**
 * The lead lifecycle in one process: push through the API, a Scheduler with a scripted driver,
 * and the database as the judge. Runs on PGlite and on PostgreSQL.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createLogger } from '../../src/lib/logger.js';
import { RELEASE_BATCH } from '../../src/lifecycle/index.js';
import { Scheduler } from '../../src/scheduler/index.js';
import type { Driver } from '../../src/telephony/index.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { gate, ScriptedDriver, type Script } from '../helpers/drivers.js';
import { buildWorld, type World } from '../helpers/world.js';

let t: TestApp;
let w: World;
const log = createLogger('silent');
const finishedLeads: string[] = [];
let seq = 0;

before(async () => {
  t = await buildTestApp();
  w = await buildWorld(t);
});
after(() => t.close());

/** Each test gets its own template, configuration and numbers; other tests' numbers are disabled. */
async function setup(config: Record<string, unknown> = {}, numbers = 1, provider = 'PROVIDER_A') {
  const name = `lc-${++seq}`;
  const tpl = await w.reseller1.post('/templates', {
    name,
    reseller_id: w.r1,
    flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] },
  });
  assert.equal(tpl.status, 200);
  const cfg = await w.reseller1.post('/configurations', {
    reseller_id: w.r1,
    template: tpl.body.id,
    calling_provider: provider,
    call_start_time: '00:00',
    call_end_time: '00:00',
    retry_offset: 0,
    ...config,
  });
  assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
  await t.db.query(`UPDATE outbound_numbers SET status = 'DISABLED', lead_id = NULL`);
  const numberIds: string[] = [];
  for (let i = 0; i < numbers; i++) {
    const res = await t.admin.post('/numbers', { phone_number: `+1212555${String(1000 + seq * 10 + i).padStart(4, '0')}`, provider });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    numberIds.push(res.body.id);
  }
  return { template: name, templateId: tpl.body.id as string, configId: cfg.body.id as string, numberIds };
}

let phoneSeq = 0;
const phone = () => `+1646555${String(5000 + ++phoneSeq).padStart(4, '0')}`;

async function push(template: string, payload: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await w.reseller1.post('/leads', { request_id: `r-${++seq}`, template, reseller_id: w.r1, payload: { customer_mobile_number: phone(), ...payload }, ...extra });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.lead_call_tracker_id;
}

const lead = async (id: string) => (await w.reseller1.get(`/leads/${id}`)).body;
const attempts = async (id: string) =>
  (await t.db.query<{ attempt: number; outcome: string; status: string; call_id: string | null; outbound_number_id: string }>('SELECT * FROM call_attempts WHERE lead_id = $1 ORDER BY attempt', [id])).rows;

function scheduler(driver: Driver, options: Partial<ConstructorParameters<typeof Scheduler>[0]> = {}) {
  return new Scheduler({
    db: t.db,
    drivers: new Map([[driver.provider, driver]]),
    log,
    onFinished: async (_q, leadIds) => void finishedLeads.push(...leadIds),
    recoverEveryMs: 0,
    outbound: t.outbound,
    ...options,
  });
}

beforeEach(() => {
  finishedLeads.length = 0;
});

describe('scheduler lifecycle', () => {
  it('dials a due lead once and finishes it with the flow outcome, giving the number back', async () => {
    const s = await setup();
    const id = await push(s.template);
    const driver = new ScriptedDriver('PROVIDER_A');
    await scheduler(driver).drain();
    assert.equal(driver.dials.length, 1);
    const l = await lead(id);
    assert.equal(l.status, 'FINISHED');
    assert.equal(l.outcome, 'confirmed');
    assert.equal(l.attempt_count, 1);
    assert.equal(l.call_id, `CA-${id}-1`);
    assert.equal(l.duration_seconds, 42);
    assert.equal(l.provider, 'PROVIDER_A');
    assert.equal(l.outbound_number_id, s.numberIds[0]);
    assert.ok(l.call_initiated_time && l.call_end_time);
    assert.equal(l.next_attempt_at, null);
    assert.deepEqual(finishedLeads, [id]);
    const history = await attempts(id);
    assert.equal(history.length, 1);
    assert.equal(history[0]!.outcome, 'confirmed');
    assert.equal(history[0]!.call_id, `CA-${id}-1`);
    assert.equal((await t.admin.get(`/numbers/${s.numberIds[0]}`)).body.status, 'AVAILABLE');
  });

  it('retries an unreached callee retry_offset later, max_retry times, then finishes with that outcome', async () => {
    const s = await setup({ max_retry: 2 });
    const id = await push(s.template);
    const driver = new ScriptedDriver('PROVIDER_A', () => ({ kind: 'busy' }));
    await scheduler(driver).drain();
    assert.equal(driver.dials.length, 3, 'max_retry + 1 attempts');
    const l = await lead(id);
    assert.equal(l.status, 'FINISHED');
    assert.equal(l.outcome, 'busy');
    assert.equal(l.attempt_count, 3);
    assert.deepEqual((await attempts(id)).map((a) => [a.attempt, a.outcome]), [[1, 'busy'], [2, 'busy'], [3, 'busy']]);
    assert.deepEqual(finishedLeads, [id], 'the webhook is queued once, when it finishes');
  });

  it('puts an unreached lead in RETRY due retry_offset seconds later', async () => {
    const s = await setup({ max_retry: 1, retry_offset: 900 });
    const id = await push(s.template);
    await scheduler(new ScriptedDriver('PROVIDER_A', () => ({ kind: 'no_answer' }))).drain();
    const l = await lead(id);
    assert.equal(l.status, 'RETRY');
    assert.equal(l.outcome, null);
    const delay = Date.parse(l.next_attempt_at) - Date.parse(l.call_end_time);
    assert.ok(delay >= 899_000 && delay <= 901_000, String(delay));
  });

  it('finishes a conversation that took place even when its outcome is unusual, and voicemail without retry', async () => {
    const s = await setup({ max_retry: 3 });
    const a = await push(s.template, { script: 'voicemail' });
    const b = await push(s.template, { script: 'completed' });
    const driver = new ScriptedDriver('PROVIDER_A', (r) => (r.payload.script === 'voicemail' ? { kind: 'voicemail' } : { kind: 'completed' }));
    await scheduler(driver).drain();
    assert.equal((await lead(a)).outcome, 'voicemail');
    assert.equal((await lead(b)).outcome, 'completed');
    assert.equal(driver.dials.length, 2);
  });

  it('holds leads while calling is disabled, without a configuration, or without a phone number', async () => {
    const off = await setup({ enable_calling: false });
    const pushed = await w.reseller1.post('/leads', { request_id: `r-${++seq}`, template: off.template, reseller_id: w.r1, payload: { customer_mobile_number: phone() } });
    assert.equal(pushed.status, 201);
    assert.match(pushed.body.message, /calling is disabled in the configuration of template lc-\d+: the lead waits until it is enabled/);
    const heldOff = pushed.body.lead_call_tracker_id as string;
    const noPhone = await w.reseller1.post('/leads', { request_id: 'np', template: off.template, reseller_id: w.r1, payload: {} });
    // Pushed to wait, not due at once: nothing may call it, so it stays out of the queue head.
    const held = await lead(heldOff);
    const waits = Date.parse(held.next_attempt_at) - Date.parse(held.created_at);
    assert.ok(waits >= 299_000 && waits <= 301_000, `held for ${waits} ms`);
    const driver = new ScriptedDriver('PROVIDER_A');
    await scheduler(driver).drain();
    assert.equal(driver.dials.length, 0);
    assert.equal((await lead(heldOff)).status, 'BACKLOG');
    assert.equal((await lead(noPhone.body.lead_call_tracker_id)).status, 'BACKLOG');
    // Enabling calling releases the held lead at once.
    const cfg = (await w.reseller1.get(`/configurations?template=${off.templateId}`)).body.data[0];
    assert.equal((await w.reseller1.put(`/configurations/${cfg.id}`, { ...cfg, enable_calling: true })).status, 200);
    assert.ok(Date.parse((await lead(heldOff)).next_attempt_at) <= Date.now() + 1000, 'due once calling is enabled');
    await scheduler(driver).drain();
    assert.equal((await lead(heldOff)).status, 'FINISHED');
    assert.equal((await lead(noPhone.body.lead_call_tracker_id)).status, 'BACKLOG', 'never dialled');
  });

  it('calls a playground lead while its configuration has calling disabled (a try before the campaign calls)', async () => {
    const off = await setup({ enable_calling: false });
    const play = await push(off.template, {}, { is_playground: true, execution_mode: 'TELEPHONY_TEST' });
    const held = await push(off.template);
    const driver = new ScriptedDriver('PROVIDER_A');
    await scheduler(driver).drain();
    assert.deepEqual(driver.dials.map((d) => d.leadId), [play]);
    assert.equal((await lead(play)).status, 'FINISHED');
    assert.equal((await lead(held)).status, 'BACKLOG');
  });

  it('releases a queue of held leads larger than a batch: one batch as calling is enabled, the rest just after', async () => {
    const off = await setup({ enable_calling: false });
    const count = RELEASE_BATCH * 2 + 7;
    // Held as a push into it would hold them; one lead was already attempted (a retry keeps its time).
    await t.db.query(
      `INSERT INTO leads (id, reseller_id, template_id, template_name, request_id, payload, next_attempt_at)
       SELECT 'held-' || g, $1, $2, $3, 'held-' || g, jsonb_build_object('customer_mobile_number', '+1646556' || lpad(g::text, 4, '0')), now() + interval '300 s'
       FROM generate_series(1, $4::int) AS g`,
      [w.r1, off.templateId, off.template, count],
    );
    await t.db.query(`UPDATE leads SET status = 'RETRY', attempt_count = 1 WHERE id = 'held-1'`);
    const waiting = async () =>
      (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM leads WHERE template_id = $1 AND next_attempt_at > now()`, [off.templateId])).rows[0]!.n;
    assert.equal(await waiting(), count);
    const cfg = (await w.reseller1.get(`/configurations?template=${off.templateId}`)).body.data[0];
    assert.equal((await w.reseller1.put(`/configurations/${cfg.id}`, { ...cfg, enable_calling: true })).status, 200);
    // The response comes after the first batch; the rest follow, a batch per statement.
    assert.ok((await waiting()) <= count - RELEASE_BATCH, 'the first batch is due as the configuration is saved');
    for (let i = 0; i < 600 && (await waiting()) > 1; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(await waiting(), 1, 'every held lead is due; the retry keeps its time');
    assert.equal((await lead('held-1')).status, 'RETRY');
    await t.db.query(`DELETE FROM leads WHERE template_id = $1`, [off.templateId]);
  });

  it('calls the leads pushed before their configuration existed once it is created, after its initial offset', async () => {
    const name = `lc-${++seq}`;
    const tpl = await w.reseller1.post('/templates', { name, reseller_id: w.r1, flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] } });
    const early = await push(name);
    const pushed = await w.reseller1.post('/leads', { request_id: `r-${++seq}`, template: name, reseller_id: w.r1, payload: { customer_mobile_number: phone() } });
    assert.match(pushed.body.message, /no configuration exists yet/);
    const driver = new ScriptedDriver('PROVIDER_A');
    await scheduler(driver).drain();
    assert.equal(driver.dials.length, 0, 'nothing to call them with');
    // A configuration whose first attempt comes an hour after the push: the leads wait for that, not for the recheck.
    const cfg = await w.reseller1.post('/configurations', { reseller_id: w.r1, template: tpl.body.id, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00', initial_offset: 3600 });
    assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
    const offset = await lead(early);
    assert.equal(Date.parse(offset.next_attempt_at) - Date.parse(offset.created_at), 3_600_000);
    // Without an offset they are due at once, and called.
    assert.equal((await w.reseller1.put(`/configurations/${cfg.body.id}`, { ...cfg.body, initial_offset: 0, enable_calling: false })).status, 200);
    assert.equal((await w.reseller1.put(`/configurations/${cfg.body.id}`, { ...cfg.body, initial_offset: 0 })).status, 200);
    await t.db.query(`UPDATE outbound_numbers SET status = 'DISABLED', lead_id = NULL`);
    assert.equal((await t.admin.post('/numbers', { phone_number: `+1212555${String(1000 + seq * 10).padStart(4, '0')}`, provider: 'PROVIDER_A' })).status, 200);
    await scheduler(driver).drain();
    assert.deepEqual(driver.dials.map((d) => d.leadId).sort(), [early, pushed.body.lead_call_tracker_id].sort());
  });

  it('waits outside the calling window until it opens, in the configured or the lead time zone', async () => {
    const h = new Date().getUTCHours();
    const hh = (n: number) => `${String((n + 24) % 24).padStart(2, '0')}:00`;
    // A UTC window opening two hours from now, closing an hour later.
    const s = await setup({ call_start_time: hh(h + 2), call_end_time: hh(h + 3), call_timezone: 'UTC' });
    const closed = await push(s.template);
    // The same window read in a zone 4 hours ahead of UTC (no DST there) is open now... unless
    // h+2..h+3 in Asia/Dubai is now: Dubai local = UTC+4, so local now = h+4: outside h+2..h+3.
    // Use a zone where local now falls inside: UTC-2 (Atlantic/South_Georgia) has local = h-2.
    const open = await push(s.template, { timezone: 'Etc/GMT+2' });
    const driver = new ScriptedDriver('PROVIDER_A');
    await scheduler(driver).drain();
    assert.deepEqual(driver.dials.map((d) => d.leadId), [], 'neither is open now');
    const c = await lead(closed);
    assert.equal(c.status, 'BACKLOG');
    const opening = new Date(c.next_attempt_at);
    assert.equal(opening.getUTCHours(), (h + 2) % 24);
    assert.equal(opening.getUTCMinutes(), 0);
    const o = await lead(open);
    assert.equal(new Date(o.next_attempt_at).getUTCHours(), (h + 4) % 24, 'in the lead zone the window opens at h+2 local = h+4 UTC');
  });

  it('dials a lead whose own time zone has the window open now', async () => {
    const h = new Date().getUTCHours();
    const hh = (n: number) => `${String((n + 24) % 24).padStart(2, '0')}:00`;
    // Open in UTC+3 now (local hour h+3); closed in UTC.
    const s = await setup({ call_start_time: hh(h + 3), call_end_time: hh(h + 4), call_timezone: 'UTC' });
    const id = await push(s.template, { timezone: 'Etc/GMT-3' });
    const closed = await push(s.template);
    const driver = new ScriptedDriver('PROVIDER_A');
    await scheduler(driver).drain();
    assert.deepEqual(driver.dials.map((d) => d.leadId), [id]);
    assert.equal((await lead(closed)).status, 'BACKLOG');
  });

  it('does not let a queue head full of leads that cannot be called hide the ones behind it', async () => {
    // Leads due at once whose calling is then switched off (pushed while it was off, they would
    // not be due).
    const off = await setup();
    const held = Array.from({ length: 250 }, (_, i) => ({ request_id: `h-${i}`, template: off.template, reseller_id: w.r1, payload: { customer_mobile_number: phone() } }));
    assert.equal((await w.reseller1.post('/leads/batch', { leads: held })).body.queued, 250);
    const cfg = (await w.reseller1.get(`/configurations?template=${off.templateId}`)).body.data[0];
    assert.equal((await w.reseller1.put(`/configurations/${cfg.id}`, { ...cfg, enable_calling: false })).status, 200);
    const on = await setup();
    const callable = await push(on.template);
    const driver = new ScriptedDriver('PROVIDER_A');
    await scheduler(driver).drain();
    await scheduler(driver).drain();
    assert.deepEqual(driver.dials.map((d) => d.leadId), [callable]);
    const { rows } = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM leads WHERE template_name = $1 AND status = 'BACKLOG' AND next_attempt_at > now() + interval '200 seconds'`,
      [off.template],
    );
    assert.ok(rows[0]!.n > 0, `held leads moved aside (${rows[0]!.n})`);
  });

  it('leaves a queue waiting for numbers in its order, and dials on as finishes give numbers back (no poll needed)', async () => {
    // One number and 60 due leads: once the first call has it, every claim finds the pool empty.
    const s = await setup({}, 1);
    const leads = Array.from({ length: 60 }, (_, i) => ({ request_id: `pool-${seq}-${i}`, template: s.template, reseller_id: w.r1, payload: { customer_mobile_number: phone() } }));
    assert.equal((await w.reseller1.post('/leads/batch', { leads })).body.queued, 60);
    const first = gate();
    const driver = new ScriptedDriver('PROVIDER_A', async () => {
      if (driver.dials.length === 1) await first.wait;
      return { kind: 'completed', outcome: 'confirmed', durationSeconds: 30 };
    });
    // Only wake-ups move it: a poll would come in an hour.
    const sched = scheduler(driver, { pollMs: 3_600_000, maxConcurrentCalls: 4 });
    sched.start();
    try {
      const until = async (what: string, done: () => Promise<boolean>) => {
        for (const end = Date.now() + 30_000; !(await done()); ) {
          if (Date.now() > end) assert.fail(`still waiting for ${what}`);
          await new Promise((r) => setTimeout(r, 20));
        }
      };
      await until('the first dial', async () => driver.dials.length === 1);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(driver.dials.length, 1, 'one number: one call');
      const aside = await t.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM leads WHERE template_name = $1 AND status = 'BACKLOG' AND next_attempt_at > now()`,
        [s.template],
      );
      assert.equal(aside.rows[0]!.n, 0, 'nothing behind an empty pool could be called: no lead is moved aside');
      first.open();
      const finished = async () =>
        (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM leads WHERE template_name = $1 AND status = 'FINISHED'`, [s.template])).rows[0]!.n;
      await until('every lead to finish', async () => (await finished()) === 60);
      assert.equal(driver.dials.length, 60);
      assert.deepEqual(
        driver.dials.map((d) => d.leadId),
        // One batch: one due time for all, so the queue's order is the ids'.
        (await t.db.query<{ id: string }>(`SELECT id FROM leads WHERE template_name = $1 ORDER BY id`, [s.template])).rows.map((r) => r.id),
        'dialled in the order they were queued',
      );
    } finally {
      first.open();
      await sched.stop();
    }
  });

  it('finishes a lead BLACKLISTED when its number was blacklisted after the push', async () => {
    const s = await setup();
    const n = phone();
    const id = await push(s.template, { customer_mobile_number: n });
    await w.reseller1.post('/blacklist', { phone_numbers: [n] });
    const driver = new ScriptedDriver('PROVIDER_A');
    await scheduler(driver).drain();
    assert.equal(driver.dials.length, 0);
    const l = await lead(id);
    assert.equal(l.status, 'FINISHED');
    assert.equal(l.outcome, 'BLACKLISTED');
    assert.equal(l.attempt_count, 0);
    assert.deepEqual(finishedLeads, [id]);
  });

  it('holds the rate limit: at most rate_limit_max_calls dials per window; whitelisted numbers are exempt', async () => {
    const vip = phone();
    const s = await setup({ rate_limit_enabled: true, rate_limit_max_calls: 2, rate_limit_window_seconds: 3600, rate_limit_whitelist: [vip] }, 3);
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await push(s.template));
    const vipLead = await push(s.template, { customer_mobile_number: vip });
    const driver = new ScriptedDriver('PROVIDER_A');
    await scheduler(driver).drain();
    const dialled = new Set(driver.dials.map((d) => d.leadId));
    assert.equal(dialled.size, 3, 'two limited dials and the whitelisted one');
    assert.ok(dialled.has(vipLead));
    const waiting = [];
    for (const id of ids) {
      const l = await lead(id);
      if (!dialled.has(id)) waiting.push(l);
    }
    assert.equal(waiting.length, 3);
    for (const l of waiting) {
      assert.equal(l.status, 'BACKLOG', 'a limited lead waits; it is not failed');
      const wait = Date.parse(l.next_attempt_at) - Date.now();
      assert.ok(wait > 3_500_000 && wait <= 3_600_100, `due when the first slot frees (${wait} ms)`);
    }
  });

  it('uses each number for one call at a time and waits when the pool is empty', async () => {
    const s = await setup({}, 2);
    const ids = [];
    for (let i = 0; i < 6; i++) ids.push(await push(s.template));
    const release = gate();
    let live = 0;
    let peak = 0;
    const driver = new ScriptedDriver('PROVIDER_A', async () => {
      peak = Math.max(peak, ++live);
      await release.wait;
      live--;
      return { kind: 'completed', outcome: 'ok' };
    });
    const sched = scheduler(driver);
    const run = sched.drain();
    // Both numbers taken (however long that takes on a busy machine), then a moment for a third call that must not come.
    for (const end = Date.now() + 30_000; driver.dials.length < 2 && Date.now() < end; ) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(driver.dials.length, 2, 'two numbers: two calls');
    const inUse = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbound_numbers WHERE status = 'IN_USE'`);
    assert.equal(inUse.rows[0]!.n, 2);
    release.open();
    await run;
    assert.equal(driver.dials.length, 6);
    assert.equal(peak, 2);
    for (const from of new Set(driver.dials.map((d) => d.from))) {
      const calls = driver.dials.filter((d) => d.from === from).sort((a, b) => a.startedAt - b.startedAt);
      for (let i = 1; i < calls.length; i++) assert.ok(calls[i]!.startedAt >= calls[i - 1]!.endedAt!, 'no overlap on one number');
    }
    for (const id of ids) assert.equal((await lead(id)).status, 'FINISHED');
  });

  it('takes the pool\'s numbers in turn: each claim goes on after the last number it took, round and round', async () => {
    const s = await setup({}, 3);
    // Their last uses run against the rotation's order (the first number in it was used last).
    await t.db.query(
      `UPDATE outbound_numbers n SET updated_at = now() - make_interval(secs => r.rank) FROM (
         SELECT id, row_number() OVER (ORDER BY provider, id) AS rank FROM outbound_numbers WHERE id = ANY($1::text[])) AS r
       WHERE n.id = r.id`,
      [s.numberIds],
    );
    const ids = [];
    for (let i = 0; i < 7; i++) ids.push(await push(s.template));
    // One call at a time: each lead is a claim of its own.
    const driver = new ScriptedDriver('PROVIDER_A');
    await scheduler(driver, { maxConcurrentCalls: 1 }).drain();
    // The rotation's order is the numbers' order in the database (their ids, in its collation),
    // from wherever the worker's rotation started.
    const { rows } = await t.db.query<{ phone_number: string }>('SELECT phone_number FROM outbound_numbers WHERE id = ANY($1::text[]) ORDER BY provider, id', [s.numberIds]);
    const turn = rows.map((r) => r.phone_number);
    const from = driver.dials.map((d) => d.from);
    const start = turn.indexOf(from[0]!);
    assert.ok(start >= 0);
    assert.deepEqual(from, Array.from({ length: 7 }, (_, i) => turn[(start + i) % 3]));
    for (const id of ids) assert.equal((await lead(id)).status, 'FINISHED');
  });

  it('recovers leads whose worker died: RETRY with retries left, else FINISHED worker_lost; numbers come back', async () => {
    const s = await setup({ max_retry: 1 }, 2);
    const a = await push(s.template);
    const b = await push(s.template);
    // A worker that claimed both and died: PROCESSING, numbers IN_USE, leases in the past.
    await t.db.query(`UPDATE leads SET status = 'PROCESSING', attempt_count = 1, locked_by = 'dead', locked_until = now() - interval '1 minute', outbound_number_id = $2 WHERE id = $1`, [a, s.numberIds[0]]);
    await t.db.query(`UPDATE leads SET status = 'PROCESSING', attempt_count = 2, locked_by = 'dead', locked_until = now() - interval '1 minute', outbound_number_id = $2 WHERE id = $1`, [b, s.numberIds[1]]);
    await t.db.query(`UPDATE outbound_numbers SET status = 'IN_USE', lead_id = $2 WHERE id = $1`, [s.numberIds[0], a]);
    await t.db.query(`UPDATE outbound_numbers SET status = 'IN_USE', lead_id = $2 WHERE id = $1`, [s.numberIds[1], b]);
    const driver = new ScriptedDriver('PROVIDER_A');
    await scheduler(driver).drain();
    const la = await lead(a);
    assert.equal(la.status, 'FINISHED', 'retried at once (retry_offset 0) and finished');
    assert.equal(la.attempt_count, 2);
    assert.deepEqual(driver.dials.map((d) => d.leadId), [a]);
    const lb = await lead(b);
    assert.equal(lb.status, 'FINISHED');
    assert.equal(lb.outcome, 'worker_lost');
    assert.equal(lb.metaData.last_error.outcome, 'worker_lost');
    for (const n of s.numberIds) assert.equal((await t.admin.get(`/numbers/${n}`)).body.status, 'AVAILABLE');
  });

  it("recovery judges a dead worker's lead by its retry policy, as the finish does (playground overrides included)", async () => {
    // Retries left, but the policy says no retry after an error: a lost worker is an error of Dialer's.
    const s = await setup({ max_retry: 3, retry_policy: { error: { retry: false } } }, 3);
    const byPolicy = await push(s.template);
    // A playground lead whose override says the same, over a configuration that would retry.
    const s2 = await setup({ max_retry: 3 }, 1);
    const byOverride = await push(s2.template, {}, { is_playground: true, execution_mode: 'TELEPHONY_TEST', configurations_override: { retry_policy: { worker_lost: { retry: false } } } });
    const plain = await push(s2.template);
    for (const id of [byPolicy, byOverride, plain]) {
      await t.db.query(`UPDATE leads SET status = 'PROCESSING', attempt_count = 1, locked_by = 'killed', locked_until = now() - interval '1 minute' WHERE id = $1`, [id]);
    }
    const driver = new ScriptedDriver('PROVIDER_A', () => ({ kind: 'no_answer' }));
    await scheduler(driver).drain();
    for (const id of [byPolicy, byOverride]) {
      const l = await lead(id);
      assert.equal(l.status, 'FINISHED', JSON.stringify(l));
      assert.equal(l.outcome, 'worker_lost');
      assert.equal(l.attempt_count, 1);
    }
    // Without a rule for it, the lost worker's lead is retried (and then not answered, to the last retry).
    assert.deepEqual(new Set(driver.dials.map((d) => d.leadId)), new Set([plain]));
    assert.equal((await lead(plain)).attempt_count, 4);
  });

  it('applies a playground configurations_override; a live lead ignores it', async () => {
    const s = await setup({ max_retry: 3 });
    const play = await push(s.template, {}, { is_playground: true, execution_mode: 'TELEPHONY_TEST', configurations_override: { max_retry: 0 } });
    const live = await push(s.template, {}, { configurations_override: { max_retry: 0 } });
    const driver = new ScriptedDriver('PROVIDER_A', () => ({ kind: 'failed', error: 'SIP 503' }));
    await scheduler(driver).drain();
    assert.equal((await lead(play)).attempt_count, 1);
    assert.equal((await lead(live)).attempt_count, 4);
    assert.equal((await lead(live)).metaData.last_error.message, 'SIP 503');
  });

  it('never dials a lead that an abort racing the claim reported as aborted', async () => {
    const s = await setup({}, 5);
    const ids = [];
    for (let i = 0; i < 40; i++) ids.push(await push(s.template));
    const driver = new ScriptedDriver('PROVIDER_A');
    const sched = scheduler(driver, { maxConcurrentCalls: 5 });
    const [, abort] = await Promise.all([
      sched.drain(),
      (async () => {
        await new Promise((r) => setTimeout(r, 20));
        return w.reseller1.post('/lead/abort', { leads: ids.map((lead_id) => ({ lead_id, cancellation_reason: 'race' })) });
      })(),
    ]);
    const dialled = new Set(driver.dials.map((d) => d.leadId));
    for (const item of abort.body.leads) {
      const l = await lead(item.id);
      if (item.status === 'success') {
        assert.ok(!dialled.has(item.id), 'an aborted lead is never dialled');
        assert.equal(l.outcome, 'aborted');
      } else {
        assert.ok(['processing', 'already_aborted'].includes(item.status), JSON.stringify(item));
        assert.ok(dialled.has(item.id));
        assert.notEqual(l.outcome, 'aborted');
      }
    }
  });
});

describe('call slots', () => {
  it('never carries more calls at once than maxConcurrentCalls, and claims again as calls end', async () => {
    const s = await setup({}, 10);
    const ids = [];
    for (let i = 0; i < 12; i++) ids.push(await push(s.template));
    let live = 0;
    let most = 0;
    const driver = new ScriptedDriver('PROVIDER_A', async () => {
      most = Math.max(most, ++live);
      await new Promise((r) => setTimeout(r, 5 + Math.random() * 20));
      live--;
      return { kind: 'completed', outcome: 'confirmed', durationSeconds: 3 };
    });
    await scheduler(driver, { maxConcurrentCalls: 3 }).drain();
    assert.equal(most, 3, 'three calls at a time, never more');
    assert.deepEqual(new Set(driver.dials.map((d) => d.leadId)), new Set(ids));
    for (const id of ids) assert.equal((await lead(id)).status, 'FINISHED');
  });
});

describe('graceful stop', () => {
  it('lets live calls end within the grace period, and hangs up the rest after it', async () => {
    const s = await setup({ max_retry: 1, retry_offset: 600 }, 2);
    const patient = await push(s.template, { wait: 'short' });
    const stubborn = await push(s.template, { wait: 'long' });
    const shortCall = gate();
    const driver = new ScriptedDriver('PROVIDER_A', async (r) => {
      if (r.payload.wait === 'short') {
        await shortCall.wait;
        return { kind: 'completed', outcome: 'done' };
      }
      // Ends only when Dialer hangs up.
      await new Promise((resolve) => r.signal.addEventListener('abort', resolve, { once: true }));
      return { kind: 'error', error: 'hung up: Dialer is shutting down' };
    });
    const sched = scheduler(driver, { pollMs: 10, shutdownGraceMs: 500 });
    sched.start();
    while (driver.dials.length < 2) await new Promise((r) => setTimeout(r, 10));
    const stopped = sched.stop();
    setTimeout(() => shortCall.open(), 100);
    await stopped;
    const p = await lead(patient);
    assert.equal(p.status, 'FINISHED');
    assert.equal(p.outcome, 'done', 'the call that ended within the grace period kept its outcome');
    const st = await lead(stubborn);
    assert.equal(st.status, 'RETRY', 'the call hung up at shutdown is retried');
    assert.match(st.metaData.last_error.message, /shutting down/);
    for (const n of s.numberIds) assert.equal((await t.admin.get(`/numbers/${n}`)).body.status, 'AVAILABLE');
  });
});

describe('leases', () => {
  it("renews the leases of all live calls together, and hangs up at once a call whose lease was lost", async () => {
    const s = await setup({ max_retry: 1, retry_offset: 600 }, 2);
    const kept = await push(s.template, { role: 'kept' });
    const lost = await push(s.template, { role: 'lost' });
    const keptCall = gate();
    const hungUp = new Map<string, unknown>();
    const driver = new ScriptedDriver('PROVIDER_A', async (r) => {
      if (r.payload.role === 'kept') {
        await keptCall.wait;
        return { kind: 'completed', outcome: 'done', durationSeconds: 3 };
      }
      await new Promise((resolve) => r.signal.addEventListener('abort', resolve, { once: true }));
      hungUp.set(r.leadId, (r.signal.reason as Error).message);
      return { kind: 'error', error: 'hung up' };
    });
    // A lease of 1.5 s, renewed every 0.5 s; this worker also recovers expired leases every round.
    const sched = scheduler(driver, { pollMs: 10, leaseSeconds: 1.5 });
    sched.start();
    while (driver.dials.length < 2) await new Promise((r) => setTimeout(r, 10));
    const leaseOf = async (id: string) =>
      (await t.db.query<{ locked_by: string; locked_until: Date; status: string }>('SELECT locked_by, locked_until, status FROM leads WHERE id = $1', [id])).rows[0]!;
    const first = await leaseOf(kept);
    // Another worker takes the lead over (as a recovery after a stall would).
    await t.db.query(`UPDATE leads SET locked_by = 'another-worker', locked_until = now() + interval '1 hour' WHERE id = $1`, [lost]);
    // Twice the lease: without renewal it would have lapsed and been recovered.
    await new Promise((r) => setTimeout(r, 3000));
    const later = await leaseOf(kept);
    assert.equal(later.status, 'PROCESSING');
    assert.equal(later.locked_by, sched.workerId);
    assert.ok(later.locked_until.getTime() > first.locked_until.getTime() + 1000, 'the live call\'s lease was renewed');
    assert.deepEqual([...hungUp], [[lost, 'the lease on this lead was lost']], 'only the call whose lease was lost was hung up');
    assert.equal((await leaseOf(lost)).locked_by, 'another-worker', 'its outcome was not written over the new holder');
    keptCall.open();
    await sched.stop();
    const k = await lead(kept);
    assert.equal(k.status, 'FINISHED');
    assert.equal(k.outcome, 'done');
    // (Out of the way of the tests that follow.)
    await t.db.query(`UPDATE leads SET status = 'FINISHED', locked_by = NULL, locked_until = NULL WHERE id = $1`, [lost]);
  });
});

describe('pre-checks', () => {
  let server: http.Server;
  let base: string;
  const seen: { url: string; method: string; body: string; headers: http.IncomingHttpHeaders }[] = [];
  before(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ url: req.url!, method: req.method!, body, headers: req.headers });
        const u = new URL(req.url!, 'http://x');
        if (u.pathname === '/fail') return void res.writeHead(500).end('boom');
        if (u.pathname === '/slow') return void setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":{"allowed":true}}'), 3000);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: { allowed: u.searchParams.get('phone') !== '+14155550999' } }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  const check = (path: string, extra: Record<string, unknown> = {}) => ({
    name: `check${path.replace('/', '-')}`,
    type: 'external_api',
    default_on_failure: 'proceed',
    http_request: { url: `${base}${path}?phone={customer_mobile_number}`, method: 'POST', headers: { 'x-lead': '{lead_id}' }, body: { name: '{customer_name}' }, timeout: 1 },
    response_config: { response_field: 'data.allowed', response_field_value: true },
    ...extra,
  });

  it('dials when every check passes, with the results on the lead and variables substituted', async () => {
    const s = await setup({ pre_checks: [check('/ok')] });
    const id = await push(s.template, { customer_name: 'Ada' });
    const driver = new ScriptedDriver('PROVIDER_A');
    await scheduler(driver).drain();
    assert.equal(driver.dials.length, 1);
    const l = await lead(id);
    assert.equal(l.metaData.pre_check_results[0].result, 'passed');
    assert.equal(l.metaData.pre_check_results[0].value, true);
    const req = seen.at(-1)!;
    assert.equal(req.method, 'POST');
    assert.equal(new URL(req.url, 'http://x').searchParams.get('phone'), l.payload.customer_mobile_number);
    assert.equal(req.headers['x-lead'], id);
    assert.deepEqual(JSON.parse(req.body), { name: 'Ada' });
  });

  it('finishes PRECHECK_FAILED without dialling when the answer says no', async () => {
    const s = await setup({ pre_checks: [check('/ok')] });
    const id = await push(s.template, { customer_mobile_number: '+14155550999' });
    const driver = new ScriptedDriver('PROVIDER_A');
    await scheduler(driver).drain();
    assert.equal(driver.dials.length, 0);
    const l = await lead(id);
    assert.equal(l.status, 'FINISHED');
    assert.equal(l.outcome, 'PRECHECK_FAILED');
    assert.equal(l.attempt_count, 0, 'no call was made');
    assert.equal(l.metaData.pre_check_results[0].result, 'failed');
    assert.deepEqual(finishedLeads, [id]);
    assert.equal((await t.admin.get(`/numbers/${s.numberIds[0]}`)).body.status, 'AVAILABLE');
  });

  it('follows default_on_failure when the API errors or times out', async () => {
    const proceed = await setup({ pre_checks: [check('/fail'), check('/slow', { name: 'slow' })] });
    const p = await push(proceed.template);
    const driver = new ScriptedDriver('PROVIDER_A');
    await scheduler(driver).drain();
    assert.equal(driver.dials.length, 1);
    const lp = await lead(p);
    assert.deepEqual(lp.metaData.pre_check_results.map((r: any) => [r.result, r.action]), [['error', 'proceed'], ['error', 'proceed']]);
    assert.match(lp.metaData.pre_check_results[0].error, /500/);
    assert.match(lp.metaData.pre_check_results[1].error, /timed out/);

    const skip = await setup({ pre_checks: [check('/fail', { default_on_failure: 'skip' }), check('/ok', { name: 'never-run' })] });
    const k = await push(skip.template);
    const d2 = new ScriptedDriver('PROVIDER_A');
    await scheduler(d2).drain();
    assert.equal(d2.dials.length, 0);
    const lk = await lead(k);
    assert.equal(lk.outcome, 'PRECHECK_FAILED');
    assert.equal(lk.metaData.pre_check_results.length, 1, 'checks stop at the first that stops the lead');
  });

  it('gives a claimed lead back when the worker stops before dialling it', async () => {
    const s = await setup({ pre_checks: [check('/slow', { http_request: { url: `${base}/slow`, method: 'GET', timeout: 5 }, default_on_failure: 'proceed' })] });
    const id = await push(s.template);
    const driver = new ScriptedDriver('PROVIDER_A');
    const sched = scheduler(driver, { pollMs: 10 });
    sched.start();
    for (let i = 0; i < 100 && (await lead(id)).status !== 'PROCESSING'; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal((await lead(id)).status, 'PROCESSING');
    await sched.stop();
    assert.equal(driver.dials.length, 0);
    const l = await lead(id);
    assert.equal(l.status, 'BACKLOG');
    assert.equal(l.attempt_count, 0);
    assert.equal((await attempts(id)).length, 0);
    assert.equal((await t.admin.get(`/numbers/${s.numberIds[0]}`)).body.status, 'AVAILABLE');
  });
});

/**
 * The call's edges in the lead lifecycle: retries by outcome, a callback at the time the callee
 * chose, an opt-out that blacklists the number (and the leads already queued for it), recipient-local
 * calling windows and a daily limit per number (also on the days clocks change). Push through the
 * API, a Scheduler with a scripted driver, the database as the judge; on PGlite and on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DateTime } from 'luxon';
import type { CallEnd } from '../../src/lifecycle/index.js';
import { localDay } from '../../src/lib/windows.js';
import { createLogger } from '../../src/lib/logger.js';
import { claimBatch, Scheduler } from '../../src/scheduler/index.js';
import type { DialRequest, Driver } from '../../src/telephony/index.js';
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

async function setup(config: Record<string, unknown> = {}) {
  const name = `camp-${++seq}`;
  const tpl = await w.reseller1.post('/templates', {
    name,
    reseller_id: w.r1,
    flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] },
  });
  assert.equal(tpl.status, 200);
  const body = {
    reseller_id: w.r1,
    template: tpl.body.id,
    calling_provider: 'PROVIDER_A',
    call_start_time: '00:00',
    call_end_time: '00:00',
    retry_offset: 0,
    ...config,
  };
  const cfg = await w.reseller1.post('/configurations', body);
  assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
  await t.db.query(`UPDATE outbound_numbers SET status = 'DISABLED', lead_id = NULL`);
  const number = await t.admin.post('/numbers', { phone_number: `+1212555${String(2000 + seq).padStart(4, '0')}`, provider: 'PROVIDER_A' });
  assert.equal(number.status, 200, JSON.stringify(number.body));
  /** Replaces the configuration's fields with `changes` (the rest as created). */
  const update = async (changes: Record<string, unknown>) => {
    const res = await w.reseller1.put(`/configurations/${cfg.body.id}`, { id: cfg.body.id, ...body, ...changes });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  };
  return { template: name, update };
}

let phoneSeq = 0;
const phone = () => `+1646555${String(7000 + ++phoneSeq).padStart(4, '0')}`;

async function push(template: string, payload: Record<string, unknown>): Promise<string> {
  const res = await w.reseller1.post('/leads', { request_id: `c-${++seq}`, template, reseller_id: w.r1, payload });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.lead_call_tracker_id;
}

const lead = async (id: string) => (await w.reseller1.get(`/leads/${id}`)).body;
const dueAt = async (id: string) => (await t.db.query<{ next_attempt_at: Date | null }>('SELECT next_attempt_at FROM leads WHERE id = $1', [id])).rows[0]!.next_attempt_at;

function scheduler(driver: Driver) {
  return new Scheduler({ db: t.db, drivers: new Map([[driver.provider, driver]]), log, recoverEveryMs: 0, maxConcurrentCalls: 1 });
}

/** A driver whose callee at each number ends the call as scripted. */
function byNumber(ends: Record<string, CallEnd | ((r: DialRequest) => CallEnd)>) {
  return new ScriptedDriver('PROVIDER_A', (r) => {
    const end = ends[r.to];
    if (!end) throw new Error(`no script for ${r.to}`);
    return typeof end === 'function' ? end(r) : end;
  });
}

describe('retries by outcome', () => {
  it("follow the configuration's retry_policy per outcome, and the default for outcomes it does not name", async () => {
    const s = await setup({
      max_retry: 2,
      retry_offset: 1800,
      retry_policy: {
        busy: { retry: true, after_seconds: 120 },
        no_answer: { retry: false },
        voicemail: { retry: true, after_seconds: 86_400 },
        not_interested: { retry: true, after_seconds: 600 },
      },
    });
    const [busy, noAnswer, voicemail, notInterested, failed, confirmed] = [phone(), phone(), phone(), phone(), phone(), phone()];
    const ids = {
      busy: await push(s.template, { customer_mobile_number: busy }),
      noAnswer: await push(s.template, { customer_mobile_number: noAnswer }),
      voicemail: await push(s.template, { customer_mobile_number: voicemail }),
      notInterested: await push(s.template, { customer_mobile_number: notInterested }),
      failed: await push(s.template, { customer_mobile_number: failed }),
      confirmed: await push(s.template, { customer_mobile_number: confirmed }),
    };
    const driver = byNumber({
      [busy]: { kind: 'busy' },
      [noAnswer]: { kind: 'no_answer' },
      [voicemail]: { kind: 'voicemail' },
      [notInterested]: { kind: 'completed', outcome: 'not_interested' },
      [failed]: { kind: 'failed', error: 'unreachable' },
      [confirmed]: { kind: 'completed', outcome: 'confirmed' },
    });
    await scheduler(driver).drain();
    // The finish sets the due time from the moment it ends the attempt (call_end_time).
    const retryIn = async (id: string) => Math.round(((await dueAt(id))!.getTime() - new Date((await lead(id)).call_end_time).getTime()) / 1000);
    const expect = async (id: string, status: string, outcome: string | null) => {
      const l = await lead(id);
      assert.deepEqual([l.status, l.outcome], [status, outcome], JSON.stringify(l));
    };
    await expect(ids.busy, 'RETRY', null);
    assert.equal(await retryIn(ids.busy), 120);
    await expect(ids.noAnswer, 'FINISHED', 'no_answer');
    await expect(ids.voicemail, 'RETRY', null);
    assert.equal(await retryIn(ids.voicemail), 86_400);
    await expect(ids.notInterested, 'RETRY', null);
    assert.equal(await retryIn(ids.notInterested), 600);
    // Not named: unreached retries after retry_offset, a conversation finishes.
    await expect(ids.failed, 'RETRY', null);
    assert.equal(await retryIn(ids.failed), 1800);
    await expect(ids.confirmed, 'FINISHED', 'confirmed');
    assert.equal(driver.dials.length, 6);
  });

  it('without a policy: unreached attempts retry after retry_offset, voicemail and conversations finish (as before)', async () => {
    const s = await setup({ max_retry: 1, retry_offset: 300 });
    const [busy, voicemail, left] = [phone(), phone(), phone()];
    const ids = [busy, voicemail, left].map(() => '');
    ids[0] = await push(s.template, { customer_mobile_number: busy });
    ids[1] = await push(s.template, { customer_mobile_number: voicemail });
    ids[2] = await push(s.template, { customer_mobile_number: left });
    await scheduler(byNumber({ [busy]: { kind: 'busy' }, [voicemail]: { kind: 'voicemail' }, [left]: { kind: 'completed', outcome: 'voicemail_left', metaData: { voicemail: { message_played: true } } } })).drain();
    assert.equal((await lead(ids[0]!)).status, 'RETRY');
    assert.deepEqual([(await lead(ids[1]!)).status, (await lead(ids[1]!)).outcome], ['FINISHED', 'voicemail']);
    const l = await lead(ids[2]!);
    assert.deepEqual([l.status, l.outcome], ['FINISHED', 'voicemail_left']);
    assert.equal(l.metaData.voicemail.message_played, true);
  });
});

describe('a callback the callee chose', () => {
  it('makes the lead due at that time, and it is dialled again then', async () => {
    const s = await setup({ max_retry: 3 });
    const number = phone();
    // Far enough ahead that the first drain (setup, the call, its record) is over before it is due, even on a loaded machine.
    const callbackAt = new Date(Date.now() + 3000);
    let calls = 0;
    const driver = byNumber({
      [number]: () =>
        ++calls === 1
          ? { kind: 'completed', outcome: 'callback_requested', metaData: { callback: { at: callbackAt.toISOString(), requested: callbackAt.toISOString() } } }
          : { kind: 'completed', outcome: 'confirmed' },
    });
    const id = await push(s.template, { customer_mobile_number: number });
    const sched = scheduler(driver);
    await sched.drain();
    let l = await lead(id);
    assert.deepEqual([l.status, l.outcome], ['RETRY', null]);
    assert.equal((await dueAt(id))!.toISOString(), callbackAt.toISOString());
    assert.equal(driver.dials.length, 1);
    await new Promise((r) => setTimeout(r, Math.max(0, callbackAt.getTime() - Date.now() + 50)));
    await sched.drain();
    l = await lead(id);
    assert.deepEqual([l.status, l.outcome, l.attempt_count], ['FINISHED', 'confirmed', 2]);
    assert.ok(driver.dials[1]!.startedAt >= driver.dials[0]!.endedAt!);
  });

  it('inside the calling window: a callback that comes when the window is closed waits for its next opening, then is dialled', async () => {
    const s = await setup({ max_retry: 3 });
    const number = phone();
    const callbackAt = new Date(Date.now() + 1000);
    let calls = 0;
    const driver = byNumber({
      [number]: () =>
        ++calls === 1
          ? { kind: 'completed', outcome: 'callback_requested', metaData: { callback: { at: callbackAt.toISOString(), requested: callbackAt.toISOString() } } }
          : { kind: 'completed', outcome: 'confirmed' },
    });
    const id = await push(s.template, { customer_mobile_number: number });
    const sched = scheduler(driver);
    await sched.drain();
    assert.equal((await dueAt(id))!.toISOString(), callbackAt.toISOString());
    // The operator narrows the window to an hour that starts three hours from now (UTC): closed when the callback comes.
    const opens = DateTime.utc().plus({ hours: 3 }).startOf('hour');
    await s.update({ call_start_time: opens.toFormat('HH:mm'), call_end_time: opens.plus({ hours: 1 }).toFormat('HH:mm'), call_timezone: 'UTC' });
    await new Promise((r) => setTimeout(r, Math.max(0, callbackAt.getTime() - Date.now() + 50)));
    await sched.drain();
    // Due, but not dialled: held to the window's opening, still RETRY with its attempt count.
    const l = await lead(id);
    assert.deepEqual([l.status, l.attempt_count], ['RETRY', 1]);
    assert.equal((await dueAt(id))!.toISOString(), opens.toJSDate().toISOString());
    assert.equal(driver.dials.length, 1);
    // When the window is open again, the callback is dialled.
    await s.update({ call_start_time: '00:00', call_end_time: '00:00' });
    // (Time passes: the opening comes.)
    await t.db.query('UPDATE leads SET next_attempt_at = now() WHERE id = $1', [id]);
    await sched.drain();
    assert.deepEqual([(await lead(id)).outcome, driver.dials.length], ['confirmed', 2]);
  });

  it('a callback the policy refuses, or past max_retry, finishes the lead callback_requested', async () => {
    const refused = await setup({ max_retry: 3, retry_policy: { callback_requested: { retry: false } } });
    const spent = await setup({ max_retry: 0 });
    const [a, b] = [phone(), phone()];
    const callback = { at: new Date(Date.now() + 3_600_000).toISOString() };
    const driver = byNumber({ [a]: { kind: 'completed', outcome: 'callback_requested', metaData: { callback } }, [b]: { kind: 'completed', outcome: 'callback_requested', metaData: { callback } } });
    const ids = [await push(refused.template, { customer_mobile_number: a }), await push(spent.template, { customer_mobile_number: b })];
    await scheduler(driver).drain();
    for (const id of ids) {
      const l = await lead(id);
      assert.deepEqual([l.status, l.outcome], ['FINISHED', 'callback_requested']);
    }
  });
});

describe('an opt-out', () => {
  it('finishes the lead OPTED_OUT, blacklists the number with the lead and reason, and the queued lead for it is never dialled', async () => {
    const s = await setup({ max_retry: 2 });
    const number = phone();
    const first = await push(s.template, { customer_mobile_number: number });
    const queued = await push(s.template, { customer_mobile_number: number });
    const driver = byNumber({ [number]: { kind: 'completed', outcome: 'confirmed', metaData: { opted_out: { reason: 'stop calling me', at: new Date().toISOString() } } } });
    await scheduler(driver).drain();
    const l = await lead(first);
    assert.deepEqual([l.status, l.outcome], ['FINISHED', 'OPTED_OUT']);
    const listed = (await w.reseller1.get(`/blacklist?phone_number=${encodeURIComponent(number)}`)).body.data;
    assert.equal(listed.length, 1);
    assert.deepEqual([listed[0].reseller_id, listed[0].lead_id, listed[0].reason], [w.r1, first, 'stop calling me']);
    // Listed when the lead finished (one statement does both).
    assert.equal(new Date(listed[0].created_at).getTime(), new Date(l.call_end_time).getTime());
    const q = await lead(queued);
    assert.deepEqual([q.status, q.outcome, q.attempt_count], ['FINISHED', 'BLACKLISTED', 0]);
    assert.deepEqual(driver.dials.map((d) => d.leadId), [first]);
    // And a new push for it is refused.
    const again = await w.reseller1.post('/leads', { request_id: `c-${++seq}`, template: s.template, reseller_id: w.r1, payload: { customer_mobile_number: number } });
    assert.equal(again.status, 403);
    // Another reseller may still call it.
    assert.equal((await w.reseller2.get(`/blacklist?phone_number=${encodeURIComponent(number)}`)).body.data.length, 0);
  });
});

describe("recipient-local hours and a daily limit per number", () => {
  it("a window in the recipient's own zone opens and closes by the recipient's clock", async () => {
    // Two hours that are open now in Kolkata (UTC+05:30) and closed now in UTC.
    const kolkata = DateTime.now().setZone('Asia/Kolkata').startOf('hour');
    const window = { call_timezone: 'UTC', call_start_time: kolkata.toFormat('HH:mm'), call_end_time: kolkata.plus({ hours: 2 }).toFormat('HH:mm') };
    const recipient = await setup({ ...window, window_timezone: 'recipient' });
    const configured = await setup({ ...window, window_timezone: 'configuration' });
    const indian = '+919876543210';
    const a = await push(recipient.template, { customer_mobile_number: indian });
    const b = await push(configured.template, { customer_mobile_number: '+919876543211' });
    // The recipient's zone: the payload's timezone first, then the number's; a number that tells none (toll-free) keeps call_timezone.
    const c = await push(recipient.template, { customer_mobile_number: '+919876543212', timezone: 'UTC' });
    const d = await push(recipient.template, { customer_mobile_number: '+18005550199' });
    const driver = byNumber({ [indian]: { kind: 'completed', outcome: 'confirmed' } });
    await scheduler(driver).drain();
    assert.equal((await lead(a)).outcome, 'confirmed');
    const utcOpening = DateTime.utc().set({ hour: kolkata.hour, minute: 0, second: 0, millisecond: 0 });
    const expected = utcOpening.toMillis() > Date.now() ? utcOpening : utcOpening.plus({ days: 1 });
    for (const held of [b, c, d]) {
      assert.equal((await lead(held)).status, 'BACKLOG');
      assert.equal((await dueAt(held))!.toISOString(), expected.toJSDate().toISOString());
    }
    assert.equal(driver.dials.length, 1);
  });

  it("dials one number at most max_calls_per_number_per_day times in the recipient's day, across the reseller's leads", async () => {
    const limited = await setup({ max_calls_per_number_per_day: 2, window_timezone: 'recipient', max_retry: 0 });
    const other = await setup({ max_retry: 0 });
    const number = '+14155550177'; // San Francisco: America/Los_Angeles
    const driver = byNumber({ [number]: { kind: 'completed', outcome: 'confirmed' } });
    // A dial by another configuration of the reseller counts too.
    const elsewhere = await push(other.template, { customer_mobile_number: number });
    await scheduler(driver).drain();
    assert.equal((await lead(elsewhere)).outcome, 'confirmed');
    const ids = [await push(limited.template, { customer_mobile_number: number }), await push(limited.template, { customer_mobile_number: number })];
    await scheduler(driver).drain();
    assert.equal((await lead(ids[0]!)).outcome, 'confirmed');
    assert.equal((await lead(ids[1]!)).status, 'BACKLOG');
    assert.equal((await dueAt(ids[1]!))!.toISOString(), localDay(new Date(), 'America/Los_Angeles').next.toISOString());
    assert.equal(driver.dials.length, 2);
  });
});

describe('on the days clocks change (claims judged at instants of those days)', () => {
  /** One claim judged at `at` (the database's own clock is today's): nothing may be dialled by it. */
  async function judge(at: string): Promise<void> {
    const report = await t.db.tx((q) =>
      claimBatch(q, { workerId: 'dst-judge', limit: 20, leaseSeconds: 30, providers: ['PROVIDER_A'], onFinished: async () => {}, unclogWhenShort: false, judgedAt: () => new Date(at) }),
    );
    assert.equal(report.claimed.length, 0);
  }
  const newYork = () => `+1212555${String(3000 + ++phoneSeq).padStart(4, '0')}`;

  it("the recipient's window opens by the recipient's clock on the day it springs forward and the day it falls back", async () => {
    const window = { window_timezone: 'recipient', call_timezone: 'UTC' };
    const nine = await setup({ ...window, call_start_time: '09:00', call_end_time: '17:00' });
    const inGap = await setup({ ...window, call_start_time: '02:30', call_end_time: '05:00' });
    const a = await push(nine.template, { customer_mobile_number: newYork() });
    const b = await push(inGap.template, { customer_mobile_number: newYork() });
    // 01:30 in New York (EST, UTC-5) on 8 March 2026; at 02:00 the clocks go to 03:00 (EDT, UTC-4).
    await judge('2026-03-08T06:30:00Z');
    assert.equal((await dueAt(a))!.toISOString(), '2026-03-08T13:00:00.000Z'); // 09:00 EDT (14:00Z would be 09:00 EST)
    assert.equal((await dueAt(b))!.toISOString(), '2026-03-08T07:00:00.000Z'); // 02:30 does not exist that day: 03:00 EDT
    // 00:30 in New York (EDT) on 1 November 2026; at 02:00 the clocks go back to 01:00 (EST).
    await judge('2026-11-01T04:30:00Z');
    assert.equal((await dueAt(a))!.toISOString(), '2026-11-01T14:00:00.000Z'); // 09:00 EST
    assert.equal((await dueAt(b))!.toISOString(), '2026-11-01T07:30:00.000Z'); // 02:30 EST
    for (const id of [a, b]) assert.deepEqual([(await lead(id)).status, (await lead(id)).attempt_count], ['BACKLOG', 0]);
    // Their due times are in the database's past: out of the way of the tests that follow.
    const aborted = await w.reseller1.post('/lead/abort', { leads: [a, b].map((lead_id) => ({ lead_id, cancellation_reason: 'test over' })) });
    assert.equal(aborted.status, 200, JSON.stringify(aborted.body));
  });

  it("counts a number's dials in the recipient's day: 23 hours long when clocks spring forward, 25 when they fall back", async () => {
    const s = await setup({ window_timezone: 'recipient', call_timezone: 'UTC', max_calls_per_number_per_day: 1, max_retry: 0 });
    const number = newYork();
    const driver = byNumber({ [number]: { kind: 'completed', outcome: 'confirmed' } });
    const first = await push(s.template, { customer_mobile_number: number });
    await scheduler(driver).drain();
    assert.equal((await lead(first)).outcome, 'confirmed');
    const second = await push(s.template, { customer_mobile_number: number });
    const dialledAt = (at: string) => t.db.query('UPDATE call_attempts SET started_at = $2 WHERE lead_id = $1', [first, at]);
    // The number was dialled at 10:00 EDT on 8 March 2026; judged at 11:00 EDT the same day, the
    // next dial waits for the recipient's next midnight: 23 hours after this day's (05:00Z).
    await dialledAt('2026-03-08T14:00:00Z');
    await judge('2026-03-08T15:00:00Z');
    assert.equal((await dueAt(second))!.toISOString(), '2026-03-09T04:00:00.000Z');
    // Dialled at 01:30 EDT on 1 November 2026 (before the clocks go back); judged at 11:00 EST: the
    // day began at 04:00Z and ends 25 hours later.
    await dialledAt('2026-11-01T05:30:00Z');
    await judge('2026-11-01T16:00:00Z');
    assert.equal((await dueAt(second))!.toISOString(), '2026-11-02T05:00:00.000Z');
    assert.deepEqual([(await lead(second)).status, driver.dials.filter((d) => d.to === number).length], ['BACKLOG', 1]);
    assert.equal((await w.reseller1.post('/lead/abort', { leads: [{ lead_id: second, cancellation_reason: 'test over' }] })).status, 200);
  });
});

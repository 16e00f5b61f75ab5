/**
 * The call's edges in the lead lifecycle: retries by outcome, a callback at the time the callee
 * chose, an opt-out that blacklists the number (and the leads already queued for it), recipient-local
 * calling windows and a daily limit per number. Push through the API, a Scheduler with a scripted
 * driver, the database as the judge; on PGlite and on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DateTime } from 'luxon';
import type { CallEnd } from '../../src/lifecycle/index.js';
import { localDay } from '../../src/lib/windows.js';
import { createLogger } from '../../src/lib/logger.js';
import { Scheduler } from '../../src/scheduler/index.js';
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
  const cfg = await w.reseller1.post('/configurations', {
    reseller_id: w.r1,
    template: tpl.body.id,
    calling_provider: 'PROVIDER_A',
    call_start_time: '00:00',
    call_end_time: '00:00',
    retry_offset: 0,
    ...config,
  });
  assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
  await t.db.query(`UPDATE outbound_numbers SET status = 'DISABLED', lead_id = NULL`);
  const number = await t.admin.post('/numbers', { phone_number: `+1212555${String(2000 + seq).padStart(4, '0')}`, provider: 'PROVIDER_A' });
  assert.equal(number.status, 200, JSON.stringify(number.body));
  return { template: name };
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
    const callbackAt = new Date(Date.now() + 1500);
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

  it('inside the calling window: a callback that falls outside it waits for the next opening', async () => {
    // A window of one hour, three hours from now (UTC): closed now and when the callback comes.
    const opens = DateTime.utc().plus({ hours: 3 }).startOf('hour');
    const s = await setup({ max_retry: 3, call_start_time: opens.toFormat('HH:mm'), call_end_time: opens.plus({ hours: 1 }).toFormat('HH:mm') });
    const number = phone();
    const id = await push(s.template, { customer_mobile_number: number });
    // The lead was due at once but the window is closed: held to the opening.
    await scheduler(byNumber({})).drain();
    assert.equal((await dueAt(id))!.toISOString(), opens.toJSDate().toISOString());
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
    const driver = byNumber({ [indian]: { kind: 'completed', outcome: 'confirmed' } });
    await scheduler(driver).drain();
    assert.equal((await lead(a)).outcome, 'confirmed');
    const held = await lead(b);
    assert.equal(held.status, 'BACKLOG');
    const utcOpening = DateTime.utc().set({ hour: kolkata.hour, minute: 0, second: 0, millisecond: 0 });
    const expected = utcOpening.toMillis() > Date.now() ? utcOpening : utcOpening.plus({ days: 1 });
    assert.equal((await dueAt(b))!.toISOString(), expected.toJSDate().toISOString());
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

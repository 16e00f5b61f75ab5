/**
 * Calling within the law through the API and the scheduler: consent under require_consent, the
 * do-not-call lists (import, lookup, push and dial time, tenancy) and the calling hours of law
 * judged at an injected instant.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CallEnd } from '../../src/lifecycle/index.js';
import { createLogger } from '../../src/lib/logger.js';
import { claimBatch, Scheduler } from '../../src/scheduler/index.js';
import { buildTestApp, type Client, type TestApp } from '../helpers/app.js';
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
  const name = `law-${++seq}`;
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
  const number = await t.admin.post('/numbers', { phone_number: `+1212555${String(4000 + seq).padStart(4, '0')}`, provider: 'PROVIDER_A' });
  assert.equal(number.status, 200, JSON.stringify(number.body));
  return name;
}

let phoneSeq = 0;
const phone = () => `+1646555${String(8000 + ++phoneSeq).padStart(4, '0')}`;

const push = (template: string, extra: Record<string, unknown>) => w.reseller1.post('/leads', { request_id: `law-${++seq}`, template, reseller_id: w.r1, ...extra });
const lead = async (id: string) => (await w.reseller1.get(`/leads/${id}`)).body;
const leadsOf = async (requestId: string) => (await t.db.query('SELECT 1 FROM leads WHERE request_id = $1', [requestId])).rows.length;

function scheduler(driver: ScriptedDriver) {
  return new Scheduler({ db: t.db, drivers: new Map([[driver.provider, driver]]), log, recoverEveryMs: 0, maxConcurrentCalls: 1 });
}
const answering = (end: CallEnd = { kind: 'completed', outcome: 'confirmed' }) => new ScriptedDriver('PROVIDER_A', () => end);

const csv = (client: Client, listId: string, body: string, query = '') =>
  client.raw({ method: 'POST', path: `/dnc-lists/${listId}/import${query}`, payload: body, headers: { 'content-type': 'text/csv' } });

async function newList(client: Client, name: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await client.post('/dnc-lists', { name, source: 'test registry', version: 'v1', ...extra });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.id;
}

describe('consent', () => {
  it('under require_consent a lead without consent is refused (422) and one with it is called, its consent shown', async () => {
    const template = await setup({ require_consent: true });
    const without = await push(template, { payload: { customer_mobile_number: phone() } });
    assert.equal(without.status, 422, JSON.stringify(without.body));
    assert.deepEqual(without.body.errors.map((e: any) => e.path), ['/consent']);
    assert.match(without.body.detail, /require_consent/);

    const consent = { source: 'web_form', captured_at: '2025-01-10T09:30:00Z', text: 'I agree to be called by Acme', reference: 'form-7781' };
    const number = phone();
    const pushed = await push(template, { payload: { customer_mobile_number: number }, consent });
    assert.equal(pushed.status, 201, JSON.stringify(pushed.body));
    const driver = answering();
    await scheduler(driver).drain();
    assert.deepEqual(driver.dials.map((d) => d.to), [number]);
    const seen = await lead(pushed.body.lead_call_tracker_id);
    assert.equal(seen.outcome, 'confirmed');
    assert.deepEqual(seen.consent, consent);
  });

  it('is revoked by an opt-out in the call, and kept', async () => {
    const template = await setup();
    const consent = { source: 'ivr', captured_at: '2025-02-01T12:00:00Z' };
    const pushed = await push(template, { payload: { customer_mobile_number: phone() }, consent });
    assert.equal(pushed.status, 201);
    await scheduler(answering({ kind: 'completed', outcome: 'OPTED_OUT', metaData: { opted_out: { reason: 'stop calling me' } } })).drain();
    const seen = await lead(pushed.body.lead_call_tracker_id);
    assert.equal(seen.outcome, 'OPTED_OUT');
    assert.equal(seen.consent.source, 'ivr');
    assert.equal(seen.consent.revoked_by, 'opt_out');
    assert.ok(!Number.isNaN(Date.parse(seen.consent.revoked_at)));
  });

  it('refuses consent captured in the future or malformed, in a single push and in a batch, writing nothing', async () => {
    const template = await setup();
    const future = new Date(Date.now() + 86_400_000).toISOString();
    const res = await w.reseller1.post('/leads', { request_id: 'law-future', template, reseller_id: w.r1, payload: { customer_mobile_number: phone() }, consent: { source: 'web', captured_at: future } });
    assert.equal(res.status, 422);
    assert.deepEqual(res.body.errors.map((e: any) => e.path), ['/consent/captured_at']);
    assert.equal(await leadsOf('law-future'), 0);
    const missing = await w.reseller1.post('/leads', { request_id: 'law-nosource', template, reseller_id: w.r1, payload: {}, consent: { captured_at: '2025-01-01T00:00:00Z' } });
    assert.equal(missing.status, 422);
    assert.equal(await leadsOf('law-nosource'), 0);
    const batch = await w.reseller1.post('/leads/batch', {
      leads: [
        { request_id: 'law-b1', template, reseller_id: w.r1, payload: { customer_mobile_number: phone() }, consent: { source: 'web', captured_at: future } },
        { request_id: 'law-b2', template, reseller_id: w.r1, payload: { customer_mobile_number: phone() }, consent: { source: 'web', captured_at: '2025-01-01T00:00:00Z' } },
      ],
    });
    assert.equal(batch.status, 200, JSON.stringify(batch.body));
    assert.deepEqual(batch.body.results.map((r: any) => r.status), [422, 201]);
    assert.equal(await leadsOf('law-b1'), 0);
    assert.deepEqual((await lead(batch.body.results[1].result.lead_call_tracker_id)).consent, { source: 'web', captured_at: '2025-01-01T00:00:00Z' });
  });
});

describe('do-not-call lists', () => {
  it('imports a CSV, reporting malformed lines by number and importing the valid ones; looks numbers up', async () => {
    const id = await newList(w.reseller1, 'import-test');
    const res = await csv(w.reseller1, id, 'phone_number,name\n+14155550123,Ada\nabc\n+1 415 555 0124\n\n"+14155550125"\n+14155550123\n', '?version=v2');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(
      { imported: res.body.imported, already: res.body.already_listed, malformed: res.body.malformed, count: res.body.number_count, version: res.body.version },
      { imported: 2, already: 1, malformed: 2, count: 2, version: 'v2' },
    );
    assert.deepEqual(res.body.errors.map((e: any) => [e.line, e.value]), [[3, 'abc'], [4, '+1 415 555 0124']]);
    const hit = await w.merchant1.get(`/dnc-lists/${id}/numbers/${encodeURIComponent('+14155550125')}`);
    assert.deepEqual(hit.body, { list_id: id, phone_number: '+14155550125', listed: true });
    assert.equal((await w.reseller1.get(`/dnc-lists/${id}/numbers/${encodeURIComponent('+14155550199')}`)).body.listed, false);
    assert.equal((await w.reseller1.get(`/dnc-lists/${id}/numbers/abc`)).status, 400);
    const got = await w.reseller1.get(`/dnc-lists/${id}`);
    assert.equal(got.body.number_count, 2);
    assert.equal(got.body.source, 'test registry');

    // Nothing valid: refused with the line numbers, nothing written.
    const bad = await csv(w.reseller1, id, 'nope\n12345\n', '?mode=replace&version=v3');
    assert.equal(bad.status, 422, JSON.stringify(bad.body));
    assert.deepEqual(bad.body.errors.map((e: any) => e.path), ['/line/2']);
    const still = (await w.reseller1.get(`/dnc-lists/${id}`)).body;
    assert.deepEqual([still.number_count, still.version], [2, 'v2']);
    // replace: the list holds only the new file's numbers.
    const replaced = await csv(w.reseller1, id, '+14155550130\n', '?mode=replace');
    assert.deepEqual([replaced.body.imported, replaced.body.number_count], [1, 1]);
  });

  it("keeps tenants apart: another reseller's list is not found, the platform's is read-only to resellers", async () => {
    const mine = await newList(w.reseller1, 'tenancy');
    assert.equal((await w.reseller2.get(`/dnc-lists/${mine}`)).status, 404);
    assert.equal((await csv(w.reseller2, mine, '+14155550140\n')).status, 404);
    assert.equal((await w.reseller2.get(`/dnc-lists/${mine}/numbers/${encodeURIComponent('+14155550140')}`)).status, 404);
    assert.equal((await w.reseller2.delete(`/dnc-lists/${mine}`)).status, 404);
    assert.ok(!(await w.reseller2.get('/dnc-lists')).body.data.some((l: any) => l.id === mine));
    assert.equal((await w.merchant1.post('/dnc-lists', { name: 'merchant' })).status, 403);
    assert.equal((await w.reseller1.post('/dnc-lists', { name: 'other', reseller_id: w.r2 })).status, 403);
    assert.equal((await w.reseller1.post('/dnc-lists', { name: 'tenancy' })).status, 409);

    const platform = await newList(t.admin, 'platform-wide');
    assert.ok((await w.reseller2.get('/dnc-lists')).body.data.some((l: any) => l.id === platform && l.reseller_id === null));
    assert.equal((await csv(w.reseller2, platform, '+14155550141\n')).status, 403);
    assert.equal((await csv(t.admin, platform, '+14155550141\n')).status, 200);

    // A configuration may name its reseller's and the platform's lists, not another's.
    const tpl = await w.reseller2.post('/templates', { name: 'law-r2', reseller_id: w.r2, flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] } });
    const cfg = await w.reseller2.post('/configurations', { reseller_id: w.r2, template: tpl.body.id, calling_provider: 'PROVIDER_A', dnc_lists: [platform, mine] });
    assert.equal(cfg.status, 400, JSON.stringify(cfg.body));
    assert.deepEqual(cfg.body.errors.map((e: any) => e.path), ['/dnc_lists/1']);
  });

  it('refuses a listed number at push (403 naming the list) and stops one listed after it was queued', async () => {
    const list = await newList(w.reseller1, 'dial-time');
    const template = await setup({ dnc_lists: [list] });
    const early = phone();
    assert.equal((await csv(w.reseller1, list, `${early}\n`)).status, 200);
    const refused = await push(template, { payload: { customer_mobile_number: early } });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.code, 'dnc_listed');
    assert.match(refused.body.detail, /dial-time/);

    const [late, free] = [phone(), phone()];
    const queued = await push(template, { payload: { customer_mobile_number: late } });
    const other = await push(template, { payload: { customer_mobile_number: free } });
    assert.equal(queued.status, 201);
    assert.equal((await csv(w.reseller1, list, `${late}\n`)).status, 200);
    const driver = answering();
    await scheduler(driver).drain();
    const dialled = driver.dials.map((d) => d.to);
    assert.ok(dialled.includes(free) && !dialled.includes(late), dialled.join(' '));
    const stopped = await lead(queued.body.lead_call_tracker_id);
    assert.deepEqual([stopped.status, stopped.outcome, stopped.attempt_count], ['FINISHED', 'DNC_LISTED', 0]);
    assert.deepEqual([stopped.metaData.dnc_list.id, stopped.metaData.dnc_list.name], [list, 'dial-time']);
    assert.equal((await lead(other.body.lead_call_tracker_id)).outcome, 'confirmed');
  });
});

describe('calling hours of law', () => {
  it('holds a US number at 21:30 its local time under US hours, saying why, while an in-window number is called', async () => {
    const template = await setup({ legal_hours: ['US'] });
    // Only this test's leads are due: the claim below takes one with the one number there is.
    await t.db.query(`UPDATE leads SET status = 'FINISHED', outcome = 'aborted', next_attempt_at = NULL WHERE status IN ('BACKLOG', 'RETRY')`);
    const newYork = await push(template, { payload: { customer_mobile_number: '+12125557001' } });
    const losAngeles = await push(template, { payload: { customer_mobile_number: '+13105557002' } });
    assert.equal(newYork.status, 201);
    assert.equal(losAngeles.status, 201);
    // 01:30 UTC on 16 June 2026: 21:30 in New York (EDT), 18:30 in Los Angeles (PDT).
    const at = new Date('2026-06-16T01:30:00Z');
    const report = await t.db.tx((q) =>
      claimBatch(q, { workerId: 'law-judge', limit: 10, leaseSeconds: 30, providers: ['PROVIDER_A'], onFinished: async () => {}, unclogWhenShort: false, judgedAt: () => at }),
    );
    assert.deepEqual(report.claimed.map((c) => c.lead.id), [losAngeles.body.lead_call_tracker_id]);
    const held = await lead(newYork.body.lead_call_tracker_id);
    assert.equal(held.status, 'BACKLOG');
    assert.equal(held.next_attempt_at, '2026-06-16T12:00:00.000Z', '08:00 EDT');
    assert.deepEqual(
      [held.metaData.legal_hours_hold.jurisdiction, held.metaData.legal_hours_hold.hours, held.metaData.legal_hours_hold.zones],
      ['US', '08:00-21:00', ['America/New_York']],
    );
  });

  it('refuses an unknown jurisdiction in a configuration', async () => {
    const tpl = await w.reseller1.post('/templates', { name: 'law-bad-j', reseller_id: w.r1, flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] } });
    const cfg = await w.reseller1.post('/configurations', { reseller_id: w.r1, template: tpl.body.id, calling_provider: 'PROVIDER_A', legal_hours: ['XX'] });
    assert.equal(cfg.status, 400, JSON.stringify(cfg.body));
  });
});

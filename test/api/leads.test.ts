import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Db, Queryable } from '../../src/db/index.js';
import { buildTestApp, type Client, type TestApp } from '../helpers/app.js';
import { buildWorld, type World } from '../helpers/world.js';

let t: TestApp;
let w: World;
/** Templates: a reseller-level one with a configuration, one of merchant m1, one of reseller r2. */
let shared: { id: string; name: string };
let m1Only: { id: string; name: string };
let r2Tpl: { id: string; name: string };

const flow = (text: string) => ({ initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: text }] }] });
async function template(as: Client, name: string, resellerId: string, merchantId: string | null, text = 'Hello {customer_name}') {
  const res = await as.post('/templates', { name, reseller_id: resellerId, merchant_id: merchantId, flow: flow(text) });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return { id: res.body.id as string, name };
}

before(async () => {
  t = await buildTestApp();
  w = await buildWorld(t);
  shared = await template(w.reseller1, 'reminder', w.r1, null);
  m1Only = await template(w.reseller1, 'm1-survey', w.r1, w.m1, 'Survey for {customer_name} about {product}');
  r2Tpl = await template(w.reseller2, 'reminder', w.r2, null);
  const cfg = await w.reseller1.post('/configurations', { reseller_id: w.r1, template: shared.id, calling_provider: 'PROVIDER_A', initial_offset: 120 });
  assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
});
after(() => t.close());

let seq = 0;
const mobile = () => `+1646555${String(2000 + ++seq).padStart(4, '0')}`;
const push = (as: Client, patch: Record<string, unknown> = {}, payload: Record<string, unknown> = {}) =>
  as.post('/leads', {
    request_id: `order-${++seq}`,
    template: shared.name,
    reseller_id: w.r1,
    payload: { customer_mobile_number: mobile(), customer_name: 'Ada', ...payload },
    ...patch,
  });
const count = async () => Number((await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM leads')).rows[0]!.n);

describe('POST /leads', () => {
  it('queues a lead (201) and GET returns every field of a lead', async () => {
    const res = await push(w.reseller1, { request_id: 'order-A', reporting_webhook_url: 'https://crm.example.com/hook' }, { customer_mobile_number: '+14155550123', plan: 'gold' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.status, 'queued');
    assert.equal(res.body.order_id, 'order-A');
    assert.equal(res.body.message, 'Lead queued');
    const id = res.body.lead_call_tracker_id;
    const lead = await w.reseller1.get(`/leads/${id}`);
    assert.equal(lead.status, 200);
    const l = lead.body;
    assert.equal(l.id, id);
    assert.equal(l.reseller_id, w.r1);
    assert.equal(l.merchant_id, null);
    assert.equal(l.template, 'reminder');
    assert.equal(l.template_id, shared.id);
    assert.equal(l.request_id, 'order-A');
    assert.equal(l.status, 'BACKLOG');
    assert.equal(l.outcome, null);
    assert.equal(l.attempt_count, 0);
    for (const k of ['call_id', 'call_initiated_time', 'call_end_time', 'recording_url', 'cost', 'outbound_number_id', 'cancellation_reason', 'configurations_override']) {
      assert.ok(k in l && l[k] === null, `${k} is null until known`);
    }
    assert.equal(l.execution_mode, 'TELEPHONY');
    assert.equal(l.call_direction, 'OUTBOUND');
    assert.deepEqual(l.trace_scores, {});
    assert.deepEqual(l.metaData, {});
    assert.deepEqual(l.payload, { customer_mobile_number: '+14155550123', customer_name: 'Ada', plan: 'gold', reporting_webhook_url: 'https://crm.example.com/hook' });
    assert.equal(l.is_playground, false);
    assert.ok(!Number.isNaN(Date.parse(l.created_at)) && !Number.isNaN(Date.parse(l.updated_at)));
    // Due initial_offset (120 s) after creation.
    assert.equal(Date.parse(l.next_attempt_at) - Date.parse(l.created_at), 120_000);
  });

  it('queues a lead without customer_mobile_number (201) that is never due, and says why', async () => {
    const res = await w.reseller1.post('/leads', { request_id: 'no-phone', template: shared.name, reseller_id: w.r1, payload: { customer_name: 'Bo', mobile: '+14155550123' } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.match(res.body.message, /customer_mobile_number is missing/);
    const l = (await w.reseller1.get(`/leads/${res.body.lead_call_tracker_id}`)).body;
    assert.equal(l.status, 'BACKLOG');
    assert.equal(l.next_attempt_at, null);
  });

  it('says when no configuration exists yet, and holds the lead until one is created', async () => {
    const tpl = await template(w.reseller1, 'no-config', w.r1, null, 'Hi');
    const res = await push(w.reseller1, { template: tpl.name });
    assert.equal(res.status, 201);
    assert.match(res.body.message, /no configuration exists yet/);
    // Not due at once (nothing could call it): looked at again in 5 minutes, or when the configuration is created.
    const lead = (await w.reseller1.get(`/leads/${res.body.lead_call_tracker_id}`)).body;
    assert.equal(Date.parse(lead.next_attempt_at) - Date.parse(lead.created_at), 300_000);
  });

  it('answers 400 for each missing required field, an empty one, and an unknown execution_mode', async () => {
    const full = { request_id: 'r', template: shared.name, reseller_id: w.r1, payload: { customer_mobile_number: mobile(), customer_name: 'x' } };
    const before = await count();
    for (const field of ['request_id', 'template', 'payload', 'reseller_id'] as const) {
      const { [field]: _gone, ...body } = full;
      const res = await w.reseller1.post('/leads', body);
      assert.equal(res.status, 400, field);
      assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
      assert.ok(res.body.errors.some((e: any) => e.path === `/${field}`), JSON.stringify(res.body));
    }
    assert.equal((await w.reseller1.post('/leads', { ...full, template: '' })).status, 400);
    const mode = await w.reseller1.post('/leads', { ...full, execution_mode: 'CARRIER_PIGEON' });
    assert.equal(mode.status, 400);
    assert.equal(mode.body.errors[0].path, '/execution_mode');
    assert.equal(await count(), before, 'nothing written');
  });

  it('answers 422 for type mismatches, unknown fields, malformed numbers and URLs, and missing template variables', async () => {
    const before = await count();
    const cases: [Record<string, unknown>, Record<string, unknown> | undefined, string][] = [
      [{ request_id: 42 }, undefined, '/request_id'],
      [{ payload: 'a string' }, undefined, '/payload'],
      [{ is_playground: 'yes' }, undefined, '/is_playground'],
      [{ colour: 'blue' }, undefined, '/colour'],
      [{ reporting_webhook_url: 'ftp://example.com/x' }, undefined, '/reporting_webhook_url'],
      [{}, { customer_mobile_number: 14155550123 }, '/payload/customer_mobile_number'],
      [{}, { customer_mobile_number: '+1 415 555 0123' }, '/payload/customer_mobile_number'],
      [{}, { customer_name: null }, '/payload/customer_name'],
      [{}, { dial_digits: '12x' }, '/payload/dial_digits'],
      [{}, { dial_digits: 123 }, '/payload/dial_digits'],
    ];
    for (const [patch, payload, path] of cases) {
      const res = await push(w.reseller1, patch, payload);
      assert.equal(res.status, 422, `${path}: ${JSON.stringify(res.body)}`);
      assert.ok(res.body.errors.some((e: any) => e.path === path), `${path}: ${JSON.stringify(res.body.errors)}`);
    }
    const missingVar = await w.merchant1.post('/leads', { request_id: 'v', template: m1Only.name, reseller_id: w.r1, payload: { customer_mobile_number: mobile() } });
    assert.equal(missingVar.status, 422);
    assert.deepEqual(missingVar.body.errors.map((e: any) => e.path), ['/payload/customer_name', '/payload/product']);
    assert.equal(await count(), before, 'nothing written');
  });

  it('answers 403 for a blacklisted number (reseller or platform list) unless the configuration does not enforce it', async () => {
    await w.reseller1.post('/blacklist', { phone_numbers: ['+14155550166'] });
    await t.admin.post('/blacklist', { phone_numbers: ['+14155550167'] });
    for (const n of ['+14155550166', '+14155550167']) {
      const res = await push(w.reseller1, {}, { customer_mobile_number: n });
      assert.equal(res.status, 403);
      assert.equal(res.body.code, 'blacklisted');
    }
    const tpl = await template(w.reseller1, 'lenient', w.r1, null, 'Hi');
    await w.reseller1.post('/configurations', { reseller_id: w.r1, template: tpl.id, calling_provider: 'PROVIDER_A', enforce_blacklist: false });
    assert.equal((await push(w.reseller1, { template: tpl.name }, { customer_mobile_number: '+14155550166' })).status, 201);
    assert.equal((await push(w.reseller2, { template: r2Tpl.name, reseller_id: w.r2 }, { customer_mobile_number: '+14155550166' })).status, 201, 'another reseller is not bound by r1 list');
  });

  it('answers 404 for a template that does not exist under the reseller/merchant', async () => {
    assert.equal((await push(w.reseller1, { template: 'nope' })).status, 404);
    // The merchant template needs its merchant.
    assert.equal((await push(w.reseller1, { template: m1Only.name }, { product: 'x' })).status, 404);
    assert.equal((await push(w.reseller1, { template: m1Only.name, merchant_id: w.m1b }, { product: 'x' })).status, 404);
    assert.equal((await push(w.merchant1b, { template: m1Only.name }, { product: 'x' })).status, 404);
    assert.equal((await push(w.reseller1, { merchant_id: w.m2 })).status, 404, 'a merchant of another reseller');
    const ok = await push(w.reseller1, { template: m1Only.name, merchant_id: w.m1 }, { product: 'x' });
    assert.equal(ok.status, 201);
  });

  it('answers 403 outside the caller scope and 401 without a token', async () => {
    assert.equal((await push(w.reseller2)).status, 403);
    assert.equal((await push(w.merchant1, { merchant_id: w.m1b })).status, 403);
    assert.equal((await push(t.anon)).status, 401);
  });

  it('lets merchants and users push for their own merchant (merchant_id defaults to theirs)', async () => {
    for (const as of [w.merchant1, w.user1]) {
      const res = await push(as, { template: m1Only.name }, { product: 'p' });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      const l = (await as.get(`/leads/${res.body.lead_call_tracker_id}`)).body;
      assert.equal(l.merchant_id, w.m1);
    }
  });

  it('keeps configurations_override only for playground leads, validated', async () => {
    const override = { max_retry: 0, call_start_time: '00:00', call_end_time: '23:59' };
    const play = await push(w.reseller1, { is_playground: true, execution_mode: 'WEBRTC_TEST', configurations_override: override });
    assert.equal(play.status, 201);
    const pl = (await w.reseller1.get(`/leads/${play.body.lead_call_tracker_id}`)).body;
    assert.deepEqual(pl.configurations_override, override);
    assert.equal(pl.is_playground, true);
    assert.equal(pl.execution_mode, 'WEBRTC_TEST');
    const live = await push(w.reseller1, { configurations_override: override });
    assert.equal(live.status, 201);
    assert.match(live.body.message, /configurations_override was ignored/);
    assert.equal((await w.reseller1.get(`/leads/${live.body.lead_call_tracker_id}`)).body.configurations_override, null);
    const bad = await push(w.reseller1, { is_playground: true, configurations_override: { max_retry: -1, bogus: 1 } });
    assert.equal(bad.status, 422);
    const paths = bad.body.errors.map((e: any) => e.path);
    assert.ok(paths.includes('/configurations_override/max_retry') && paths.includes('/configurations_override/bogus'), JSON.stringify(paths));
  });

  it('answers 500 when the database write fails, with nothing queued', async () => {
    const failing: Db = {
      kind: t.db.kind,
      query: (sql, params) => (/INSERT INTO leads/.test(sql) ? Promise.reject(new Error('disk full')) : t.db.query(sql, params)),
      exec: (sql) => t.db.exec(sql),
      tx: (fn) => t.db.tx(fn),
      close: async () => {},
      listen: (channel, onNotify) => t.db.listen(channel, onNotify),
    } as Db & { query: Queryable['query'] };
    const broken = await buildTestApp({ db: failing });
    try {
      const before = await count();
      const res = await broken.admin.post('/leads', { request_id: 'x', template: shared.name, reseller_id: w.r1, payload: { customer_mobile_number: mobile(), customer_name: 'A' } });
      assert.equal(res.status, 500);
      assert.equal(res.body.code, 'lead_not_queued');
      assert.match(res.body.detail, /safe to retry/);
      assert.doesNotMatch(JSON.stringify(res.body), /disk full/, 'internals stay in the log');
      const batch = await broken.admin.post('/leads/batch', { leads: [{ request_id: 'x', template: shared.name, reseller_id: w.r1, payload: { customer_name: 'A' } }] });
      assert.equal(batch.status, 500);
      assert.equal(await count(), before);
    } finally {
      await broken.close();
    }
  });
});

describe('GET /leads', () => {
  it('lists leads in scope with filters; out-of-scope reads are 404', async () => {
    const a = (await push(w.reseller1, { request_id: 'list-me' })).body.lead_call_tracker_id;
    const m = (await push(w.merchant1, { template: m1Only.name, request_id: 'list-m1' }, { product: 'p' })).body.lead_call_tracker_id;
    const r2 = (await push(w.reseller2, { template: r2Tpl.name, reseller_id: w.r2, request_id: 'list-r2' })).body.lead_call_tracker_id;
    const byReq = await w.reseller1.get('/leads?request_id=list-me');
    assert.deepEqual(byReq.body.data.map((l: any) => l.id), [a]);
    const all = (await w.reseller1.get('/leads?page_size=1000')).body.data.map((l: any) => l.id);
    assert.ok(all.includes(a) && all.includes(m) && !all.includes(r2));
    const mine = (await w.merchant1.get('/leads?page_size=1000')).body.data.map((l: any) => l.id);
    assert.ok(mine.includes(m) && !mine.includes(a), 'a merchant sees only its merchant leads');
    assert.equal((await w.merchant1b.get(`/leads/${m}`)).status, 404);
    assert.equal((await w.reseller2.get(`/leads/${a}`)).status, 404);
    assert.equal((await w.user2.get(`/leads/${a}`)).status, 404);
    assert.equal((await w.reseller1.get('/leads/no-such-lead')).status, 404);
    const byTemplate = await w.reseller1.get(`/leads?template=${m1Only.name}&status=BACKLOG&page_size=1000`);
    assert.ok(byTemplate.body.data.every((l: any) => l.template === m1Only.name && l.status === 'BACKLOG'));
    assert.equal((await w.reseller1.get('/leads?status=DONE')).status, 400);
    const page = await w.reseller1.get('/leads?page=2&page_size=1');
    assert.equal(page.body.page, 2);
    assert.equal(page.body.data.length, 1);
  });
});

describe('POST /lead/abort', () => {
  it('aborts BACKLOG and RETRY leads, refuses PROCESSING, reports FINISHED and unknown ones, per item', async () => {
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push((await push(w.reseller1)).body.lead_call_tracker_id as string);
    const [backlog, retry, processing, finished] = ids as [string, string, string, string];
    await t.db.query(`UPDATE leads SET status = 'RETRY', attempt_count = 1 WHERE id = $1`, [retry]);
    await t.db.query(`UPDATE leads SET status = 'PROCESSING', attempt_count = 1 WHERE id = $1`, [processing]);
    await t.db.query(`UPDATE leads SET status = 'FINISHED', outcome = 'confirmed' WHERE id = $1`, [finished]);
    const foreign = (await push(w.reseller2, { template: r2Tpl.name, reseller_id: w.r2 })).body.lead_call_tracker_id;
    const res = await w.reseller1.post('/lead/abort', {
      leads: [backlog, retry, processing, finished, 'no-such-lead', foreign].map((lead_id) => ({ lead_id, cancellation_reason: 'customer asked' })),
    });
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.leads.map((l: any) => [l.id, l.status]),
      [
        [backlog, 'success'],
        [retry, 'success'],
        [processing, 'processing'],
        [finished, 'already_aborted'],
        ['no-such-lead', 'error'],
        [foreign, 'error'],
      ],
    );
    assert.ok(res.body.leads.every((l: any) => typeof l.message === 'string' && l.message.length > 0));
    for (const id of [backlog, retry]) {
      const l = (await w.reseller1.get(`/leads/${id}`)).body;
      assert.equal(l.status, 'FINISHED');
      assert.equal(l.outcome, 'aborted');
      assert.equal(l.cancellation_reason, 'customer asked');
      assert.equal(l.next_attempt_at, null);
    }
    assert.equal((await w.reseller1.get(`/leads/${processing}`)).body.status, 'PROCESSING');
    assert.equal((await w.reseller2.get(`/leads/${foreign}`)).body.status, 'BACKLOG', 'out of scope: untouched');
    const again = await w.reseller1.post('/lead/abort', { leads: [{ lead_id: backlog, cancellation_reason: 'twice' }] });
    assert.equal(again.body.leads[0].status, 'already_aborted');
    assert.equal((await w.reseller1.get(`/leads/${backlog}`)).body.cancellation_reason, 'customer asked');
  });

  it('never aborts a lead a scheduler is claiming at the same moment', async () => {
    const id = (await push(w.reseller1)).body.lead_call_tracker_id;
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    // A claim as the scheduler makes it: lock the due row, mark it PROCESSING, commit later.
    const claim = t.db.tx(async (q) => {
      await q.query(`SELECT id FROM leads WHERE id = $1 AND status IN ('BACKLOG', 'RETRY') FOR UPDATE SKIP LOCKED`, [id]);
      await q.query(`UPDATE leads SET status = 'PROCESSING', attempt_count = attempt_count + 1 WHERE id = $1`, [id]);
      locked();
      await gate;
    });
    await isLocked;
    const abort = w.reseller1.post('/lead/abort', { leads: [{ lead_id: id, cancellation_reason: 'race' }] });
    await new Promise((r) => setTimeout(r, 100));
    release();
    await claim;
    const res = await abort;
    assert.equal(res.body.leads[0].status, 'processing');
    const l = (await w.reseller1.get(`/leads/${id}`)).body;
    assert.equal(l.status, 'PROCESSING');
    assert.equal(l.cancellation_reason, null);
  });

  it('answers 400 for a malformed request', async () => {
    assert.equal((await w.reseller1.post('/lead/abort', {})).status, 400);
    assert.equal((await w.reseller1.post('/lead/abort', { leads: [] })).status, 400);
    assert.equal((await w.reseller1.post('/lead/abort', { leads: [{ lead_id: 'x' }] })).status, 400);
    assert.equal((await t.anon.post('/lead/abort', { leads: [{ lead_id: 'x', cancellation_reason: 'y' }] })).status, 401);
  });
});

describe('GET /leads/recording/{call_sid}', () => {
  it('answers 404 for an unknown call and for a call without a recording', async () => {
    const unknown = await w.reseller1.get('/leads/recording/CA0000');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'call_not_found');
    const id = (await push(w.reseller1)).body.lead_call_tracker_id;
    await t.db.query(`UPDATE leads SET call_id = 'CA1234', status = 'FINISHED', outcome = 'confirmed' WHERE id = $1`, [id]);
    const none = await w.reseller1.get('/leads/recording/CA1234');
    assert.equal(none.status, 404);
    assert.equal(none.body.code, 'recording_not_available');
    assert.equal((await w.reseller2.get('/leads/recording/CA1234')).body.code, 'call_not_found', 'no leak across resellers');
  });
});

describe('POST /leads/batch', () => {
  it('answers each item like POST /leads and inserts the valid ones', async () => {
    const before = await count();
    const good = (i: number) => ({ request_id: `b-${i}`, template: shared.name, reseller_id: w.r1, payload: { customer_mobile_number: mobile(), customer_name: `N${i}` } });
    const res = await w.reseller1.post('/leads/batch', {
      leads: [good(1), { ...good(2), template: 'nope' }, { ...good(3), execution_mode: 'X' }, { ...good(4), request_id: 4 }, good(5), 'not an object', { ...good(6), reseller_id: w.r2 }],
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.queued, 2);
    assert.equal(res.body.rejected, 5);
    assert.deepEqual(res.body.results.map((r: any) => [r.index, r.status]), [
      [0, 201],
      [1, 404],
      [2, 400],
      [3, 422],
      [4, 201],
      [5, 422],
      [6, 403],
    ]);
    assert.equal(res.body.results[1].problem.code, 'template_not_found');
    assert.equal(await count(), before + 2);
    const first = await w.reseller1.get(`/leads/${res.body.results[0].result.lead_call_tracker_id}`);
    assert.equal(first.body.request_id, 'b-1');
  });

  it('answers a large batch in the order sent, the refused ones where they were (the checks run a group at a time)', async () => {
    const before = await count();
    const bad = new Set([0, 49, 50, 51, 99, 100, 299, 300]);
    const leads = Array.from({ length: 301 }, (_, i) =>
      bad.has(i)
        ? { request_id: `order-${i}`, template: shared.name, reseller_id: w.r1, payload: { customer_mobile_number: '12345', customer_name: 'B' } }
        : { request_id: `order-${i}`, template: shared.name, reseller_id: w.r1, payload: { customer_mobile_number: mobile(), customer_name: 'B' } },
    );
    const res = await w.reseller1.post('/leads/batch', { leads });
    assert.equal(res.status, 200);
    assert.equal(res.body.queued, 301 - bad.size);
    assert.equal(res.body.rejected, bad.size);
    assert.deepEqual(res.body.results.map((r: any) => r.index), leads.map((_, i) => i));
    assert.deepEqual(
      res.body.results.filter((r: any) => r.status !== 201).map((r: any) => [r.index, r.status, r.problem.errors[0].path]),
      [...bad].map((i) => [i, 422, '/payload/customer_mobile_number']),
    );
    assert.equal(await count(), before + 301 - bad.size);
    for (const i of [1, 48, 52, 101, 298]) {
      const lead = await w.reseller1.get(`/leads/${res.body.results[i].result.lead_call_tracker_id}`);
      assert.equal(lead.body.request_id, `order-${i}`);
    }
  });

  it('checks each item of a batch naming several templates against its own template, configuration and blacklist', async () => {
    // Looked up together: each template's flow and configuration come once, on its first item.
    const lenient = await template(w.reseller1, 'batch-lenient', w.r1, null, 'Your order {order_no}');
    const cfg = await w.reseller1.post('/configurations', { reseller_id: w.r1, template: lenient.id, calling_provider: 'PROVIDER_A', enforce_blacklist: false });
    assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
    const unconfigured = await template(w.reseller1, 'batch-unconfigured', w.r1, null, 'Hi {first_name}');
    await w.reseller1.post('/blacklist', { phone_numbers: ['+14155550188'] });
    const item = (template: string, payload: Record<string, unknown>) => ({ request_id: `multi-${++seq}`, template, reseller_id: w.r1, payload: { customer_mobile_number: mobile(), ...payload } });
    const leads = [
      item(shared.name, { customer_name: 'A' }),
      item(lenient.name, { customer_name: 'B' }),
      item(unconfigured.name, { first_name: 'C' }),
      item(shared.name, { order_no: 1 }),
      item(lenient.name, { order_no: 2, customer_mobile_number: '+14155550188' }),
      item(shared.name, { customer_name: 'D', customer_mobile_number: '+14155550188' }),
      item('batch-nope', { customer_name: 'E' }),
      item(unconfigured.name, { customer_name: 'F' }),
      item(lenient.name, { order_no: 3 }),
    ];
    const res = await w.reseller1.post('/leads/batch', { leads });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const outcome = res.body.results.map((r: any) => [r.index, r.status, r.problem?.code ?? null, r.problem?.errors?.[0]?.path ?? null]);
    assert.deepEqual(outcome, [
      [0, 201, null, null],
      [1, 422, 'schema_validation_failed', '/payload/order_no'],
      [2, 201, null, null],
      [3, 422, 'schema_validation_failed', '/payload/customer_name'],
      [4, 201, null, null], // blacklisted, but this template's configuration does not enforce the list
      [5, 403, 'blacklisted', null],
      [6, 404, 'template_not_found', '/template'],
      [7, 422, 'schema_validation_failed', '/payload/first_name'],
      [8, 201, null, null],
    ]);
    assert.match(res.body.results[2].result.message, /no configuration exists yet for template batch-unconfigured/);
    assert.equal(res.body.results[8].result.message, 'Lead queued');
    const templateOf = async (i: number) => (await w.reseller1.get(`/leads/${res.body.results[i].result.lead_call_tracker_id}`)).body.template_id;
    assert.deepEqual(await Promise.all([0, 2, 4, 8].map(templateOf)), [shared.id, unconfigured.id, lenient.id, lenient.id]);
  });

  it('takes 1,000 leads at once and refuses more', async () => {
    const before = await count();
    const leads = Array.from({ length: 1000 }, (_, i) => ({ request_id: `bulk-${i}`, template: shared.name, reseller_id: w.r1, payload: { customer_mobile_number: mobile(), customer_name: 'B' } }));
    const res = await w.reseller1.post('/leads/batch', { leads });
    assert.equal(res.status, 200);
    assert.equal(res.body.queued, 1000);
    assert.equal(await count(), before + 1000);
    assert.equal((await w.reseller1.post('/leads/batch', { leads: [...leads, leads[0]] })).status, 400);
    assert.equal((await w.reseller1.post('/leads/batch', { leads: [] })).status, 400);
  });
});

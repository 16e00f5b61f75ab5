/**
 * Duplicates caught at the door: POST /leads/import/preview finds numbers repeated inside the
 * file, numbers still queued in the campaign and numbers dialled in the last dedupe_days days,
 * and queues nothing; POST /leads/batch with skip_duplicates leaves them out.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { buildWorld, type World } from '../helpers/world.js';

let t: TestApp;
let w: World;
let campaignId: string;

const flow = { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hello {customer_name}' }] }] };
const QUEUED = '+16465550101';
const CALLED = '+16465550102';
const CALLED_LONG_AGO = '+16465550103';
const leadCount = async () => (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM leads')).rows[0]!.n;

before(async () => {
  t = await buildTestApp();
  w = await buildWorld(t);
  assert.equal((await w.reseller1.post('/templates', { name: 'renewals', reseller_id: w.r1, flow })).status, 200);
  const c = await w.reseller1.post('/campaigns', { name: 'spring', reseller_id: w.r1, template: 'renewals' });
  assert.equal(c.status, 201, JSON.stringify(c.body));
  campaignId = c.body.id;
  const queued = await w.reseller1.post('/leads', { request_id: 'q', template: 'renewals', reseller_id: w.r1, campaign_id: campaignId, payload: { customer_mobile_number: QUEUED, customer_name: 'Q' } });
  assert.equal(queued.status, 201, JSON.stringify(queued.body));
  // Two numbers dialled before: one three days ago, one forty days ago.
  for (const [phone, days] of [[CALLED, 3], [CALLED_LONG_AGO, 40]] as const) {
    const res = await w.reseller1.post('/leads', { request_id: `old-${phone}`, template: 'renewals', reseller_id: w.r1, payload: { customer_mobile_number: phone, customer_name: 'Old' } });
    assert.equal(res.status, 201);
    await t.db.query(`INSERT INTO call_attempts (id, lead_id, attempt, phone_number, started_at, ended_at, outcome) VALUES ($1, $2, 1, $3, now() - make_interval(days => $4), now() - make_interval(days => $4), 'completed')`, [
      `att-${phone}`,
      res.body.lead_call_tracker_id,
      phone,
      days,
    ]);
  }
});
after(() => t.close());

const csv = [
  'customer_mobile_number,customer_name,request_id',
  '+16465550200,Ada,r1',
  `${QUEUED},Bob,r2`,
  '+16465550200,Ada again,r3',
  `${CALLED},Cy,r4`,
  `${CALLED_LONG_AGO},Di,r5`,
].join('\n');

describe('duplicates at the door', () => {
  it('the preview shows columns, rows and every kind of duplicate, and queues nothing', async () => {
    const before = await leadCount();
    const res = await w.reseller1.post('/leads/import/preview', { csv, template: 'renewals', campaign_id: campaignId, dedupe_days: 30, file_name: 'spring.csv' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.columns, [
      { column: 'customer_mobile_number', field: 'payload.customer_mobile_number' },
      { column: 'customer_name', field: 'payload.customer_name' },
      { column: 'request_id', field: 'request_id' },
    ]);
    assert.equal(res.body.total_rows, 5);
    assert.equal(res.body.rows[0].line, 2);
    assert.deepEqual(res.body.rows[0].lead, { template: 'renewals', request_id: 'r1', reseller_id: w.r1, campaign_id: campaignId, payload: { customer_mobile_number: '+16465550200', customer_name: 'Ada' } });
    const dups = res.body.duplicates.map((d: { line: number; kind: string; first_line?: number }) => [d.line, d.kind, d.first_line]);
    assert.deepEqual(dups, [
      [3, 'in_campaign', undefined],
      [4, 'in_file', 2],
      [5, 'recent_call', undefined],
    ]);
    assert.deepEqual(res.body.counts, { in_file: 1, in_campaign: 1, recent_call: 1 });
    assert.equal(await leadCount(), before, 'the preview queued nothing');
  });

  it('without dedupe_days, calls are not checked; without a campaign, queued leads are not', async () => {
    const res = await w.reseller1.post('/leads/import/preview', { csv, template: 'renewals' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.counts, { in_file: 1, in_campaign: 0, recent_call: 0 });
  });

  it('refuses a bad header, a campaign of another tenant, a reseller out of scope', async () => {
    const noPhone = await w.reseller1.post('/leads/import/preview', { csv: 'name\nAda', template: 'renewals' });
    assert.equal(noPhone.status, 422);
    assert.match(noPhone.body.detail, /customer_mobile_number/);
    const ragged = await w.reseller1.post('/leads/import/preview', { csv: 'customer_mobile_number,a\n+16465550200,1,2', template: 'renewals' });
    assert.equal(ragged.status, 422);
    const other = await w.reseller2.post('/leads/import/preview', { csv, template: 'renewals', campaign_id: campaignId });
    assert.equal(other.status, 404);
    const scope = await w.reseller2.post('/leads/import/preview', { csv, template: 'renewals', reseller_id: w.r1 });
    assert.equal(scope.status, 403);
  });

  const bodies = () =>
    csv
      .split('\n')
      .slice(1)
      .map((line) => {
        const [phone, name, requestId] = line.split(',');
        return { request_id: `b-${requestId}`, template: 'renewals', reseller_id: w.r1, campaign_id: campaignId, payload: { customer_mobile_number: phone, customer_name: name } };
      });

  it('a batch with skip_duplicates leaves each kind out and says why', async () => {
    const before = await leadCount();
    const res = await w.reseller1.post('/leads/batch', { leads: bodies(), skip_duplicates: true, dedupe_days: 30 });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.queued, 2);
    assert.equal(res.body.skipped, 3);
    assert.equal(res.body.rejected, 0);
    const view = res.body.results.map((r: { index: number; status: number; skipped?: boolean; duplicate?: { kind: string; first_index?: number } }) => [r.index, r.status, r.skipped ?? false, r.duplicate?.kind, r.duplicate?.first_index]);
    assert.deepEqual(view, [
      [0, 201, false, undefined, undefined],
      [1, 200, true, 'in_campaign', undefined],
      [2, 200, true, 'in_file', 0],
      [3, 200, true, 'recent_call', undefined],
      [4, 201, false, undefined, undefined],
    ]);
    assert.equal(await leadCount(), before + 2);
    // Now +16465550200 is queued in the campaign: the same file again skips it as in_campaign.
    const again = await w.reseller1.post('/leads/batch', { leads: bodies().map((b) => ({ ...b, request_id: `again-${b.request_id}` })), skip_duplicates: true });
    assert.equal(again.status, 200);
    assert.deepEqual(
      again.body.results.map((r: { duplicate?: { kind: string } }) => r.duplicate?.kind ?? null),
      ['in_campaign', 'in_campaign', 'in_file', null, 'in_campaign'],
    );
    assert.equal(again.body.queued, 1);
  });

  it('skip_duplicates false queues every row and marks the duplicates; no option changes nothing', async () => {
    const before = await leadCount();
    const fresh = bodies().map((b, i) => ({ ...b, campaign_id: undefined, request_id: `plain-${i}`, payload: { ...b.payload, customer_mobile_number: i === 2 ? '+16465550300' : `+1646555031${i}` } }));
    fresh[1]!.payload.customer_mobile_number = '+16465550300';
    const reported = await w.reseller1.post('/leads/batch', { leads: fresh, skip_duplicates: false });
    assert.equal(reported.status, 200);
    assert.equal(reported.body.queued, 5);
    assert.equal(reported.body.skipped, undefined);
    assert.equal(reported.body.results[2].status, 201);
    assert.equal(reported.body.results[2].duplicate.kind, 'in_file');
    const plain = await w.reseller1.post('/leads/batch', { leads: fresh.map((b) => ({ ...b, request_id: `plain2-${b.request_id}` })) });
    assert.equal(plain.body.queued, 5);
    assert.ok(plain.body.results.every((r: { duplicate?: unknown }) => r.duplicate === undefined));
    assert.equal(await leadCount(), before + 10);
  });
});

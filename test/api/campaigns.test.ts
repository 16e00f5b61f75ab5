/**
 * The campaign resource through HTTP: create, list, read with progress, pause, resume, stop,
 * results as JSON and CSV; leads joining with campaign_id; bad input refused with nothing written.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, type Client, type TestApp } from '../helpers/app.js';
import { buildWorld, type World } from '../helpers/world.js';

let t: TestApp;
let w: World;

const flow = {
  initial_node: 'a',
  nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hello {customer_name}' }] }],
  post_call_analysis: { summary: true, fields: { delivery_date: { type: 'string', description: 'The date agreed' }, interested: { type: 'boolean', description: 'Wants it' } } },
};

before(async () => {
  t = await buildTestApp();
  w = await buildWorld(t);
  for (const [as, r] of [[w.reseller1, w.r1], [w.reseller2, w.r2]] as const) {
    const res = await as.post('/templates', { name: 'renewals', reseller_id: r, flow });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  }
});
after(() => t.close());

let seq = 0;
const mobile = () => `+1646555${String(3000 + ++seq).padStart(4, '0')}`;
const create = (as: Client, patch: Record<string, unknown> = {}) =>
  as.post('/campaigns', { name: `campaign ${++seq}`, reseller_id: w.r1, template: 'renewals', ...patch });
const lead = (campaignId: string | undefined, patch: Record<string, unknown> = {}) => ({
  request_id: `order-${++seq}`,
  template: 'renewals',
  reseller_id: w.r1,
  payload: { customer_mobile_number: mobile(), customer_name: 'Ada' },
  ...(campaignId ? { campaign_id: campaignId } : {}),
  ...patch,
});
const count = async (table: 'campaigns' | 'leads') => (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n;

/** The progress's three counts always add up to its total. */
function assertSums(p: { total: number; queued: number; in_progress: number; finished: number }) {
  assert.equal(p.queued + p.in_progress + p.finished, p.total, JSON.stringify(p));
}

describe('campaigns', () => {
  it('creates, reads with progress, lists with paging', async () => {
    const res = await create(w.reseller1, {
      max_concurrent_calls: 3,
      max_calls_per_second: 2,
      circuit_breaker: { failure_ratio: 0.5, window_seconds: 120, min_calls: 10 },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const c = res.body;
    assert.equal(c.status, 'running');
    assert.equal(c.template, 'renewals');
    assert.equal(c.merchant_id, null);
    assert.equal(c.paused_reason, null);
    assert.deepEqual(c.circuit_breaker, { failure_ratio: 0.5, window_seconds: 120, min_calls: 10 });
    // When the counts were read: a small campaign's are read afresh each time.
    assert.ok(Date.parse(c.progress.as_of) <= Date.now() + 1000, c.progress.as_of);
    const { as_of: _readAt, ...counts } = c.progress;
    assert.deepEqual(counts, {
      total: 0, queued: 0, in_progress: 0, finished: 0, by_outcome: {}, answer_rate: null, avg_duration: null, cost: 0, live_calls: 0, estimated_finish_at: null,
    });
    const read = await w.reseller1.get(`/campaigns/${c.id}`);
    assert.deepEqual({ ...read.body, progress: { ...read.body.progress, as_of: c.progress.as_of } }, c);
    const later = await create(w.reseller1, { start_at: new Date(Date.now() + 3_600_000).toISOString() });
    assert.equal(later.body.status, 'scheduled');
    const list = await w.reseller1.get('/campaigns?page_size=1');
    assert.equal(list.status, 200);
    assert.equal(list.body.data.length, 1);
    assert.equal(list.body.data[0].id, later.body.id);
    assert.ok(list.body.total >= 2);
    // Another reseller neither lists nor reads it.
    assert.ok(!(await w.reseller2.get('/campaigns')).body.data.some((x: { id: string }) => x.id === c.id));
    assert.equal((await w.reseller2.get(`/campaigns/${c.id}`)).status, 404);
  });

  it('refuses bad controls with a clear 4xx and writes nothing', async () => {
    const before = await count('campaigns');
    const cases: [Record<string, unknown>, number, string][] = [
      [{ max_concurrent_calls: 0 }, 400, '/max_concurrent_calls'],
      [{ max_calls_per_second: -1 }, 400, '/max_calls_per_second'],
      [{ max_calls_per_second: 0 }, 400, '/max_calls_per_second'],
      [{ start_at: '2030-01-02T00:00:00Z', end_at: '2030-01-01T00:00:00Z' }, 400, '/end_at'],
      [{ end_at: '2020-01-01T00:00:00Z' }, 400, '/end_at'],
      [{ circuit_breaker: { failure_ratio: 1.5, window_seconds: 60, min_calls: 5 } }, 400, '/circuit_breaker/failure_ratio'],
      [{ template: 'no-such-template' }, 404, '/template'],
    ];
    for (const [patch, status, path] of cases) {
      const res = await create(w.reseller1, patch);
      assert.equal(res.status, status, `${JSON.stringify(patch)}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.errors?.[0]?.path, path, JSON.stringify(res.body));
    }
    assert.equal((await create(w.reseller2, {})).status, 403); // reseller r1 is outside its token
    assert.equal((await create(w.user1, {})).status, 403); // users may not run campaigns
    assert.equal(await count('campaigns'), before);
  });

  it('leads join with campaign_id; another tenant’s campaign or a stopped one is refused, nothing written', async () => {
    const c = (await create(w.reseller1)).body;
    const theirs = (await w.reseller2.post('/campaigns', { name: 'theirs', reseller_id: w.r2, template: 'renewals' })).body;
    const pushed = await w.reseller1.post('/leads', lead(c.id));
    assert.equal(pushed.status, 201, JSON.stringify(pushed.body));
    const got = await w.reseller1.get(`/leads/${pushed.body.lead_call_tracker_id}`);
    assert.equal(got.body.campaign_id, c.id);
    // Without campaign_id the lead is as before.
    const plain = await w.reseller1.post('/leads', lead(undefined));
    assert.equal(plain.status, 201);
    assert.equal((await w.reseller1.get(`/leads/${plain.body.lead_call_tracker_id}`)).body.campaign_id, null);

    const leadsBefore = await count('leads');
    const foreign = await w.reseller1.post('/leads', lead(theirs.id));
    assert.equal(foreign.status, 404, JSON.stringify(foreign.body));
    assert.equal(foreign.body.code, 'campaign_not_found');
    const missing = await w.reseller1.post('/leads', lead('no-such-campaign'));
    assert.equal(missing.status, 404);
    const batch = await w.reseller1.post('/leads/batch', { leads: [lead(c.id), lead(theirs.id)] });
    assert.equal(batch.status, 200);
    assert.deepEqual(batch.body.results.map((r: { status: number }) => r.status), [201, 404]);
    assert.equal(await count('leads'), leadsBefore + 1);

    assert.equal((await w.reseller1.post(`/campaigns/${c.id}/stop`)).status, 200);
    const late = await w.reseller1.post('/leads', lead(c.id));
    assert.equal(late.status, 409, JSON.stringify(late.body));
    assert.equal(late.body.code, 'campaign_stopped');
    assert.equal(await count('leads'), leadsBefore + 1);
  });

  it('pause, resume and stop; a paused campaign says so on its leads; stop aborts the queued leads', async () => {
    const c = (await create(w.merchant1, { merchant_id: w.m1 })).body;
    assert.equal(c.merchant_id, w.m1);
    const batch = await w.merchant1.post('/leads/batch', { leads: [1, 2, 3].map(() => lead(c.id, { merchant_id: w.m1 })) });
    assert.equal(batch.body.queued, 3, JSON.stringify(batch.body));
    const leadId = batch.body.results[0].result.lead_call_tracker_id;

    assert.equal((await w.user1.post(`/campaigns/${c.id}/pause`)).status, 403);
    assert.equal((await w.merchant1b.post(`/campaigns/${c.id}/pause`)).status, 404);
    const paused = await w.merchant1.post(`/campaigns/${c.id}/pause`);
    assert.equal(paused.status, 200, JSON.stringify(paused.body));
    assert.equal(paused.body.status, 'paused');
    assert.match(paused.body.paused_reason, /paused by/);
    assert.equal((await w.merchant1.get(`/leads/${leadId}`)).body.held_reason, 'campaign_paused');
    assert.equal((await w.merchant1.post(`/campaigns/${c.id}/pause`)).status, 409);

    const resumed = await w.merchant1.post(`/campaigns/${c.id}/resume`);
    assert.equal(resumed.body.status, 'running');
    assert.equal(resumed.body.paused_reason, null);
    assert.equal((await w.merchant1.get(`/leads/${leadId}`)).body.held_reason, undefined);
    assert.equal((await w.merchant1.post(`/campaigns/${c.id}/resume`)).status, 409);

    const stopped = await w.merchant1.post(`/campaigns/${c.id}/stop`);
    assert.equal(stopped.status, 200);
    assert.equal(stopped.body.status, 'stopped');
    assert.deepEqual(stopped.body.progress.by_outcome, { aborted: 3 });
    assert.equal(stopped.body.progress.finished, 3);
    assertSums(stopped.body.progress);
    const l = (await w.merchant1.get(`/leads/${leadId}`)).body;
    assert.equal(l.outcome, 'aborted');
    assert.equal(l.cancellation_reason, 'campaign stopped');
    // A finished campaign cannot be paused, stopped or resumed: 409, nothing written.
    for (const action of ['pause', 'stop', 'resume']) {
      const res = await w.merchant1.post(`/campaigns/${c.id}/${action}`);
      assert.equal(res.status, 409, action);
    }
    assert.equal((await w.merchant1.get(`/campaigns/${c.id}`)).body.updated_at, stopped.body.updated_at);
  });

  it('completes when no lead is queued or in progress, and then cannot be paused', async () => {
    const c = (await create(w.reseller1)).body;
    const batch = await w.reseller1.post('/leads/batch', { leads: [lead(c.id), lead(c.id)] });
    const ids = batch.body.results.map((r: { result: { lead_call_tracker_id: string } }) => r.result.lead_call_tracker_id);
    assert.equal((await w.reseller1.get(`/campaigns/${c.id}`)).body.status, 'running');
    await w.reseller1.post('/lead/abort', { leads: ids.map((id: string) => ({ lead_id: id, cancellation_reason: 'done' })) });
    const done = await w.reseller1.get(`/campaigns/${c.id}`);
    assert.equal(done.body.status, 'completed');
    assertSums(done.body.progress);
    const pause = await w.reseller1.post(`/campaigns/${c.id}/pause`);
    assert.equal(pause.status, 409);
    assert.equal(pause.body.code, 'campaign_finished');
  });

  it('past its end a campaign is completed, its queued leads say so, and stop finishes them', async () => {
    const c = (await create(w.reseller1, { end_at: new Date(Date.now() + 3_600_000).toISOString() })).body;
    const pushed = await w.reseller1.post('/leads', lead(c.id));
    const id = pushed.body.lead_call_tracker_id;
    // The end passes (as the clock would move it).
    await t.db.query(`UPDATE campaigns SET end_at = now() - interval '1 second' WHERE id = $1`, [c.id]);
    const ended = await w.reseller1.get(`/campaigns/${c.id}`);
    assert.equal(ended.body.status, 'completed');
    assert.equal((await w.reseller1.get(`/leads/${id}`)).body.held_reason, 'campaign_ended');
    assert.equal((await w.reseller1.post('/leads', lead(c.id))).body.code, 'campaign_ended');
    assert.equal((await w.reseller1.post(`/campaigns/${c.id}/pause`)).status, 409);
    const stopped = await w.reseller1.post(`/campaigns/${c.id}/stop`);
    assert.equal(stopped.status, 200, JSON.stringify(stopped.body));
    assert.deepEqual(stopped.body.progress.by_outcome, { aborted: 1 });
    assert.equal((await w.reseller1.post(`/campaigns/${c.id}/stop`)).status, 409);
  });

  it('results: a row per lead, as JSON pages and as CSV with the analysis fields as columns', async () => {
    const c = (await create(w.reseller1)).body;
    const batch = await w.reseller1.post('/leads/batch', { leads: [lead(c.id), lead(c.id), lead(c.id)] });
    const ids: string[] = batch.body.results.map((r: { result: { lead_call_tracker_id: string } }) => r.result.lead_call_tracker_id);
    // One lead as a finished, recorded call with its analysis leaves it.
    await t.db.query(
      `UPDATE leads SET status = 'FINISHED', outcome = 'confirmed', attempt_count = 1, duration_seconds = 42, cost = 0.12, call_id = 'CA-results-1',
              recording_url = 'local:CA-results-1.wav', meta_data = $2 WHERE id = $1`,
      [ids[0], JSON.stringify({ analysis: { summary: 'Agreed, "gladly".', fields: { delivery_date: '2026-03-14', interested: true }, success: true } })],
    );
    const json = await w.reseller1.get(`/campaigns/${c.id}/results?page_size=2`);
    assert.equal(json.status, 200, JSON.stringify(json.body));
    assert.equal(json.body.total, 3);
    assert.equal(json.body.data.length, 2);
    const all = (await w.reseller1.get(`/campaigns/${c.id}/results`)).body.data;
    assert.deepEqual(all.map((r: { lead_id: string }) => r.lead_id).sort(), [...ids].sort());
    const first = all.find((r: { lead_id: string }) => r.lead_id === ids[0]);
    assert.equal(first.outcome, 'confirmed');
    assert.equal(first.duration_seconds, 42);
    assert.equal(first.cost, 0.12);
    assert.equal(first.analysis.delivery_date, '2026-03-14');
    assert.match(first.lead_url, new RegExp(`/leads/${ids[0]}$`));
    assert.match(first.recording_url, /\/leads\/recording\/CA-results-1$/);
    assert.equal(all.find((r: { lead_id: string }) => r.lead_id === ids[1]).recording_url, null);

    const csv = await w.reseller1.raw({ method: 'GET', path: `/campaigns/${c.id}/results`, headers: { accept: 'text/csv' } });
    assert.equal(csv.status, 200);
    assert.match(String(csv.headers['content-type']), /text\/csv/);
    const lines = String(csv.body).trim().split('\r\n');
    assert.equal(lines.length, 4); // the header and a row per lead
    assert.equal(
      lines[0],
      'lead_id,request_id,number,status,outcome,attempts,duration_seconds,cost,analysis_summary,analysis_success,analysis_delivery_date,analysis_interested,lead_url,recording_url',
    );
    const row = lines.find((l) => l.startsWith(`${ids[0]},`))!;
    assert.ok(row.includes(',"Agreed, ""gladly"".",true,2026-03-14,true,'), row);
    assert.deepEqual(lines.slice(1).map((l) => l.split(',')[0]).sort(), [...ids].sort());
    assert.equal((await w.reseller2.raw({ method: 'GET', path: `/campaigns/${c.id}/results`, headers: { accept: 'text/csv' } })).status, 404);
  });

  it('appears in the OpenAPI document', async () => {
    const doc = (await t.anon.get('/openapi.json')).body;
    for (const p of ['/campaigns', '/campaigns/{id}', '/campaigns/{id}/pause', '/campaigns/{id}/resume', '/campaigns/{id}/stop', '/campaigns/{id}/results']) {
      assert.ok(Object.keys(doc.paths).some((k) => k.endsWith(p)), p);
    }
  });
});

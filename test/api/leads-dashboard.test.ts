/**
 * The lead API the dashboard reads: search, filters, sort and capped counts on GET /leads; the CSV
 * export; a lead's attempts; delivering a webhook again; live events; recording links and peaks.
 * Out-of-scope ids answer 404, bad input 4xx.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { encodeWav } from '../../src/lib/audio.js';
import { buildTestApp, PREFIX, type TestApp } from '../helpers/app.js';
import { buildWorld, type World } from '../helpers/world.js';

let t: TestApp;
let w: World;
const FLOW = { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Say hi to {customer_name}.' }] }] };

async function push(body: Record<string, unknown>): Promise<string> {
  const res = await t.admin.post('/leads', { template: 'search-tpl', reseller_id: w.r1, merchant_id: w.m1, ...body, payload: { customer_name: 'Ana', ...(body.payload as object) } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.lead_call_tracker_id as string;
}

before(async () => {
  t = await buildTestApp();
  w = await buildWorld(t);
  assert.equal((await t.admin.post('/templates', { name: 'search-tpl', reseller_id: w.r1, flow: FLOW })).status, 200);
});
after(() => t?.close());

describe('GET /leads: search, filters, sort', () => {
  let ids: string[];
  before(async () => {
    ids = [];
    for (let i = 0; i < 6; i++) ids.push(await push({ request_id: `order-${100 + i}`, payload: { customer_mobile_number: `+1415555010${i}` } }));
    // Attempts and outcomes, as the scheduler would leave them.
    await t.db.query(`UPDATE leads SET status = 'FINISHED', outcome = 'confirmed', attempt_count = 2, call_initiated_time = now() - interval '1 hour' WHERE id = $1`, [ids[0]]);
    await t.db.query(`UPDATE leads SET status = 'FINISHED', outcome = 'no_answer', attempt_count = 3, call_initiated_time = now() WHERE id = $1`, [ids[1]]);
  });

  it('finds by phone number, by request id prefix and by lead id', async () => {
    const byPhone = await t.admin.get('/leads?q=%2B14155550103');
    assert.deepEqual(byPhone.body.data.map((l: any) => l.id), [ids[3]]);
    const byPrefix = await t.admin.get('/leads?q=order-10&sort=request_id&order=asc');
    assert.deepEqual(byPrefix.body.data.map((l: any) => l.request_id), ['order-100', 'order-101', 'order-102', 'order-103', 'order-104', 'order-105']);
    const byId = await t.admin.get(`/leads?q=${ids[4]}`);
    assert.deepEqual(byId.body.data.map((l: any) => l.id), [ids[4]]);
    // A LIKE wildcard is a plain character.
    assert.equal((await t.admin.get('/leads?q=order_10')).body.total, 0);
  });

  it('filters by outcome, template id and date, sorts by attempts and last call', async () => {
    const confirmed = await t.admin.get('/leads?outcome=confirmed');
    assert.deepEqual(confirmed.body.data.map((l: any) => l.id), [ids[0]]);
    const tpl = (await t.admin.get('/templates?name=search-tpl')).body.data[0].id;
    assert.equal((await t.admin.get(`/leads?template_id=${tpl}`)).body.total, 6);
    const today = new Date().toISOString().slice(0, 10);
    assert.equal((await t.admin.get(`/leads?created_from=${today}&created_to=${today}&template_id=${tpl}`)).body.total, 6);
    assert.equal((await t.admin.get(`/leads?created_to=2001-01-01&template_id=${tpl}`)).body.total, 0);
    const byAttempts = await t.admin.get(`/leads?template_id=${tpl}&sort=attempt_count&order=desc&page_size=2`);
    assert.deepEqual(byAttempts.body.data.map((l: any) => l.attempt_count), [3, 2]);
    const byCall = await t.admin.get(`/leads?template_id=${tpl}&sort=call_initiated_time&order=desc&page_size=3`);
    assert.deepEqual(byCall.body.data.map((l: any) => l.id).slice(0, 2), [ids[1], ids[0]], 'leads never called come last');
  });

  it('count=capped counts as exact below the cap', async () => {
    const res = await t.admin.get('/leads?count=capped&page_size=2&q=order-');
    assert.equal(res.body.total, 6);
    assert.equal(res.body.total_capped, undefined);
  });

  it('keeps to scope and answers bad input with 400', async () => {
    assert.equal((await w.merchant1b.get('/leads?q=order-10')).body.total, 0);
    assert.equal((await w.merchant1.get('/leads?q=order-10')).body.total, 6);
    for (const q of ['sort=password', 'order=sideways', 'count=roughly', 'created_from=yesterday', 'status=DONE', `q=${'x'.repeat(201)}`]) {
      const res = await t.admin.get(`/leads?${q}`);
      assert.equal(res.status, 400, q);
      assert.match(String(res.headers['content-type']), /problem\+json/);
    }
  });

  it('GET /leads/export answers the filtered leads as CSV', async () => {
    const res = await t.admin.get('/leads/export?q=order-10&order=asc');
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /text\/csv/);
    assert.match(String(res.headers['content-disposition']), /attachment; filename="leads-\d+\.csv"/);
    const lines = String(res.body).trim().split('\r\n');
    assert.equal(lines[0]!.split(',')[0], 'id');
    assert.equal(lines.length, 7);
    assert.ok(lines[1]!.includes('order-100') && lines[6]!.includes('order-105'), 'in push order');
    assert.ok(lines[1]!.includes('+14155550100'));
    assert.equal((await w.merchant1b.get('/leads/export?q=order-10')).body.trim().split('\r\n').length, 1, 'only the header out of scope');
    assert.equal((await t.admin.get('/leads/export?order=sideways')).status, 400);
  });
});

describe('GET /leads/{id}/attempts', () => {
  it('lists the attempts with the number they called from; 404 out of scope', async () => {
    const id = await push({ request_id: 'attempts-1', payload: { customer_mobile_number: '+14155550190' } });
    const number = await t.admin.post('/numbers', { phone_number: '+14155550999', provider: 'PROVIDER_A' });
    await t.db.query(
      `INSERT INTO call_attempts (id, lead_id, attempt, call_id, provider, outbound_number_id, status, outcome, started_at, ended_at, duration_seconds, error)
       VALUES ('a1', $1, 1, 'CA1', 'PROVIDER_A', $2, 'ENDED', 'no_answer', now() - interval '2 hours', now() - interval '2 hours', 0, 'nobody answered'),
              ('a2', $1, 2, 'CA2', 'PROVIDER_A', $2, 'ENDED', 'confirmed', now() - interval '1 hour', now() - interval '59 minutes', 42, NULL)`,
      [id, number.body.id],
    );
    const res = await w.merchant1.get(`/leads/${id}/attempts`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.data.map((a: any) => [a.attempt, a.outcome, a.from_number, a.error]), [
      [1, 'no_answer', '+14155550999', 'nobody answered'],
      [2, 'confirmed', '+14155550999', null],
    ]);
    assert.equal((await w.merchant1b.get(`/leads/${id}/attempts`)).status, 404);
    assert.equal((await t.admin.get('/leads/nope/attempts')).status, 404);
  });
});

describe('POST /leads/{id}/webhooks/{delivery_id}/redeliver', () => {
  it('queues a copy of a finished delivery; 409 while pending; 404 out of scope or unknown', async () => {
    const id = await push({ request_id: 'hook-1', payload: { customer_mobile_number: '+14155550191' } });
    await t.db.query(
      `INSERT INTO webhook_deliveries (id, lead_id, url, kind, payload, status, attempts) VALUES
         ('d-failed', $1, 'https://crm.example.com/hook', 'failure', '{"leadId": "x"}', 'failed', 3),
         ('d-pending', $1, 'https://crm.example.com/hook', 'failure', '{"leadId": "x"}', 'pending', 0)`,
      [id],
    );
    const again = await w.merchant1.post(`/leads/${id}/webhooks/d-failed/redeliver`);
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal(again.body.status, 'pending');
    assert.equal(again.body.redelivery_of, 'd-failed');
    assert.equal(again.body.url, 'https://crm.example.com/hook');
    assert.deepEqual(again.body.payload, { leadId: 'x' });
    assert.equal(again.body.attempts, 0);
    const listed = await t.admin.get(`/leads/${id}/webhooks`);
    assert.equal(listed.body.data.length, 3);
    assert.equal((await t.admin.post(`/leads/${id}/webhooks/d-pending/redeliver`)).status, 409);
    assert.equal((await t.admin.post(`/leads/${id}/webhooks/nope/redeliver`)).status, 404);
    assert.equal((await w.merchant1b.post(`/leads/${id}/webhooks/d-failed/redeliver`)).status, 404);
    assert.equal((await w.reseller2.post(`/leads/${id}/webhooks/d-failed/redeliver`)).status, 404);
  });
});

describe('recordings for the player', () => {
  it('a signed link plays with Range requests and expires; peaks describe the waveform', async () => {
    const id = await push({ request_id: 'rec-1', payload: { customer_mobile_number: '+14155550192' } });
    const rate = 8000;
    const pcm = new Int16Array(rate * 2);
    for (let i = rate; i < pcm.length; i++) pcm[i] = Math.round(Math.sin(i / 5) * 16000);
    fs.mkdirSync(path.join(t.config.dataDir, 'recordings'), { recursive: true });
    fs.writeFileSync(path.join(t.config.dataDir, 'recordings', 'CArec1.wav'), encodeWav(pcm, rate));
    await t.db.query(`UPDATE leads SET status = 'FINISHED', call_id = 'CArec1', recording_url = 'x' WHERE id = $1`, [id]);

    const link = await w.merchant1.get('/leads/recording/CArec1/link');
    assert.equal(link.status, 200, JSON.stringify(link.body));
    assert.ok(link.body.path.startsWith(`${PREFIX}/recordings/CArec1?expires=`));
    assert.ok(link.body.url.endsWith(link.body.path));
    const range = await t.anon.raw({ method: 'GET', path: link.body.path, headers: { range: 'bytes=0-99' } });
    assert.equal(range.status, 206);
    assert.equal(range.headers['content-range'], `bytes 0-99/${44 + pcm.length * 2}`);
    const whole = await t.anon.raw({ method: 'GET', path: link.body.path });
    assert.equal(whole.status, 200);
    // Tampered or expired links are refused; the link is not a token for anything else.
    // (Its first character changed: replaced by 'A' it stayed the same whenever it was an 'A'.)
    const tampered = link.body.path.replace(/signature=(.)/, (_: string, c: string) => `signature=${c === 'A' ? 'B' : 'A'}`);
    assert.equal((await t.anon.raw({ method: 'GET', path: tampered })).status, 403);
    const expired = link.body.path.replace(/expires=\d+/, 'expires=1000');
    assert.equal((await t.anon.raw({ method: 'GET', path: expired })).status, 403);
    assert.equal((await t.anon.get('/recordings/CArec1')).status, 400);
    assert.equal((await w.merchant1b.get('/leads/recording/CArec1/link')).status, 404);

    const peaks = await w.merchant1.get('/leads/recording/CArec1/peaks?count=10');
    assert.equal(peaks.status, 200, JSON.stringify(peaks.body));
    assert.equal(peaks.body.duration_seconds, 2);
    assert.equal(peaks.body.peaks.length, 10);
    assert.ok(peaks.body.peaks.slice(0, 5).every((p: number) => p === 0), 'a silent first second');
    assert.ok(peaks.body.peaks.slice(5).every((p: number) => p > 0.4), 'then a tone');
    assert.equal((await w.merchant1.get('/leads/recording/CArec1/peaks?count=5')).status, 400);
  });
});

describe('GET /events', () => {
  it('tells a watcher when a lead it shows changes, and only leads in its scope', async () => {
    const mine = await push({ request_id: 'ev-1', payload: { customer_mobile_number: '+14155550193' } });
    const theirs = await push({ request_id: 'ev-2', merchant_id: w.m1b, payload: { customer_mobile_number: '+14155550194' } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address() as { port: number };
    const ctl = new AbortController();
    const res = await fetch(`http://127.0.0.1:${address.port}${PREFIX}/events?leads=${mine},${theirs}&live=true`, {
      headers: { authorization: `Bearer ${(w.merchant1 as any).token}` },
      signal: ctl.signal,
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/event-stream/);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    const until = async (pattern: RegExp) => {
      while (!pattern.test(text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before ${pattern}: ${text}`);
        text += value;
      }
    };
    await until(/event: ready/);
    await until(/event: live\ndata: \{"live_calls":0\}/);
    await t.db.query(`UPDATE leads SET status = 'PROCESSING', attempt_count = 1, updated_at = now() WHERE id = ANY($1)`, [[mine, theirs]]);
    await until(new RegExp(`event: lead\\ndata: \\{"id":"${mine}","status":"PROCESSING"`));
    await until(/event: live\ndata: \{"live_calls":1\}/);
    assert.ok(!text.includes(theirs), 'a lead of another merchant is never reported');
    ctl.abort();
  });

  it('400 for too many or malformed ids; 401 without a token', async () => {
    const many = Array.from({ length: 501 }, (_, i) => `l${i}`).join(',');
    assert.equal((await t.admin.get(`/events?leads=${many}`)).status, 400);
    assert.equal((await t.admin.get(`/events?leads=${'x'.repeat(65)}`)).status, 400);
    assert.equal((await t.anon.get('/events')).status, 401);
  });
});

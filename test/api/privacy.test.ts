/**
 * A person's data on request and by age: subject access (GET /privacy/export), erasure (POST
 * /privacy/erasure: leads, recordings on disk and in an S3-compatible store, opt-outs kept as the
 * number's hash, analytics unchanged, the audit trail without the number, tenancy) and the
 * retention job (only what is older than its days goes).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CallEnd } from '../../src/lifecycle/index.js';
import { encodeWav } from '../../src/lib/audio.js';
import { createLogger } from '../../src/lib/logger.js';
import { sweepRetention } from '../../src/privacy/index.js';
import { createRecordingStore, type RecordingStore } from '../../src/recordings/index.js';
import { Scheduler } from '../../src/scheduler/index.js';
import { buildTestApp, PREFIX, type Client, type TestApp } from '../helpers/app.js';
import { ScriptedDriver } from '../helpers/drivers.js';
import { startS3Server, type S3Server } from '../helpers/s3-server.js';
import { buildWorld, type World } from '../helpers/world.js';
import { reportingPayload } from '../../src/webhooks/index.js';

let t: TestApp;
let w: World;
let s3: S3Server;
let store: RecordingStore;
const log = createLogger('silent');
const wav = encodeWav(Int16Array.from({ length: 800 }, (_, i) => Math.round(Math.sin(i / 5) * 9000)), 8000);
const PERSON = '+14155550777';
const consent = { source: 'web_form', captured_at: '2025-01-10T09:30:00Z', text: 'I agree to be called by Acme', reference: '203.0.113.7' };

/** The person's leads: a and a2 called (a2's recording in the bucket), b waiting, c another reseller's. */
const ids = { a: '', a2: '', b: '', c: '' };
let t1 = '';
let listId = '';

async function template(client: Client, reseller: string, name: string, initialOffset: number): Promise<string> {
  const tpl = await client.post('/templates', { name, reseller_id: reseller, flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] } });
  assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
  const cfg = await client.post('/configurations', {
    reseller_id: reseller, template: tpl.body.id, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00', retry_offset: 0, initial_offset: initialOffset,
  });
  assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
  return tpl.body.id;
}

async function push(client: Client, reseller: string, tpl: string, requestId: string, extra: Record<string, unknown> = {}) {
  return client.post('/leads', { request_id: requestId, template: tpl, reseller_id: reseller, payload: { customer_mobile_number: PERSON, customer_name: 'Ada Lovelace', plan: 'gold' }, ...extra });
}

const pathOf = (callId: string) => path.join(t.config.recordings.dir, `${callId}.wav`);
const analytics = async () =>
  Promise.all(['call_count', 'outcome_distribution', 'status_distribution'].map(async (query_type) => (await w.reseller1.post('/analytics', { query_type, filters: { template_id: t1 } })).body.data));

before(async () => {
  s3 = await startS3Server();
  t = await buildTestApp({ env: { RECORDINGS_S3_BUCKET: s3.bucket, RECORDINGS_S3_ENDPOINT: s3.url, AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test-secret' } });
  w = await buildWorld(t);
  store = createRecordingStore(t.config.recordings, `${t.config.publicUrl}${PREFIX}`, async () => false);
  assert.equal((await t.admin.post('/numbers', { phone_number: '+12125550400', provider: 'PROVIDER_A' })).status, 200);
  t1 = await template(w.reseller1, w.r1, 'privacy-calls', 0);
  const t2 = await template(w.reseller1, w.r1, 'privacy-later', 86_400);
  const t3 = await template(w.reseller2, w.r2, 'privacy-other', 86_400);
  const pushed = await Promise.all([
    push(w.reseller1, w.r1, 'privacy-calls', 'p-a', { consent }),
    push(w.reseller1, w.r1, 'privacy-calls', 'p-a2'),
    push(w.reseller1, w.r1, 'privacy-later', 'p-b', { consent }),
    push(w.reseller2, w.r2, 'privacy-other', 'p-c'),
  ]);
  for (const p of pushed) assert.equal(p.status, 201, JSON.stringify(p.body));
  [ids.a, ids.a2, ids.b, ids.c] = pushed.map((p) => p.body.lead_call_tracker_id as string) as [string, string, string, string];
  assert.ok(t2 && t3);

  // Two calls: the first is confirmed and recorded locally, the second opts out and is recorded in the bucket.
  let calls = 0;
  const driver = new ScriptedDriver('PROVIDER_A', async (request): Promise<CallEnd> => {
    const callId = `CA-${request.leadId}-${request.attempt}`;
    const transcription = [{ role: 'assistant', content: 'Hello Ada' }, { role: 'user', content: 'My card ends 4242' }];
    if (++calls === 1) {
      const recordingUrl = await store.save(callId, wav);
      return { kind: 'completed', outcome: 'confirmed', durationSeconds: 30, recordingUrl, metaData: { transcription, analysis: { summary: 'Ada confirmed' }, call_ended_by: 'agent' } };
    }
    s3.objects.set(`recordings/${callId}.wav`, { body: wav, contentType: 'audio/wav' });
    return {
      kind: 'completed', outcome: 'OPTED_OUT', durationSeconds: 12, recordingUrl: `${t.config.publicUrl}${PREFIX}/leads/recording/${callId}`,
      metaData: { transcription, opted_out: { reason: 'Ada said stop calling me' }, call_ended_by: 'customer' },
    };
  });
  await new Scheduler({ db: t.db, drivers: new Map([[driver.provider, driver]]), log, recoverEveryMs: 0, maxConcurrentCalls: 1 }).drain();
  assert.equal(driver.dials.length, 2);

  listId = (await w.reseller1.post('/dnc-lists', { name: 'privacy-registry', source: 'national registry', version: '2025-01' })).body.id;
  const imported = await w.reseller1.raw({ method: 'POST', path: `/dnc-lists/${listId}/import`, payload: `${PERSON}\n`, headers: { 'content-type': 'text/csv' } });
  assert.equal(imported.status, 200, JSON.stringify(imported.body));
});

after(async () => {
  await t.close();
  await s3.close();
});

describe('GET /privacy/export', () => {
  it('gives everything held about the number in the caller\'s scope, as one document', async () => {
    const res = await w.reseller1.get(`/privacy/export?phone_number=${encodeURIComponent(PERSON)}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.phone_number, PERSON);
    assert.deepEqual(res.body.leads.map((l: any) => l.lead.id).sort(), [ids.a, ids.a2, ids.b].sort());
    const called = res.body.leads.filter((l: any) => l.lead.status === 'FINISHED');
    assert.equal(called.length, 2);
    for (const l of called) {
      assert.equal(l.lead.metaData.transcription.length, 2);
      assert.match(l.lead.recording_url, /\/leads\/recording\/CA-/);
      assert.equal(l.attempts.length, 1);
      assert.equal(l.attempts[0].call_id, l.lead.call_id);
    }
    assert.deepEqual(res.body.leads.find((l: any) => l.lead.id === ids.a).lead.consent.text, consent.text);
    assert.deepEqual(res.body.blacklist.map((b: any) => [b.reseller_id, b.reason]), [[w.r1, 'Ada said stop calling me']]);
    assert.deepEqual(res.body.dnc_lists, [{ id: listId, name: 'privacy-registry', source: 'national registry', version: '2025-01' }]);

    const other = await w.reseller2.get(`/privacy/export?phone_number=${encodeURIComponent(PERSON)}`);
    assert.deepEqual(other.body.leads.map((l: any) => l.lead.id), [ids.c]);
    assert.deepEqual([other.body.blacklist, other.body.dnc_lists], [[], []]);
    assert.equal((await w.reseller1.get('/privacy/export?phone_number=4155550777')).status, 400);
  });
});

describe('POST /privacy/erasure', () => {
  it('refuses bad input and another tenant\'s person, changing nothing', async () => {
    assert.equal((await w.reseller1.post('/privacy/erasure', {})).status, 400);
    assert.equal((await w.reseller1.post('/privacy/erasure', { phone_number: PERSON, lead_id: ids.a })).status, 400);
    assert.equal((await w.reseller1.post('/privacy/erasure', { phone_number: 'not a number' })).body.code, 'invalid_phone_number');
    const named = await w.reseller2.post('/privacy/erasure', { phone_number: PERSON, reseller_id: w.r1 });
    assert.deepEqual([named.status, named.body.code], [403, 'out_of_scope']);
    assert.equal((await w.reseller2.post('/privacy/erasure', { lead_id: ids.a })).status, 404);
    assert.equal((await w.merchant2.post('/privacy/erasure', { phone_number: PERSON })).status, 404);
    const { rows } = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM leads WHERE payload->>'customer_name' = 'Ada Lovelace'`);
    assert.equal(rows[0]!.n, 4);
  });

  it('erases the person: content, recordings on disk and in the bucket; keeps the opt-out as a hash and the analytics counts', async () => {
    const a = (await w.reseller1.get(`/leads/${ids.a}`)).body;
    const a2 = (await w.reseller1.get(`/leads/${ids.a2}`)).body;
    const [local, cloud] = a.call_id && fs.existsSync(pathOf(a.call_id)) ? [a, a2] : [a2, a];
    assert.ok(fs.existsSync(pathOf(local.call_id)));
    assert.ok(s3.objects.has(`recordings/${cloud.call_id}.wav`));
    assert.equal((await w.reseller1.get(`/leads/recording/${local.call_id}`)).status, 200);
    const counts = await analytics();
    // A reporting webhook of a warm transfer, queued: its briefing and what the human heard are the person's.
    const warmTransfer = { to: '+14155550421', briefing: 'Ada Lovelace wants to move her gold plan.', briefing_source: 'llm', decision: 'accepted', via: 'voice', heard: 'Yes, put Ada through.', events: [] };
    const queued = reportingPayload({ ...a, id: ids.a, request_id: 'p-a', call_id: a.call_id, outcome: 'confirmed', status: 'FINISHED', attempt_count: 1, recording_url: null, call_end_time: new Date(), cancellation_reason: null, meta_data: { transcription: [], warm_transfers: [warmTransfer] } } as never);
    assert.equal((queued.body.warmTransfers as any[])[0].briefing, warmTransfer.briefing);
    await t.db.query(`INSERT INTO webhook_deliveries (id, lead_id, url, kind, payload) VALUES ($1, $2, 'https://crm.example.com/hook', $3, $4)`, [`wh-${ids.a}`, ids.a, queued.kind, JSON.stringify(queued.body)]);

    const res = await w.reseller1.post('/privacy/erasure', { phone_number: PERSON });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.match(res.body.phone_number_hash, /^sha256:[0-9a-f]{64}$/);
    assert.equal(res.body.opt_outs_hashed, 1);
    const report = Object.fromEntries(res.body.leads.map((l: any) => [l.id, l]));
    assert.deepEqual(Object.keys(report).sort(), [ids.a, ids.a2, ids.b].sort());
    assert.deepEqual(report[local.id].recordings, [local.call_id]);
    assert.deepEqual(report[cloud.id].recordings, [cloud.call_id]);
    assert.deepEqual(report[ids.a].payload_fields.sort(), ['customer_mobile_number', 'customer_name', 'plan']);
    assert.ok(report[ids.a].transcript && report[ids.a2].transcript);
    assert.equal(report[ids.a].consent_evidence, true);
    assert.deepEqual([report[ids.b].aborted, report[ids.b].status, report[ids.b].outcome], [true, 'FINISHED', 'aborted']);
    assert.equal([report[ids.a], report[ids.a2]].filter((l) => l.analysis).length, 1);

    // The recordings are gone: the URL answers 404, the file and the object are deleted.
    assert.equal((await w.reseller1.get(`/leads/recording/${local.call_id}`)).status, 404);
    assert.equal((await w.reseller1.get(`/leads/recording/${cloud.call_id}`)).status, 404);
    assert.equal(fs.existsSync(pathOf(local.call_id)), false);
    assert.equal(s3.objects.has(`recordings/${cloud.call_id}.wav`), false);

    // Nothing personal is left on the leads; their outcomes and figures are.
    for (const id of [ids.a, ids.a2, ids.b]) {
      const read = await w.reseller1.get(`/leads/${id}`);
      assert.equal(read.status, 200, JSON.stringify(read.body));
      const lead = read.body;
      assert.deepEqual(lead.payload, { customer_mobile_number: res.body.phone_number_hash, erased: true });
      assert.equal(lead.recording_url, null);
      assert.equal(lead.metaData.transcription, undefined);
      assert.equal(lead.metaData.analysis, undefined);
      assert.equal(lead.metaData.opted_out, undefined);
      assert.ok(!JSON.stringify(lead).includes('Ada'), JSON.stringify(lead));
      assert.ok(!JSON.stringify(lead).includes(PERSON));
    }
    assert.deepEqual((await w.reseller1.get(`/leads/${ids.a}`)).body.consent, { source: 'web_form', captured_at: consent.captured_at, erased_at: (await w.reseller1.get(`/leads/${ids.a}`)).body.metaData.erased_at });
    assert.equal((await w.reseller1.get(`/leads/${local.id}`)).body.duration_seconds, local.duration_seconds);
    const delivery = (await t.db.query<{ payload: Record<string, unknown> }>(`SELECT payload FROM webhook_deliveries WHERE id = $1`, [`wh-${ids.a}`])).rows[0]!.payload;
    assert.equal(delivery.erased, true);
    assert.ok(!JSON.stringify(delivery).includes('Ada'), JSON.stringify(delivery));
    assert.deepEqual(await analytics(), counts);

    // Another reseller's lead of the same number is untouched.
    assert.equal((await w.reseller2.get(`/leads/${ids.c}`)).body.payload.customer_name, 'Ada Lovelace');

    // The earlier opt-out still stops a new push for the number.
    const again = await push(w.reseller1, w.r1, 'privacy-calls', 'p-again');
    assert.equal(again.status, 403, JSON.stringify(again.body));
    const { rows } = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM leads WHERE request_id = 'p-again'`);
    assert.equal(rows[0]!.n, 0);

    // The audit trail names the erasure and the leads, never the number.
    const audit = await w.reseller1.get(`/audit?resource_id=${res.body.id}`);
    assert.equal(audit.status, 200);
    assert.equal(audit.body.data.length, 1);
    assert.equal(audit.body.data[0].action, 'erasure');
    assert.deepEqual(audit.body.data[0].details.lead_ids.sort(), [ids.a, ids.a2, ids.b].sort());
    assert.equal(audit.body.data[0].details.recordings_deleted, 2);
    assert.ok(!JSON.stringify(audit.body).includes(PERSON.slice(1)));

    // Nothing is found by the number any more.
    const after = await w.reseller1.get(`/privacy/export?phone_number=${encodeURIComponent(PERSON)}`);
    assert.deepEqual([after.body.leads, after.body.blacklist], [[], []]);
    assert.equal((await w.reseller1.post('/privacy/erasure', { phone_number: PERSON })).status, 404);
  });
});

describe('the OpenAPI document', () => {
  it('names the privacy routes with their bodies and answers', async () => {
    const doc = (await t.anon.get('/openapi.json')).body;
    const erasure = doc.paths[`${PREFIX}/privacy/erasure`]?.post;
    const exported = doc.paths[`${PREFIX}/privacy/export`]?.get;
    assert.ok(erasure?.requestBody && erasure.responses['200'] && erasure.responses['409']);
    assert.deepEqual(exported?.parameters.map((p: any) => p.name), ['phone_number']);
    assert.ok(doc.paths[`${PREFIX}/privacy/retention`]?.put);
  });
});

describe('retention', () => {
  it('is a reseller\'s setting: merchants read it, another reseller\'s is refused', async () => {
    assert.equal((await w.merchant1.put('/privacy/retention', { recordings_days: 7, transcripts_days: 30 })).status, 403);
    assert.equal((await w.reseller1.put('/privacy/retention', { reseller_id: w.r2, recordings_days: 7, transcripts_days: 30 })).status, 403);
    assert.equal((await w.reseller1.put('/privacy/retention', { recordings_days: 0, transcripts_days: 30 })).status, 400);
    const set = await w.reseller1.put('/privacy/retention', { recordings_days: 7, transcripts_days: 30 });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    const read = await w.merchant1.get('/privacy/retention');
    assert.deepEqual([read.body.reseller_id, read.body.recordings_days, read.body.transcripts_days], [w.r1, 7, 30]);
    assert.equal((await t.admin.get('/privacy/retention')).status, 400);
  });

  it('deletes only the recordings and transcripts older than their days; outcomes and figures stay', async () => {
    const tpl = (await t.db.query<{ id: string }>(`SELECT id FROM templates WHERE name = 'privacy-calls'`)).rows[0]!.id;
    const tplOther = (await t.db.query<{ id: string }>(`SELECT id FROM templates WHERE name = 'privacy-other'`)).rows[0]!.id;
    const transcription = [{ role: 'user', content: 'hello' }];
    const insert = async (id: string, reseller: string, template: string, endedDaysAgo: number) => {
      const url = await store.save(`CA-ret-${id}`, wav);
      await t.db.query(
        `INSERT INTO leads (id, reseller_id, template_id, template_name, request_id, status, outcome, call_id, call_end_time, duration_seconds, recording_url, payload, meta_data)
         VALUES ($1, $2, $3, 'x', $1, 'FINISHED', 'confirmed', $4, now() - make_interval(days => $5), 61, $6, '{}'::jsonb, $7::jsonb)`,
        [id, reseller, template, `CA-ret-${id}`, endedDaysAgo, url, JSON.stringify({ transcription, call_ended_by: 'agent' })],
      );
    };
    await insert('ret-old', w.r1, tpl, 40);
    await insert('ret-mid', w.r1, tpl, 10);
    await insert('ret-new', w.r1, tpl, 1);
    await insert('ret-r2', w.r2, tplOther, 40);

    const swept = await sweepRetention({ db: t.db, recordings: store, log });
    assert.deepEqual(swept, { recordings: 2, transcripts: 1 });
    const lead = async (id: string) => (await t.db.query<any>('SELECT outcome, duration_seconds, recording_url, meta_data FROM leads WHERE id = $1', [id])).rows[0];
    const [old, mid, fresh, other] = await Promise.all(['ret-old', 'ret-mid', 'ret-new', 'ret-r2'].map(lead));
    assert.deepEqual([old.recording_url, old.meta_data.transcription, old.outcome, old.duration_seconds], [null, undefined, 'confirmed', 61]);
    assert.ok(old.meta_data.recording_deleted_at && old.meta_data.transcript_deleted_at);
    assert.deepEqual([mid.recording_url, mid.meta_data.transcription], [null, transcription]);
    assert.ok(fresh.recording_url && fresh.meta_data.transcription);
    assert.ok(other.recording_url && other.meta_data.transcription);
    assert.deepEqual(['ret-old', 'ret-mid', 'ret-new', 'ret-r2'].map((id) => fs.existsSync(pathOf(`CA-ret-${id}`))), [false, false, true, true]);

    const audit = await w.reseller1.get('/audit?action=retention');
    assert.deepEqual(audit.body.data.map((e: any) => e.details), [{ recordings_deleted: 2, transcripts_deleted: 1, recordings_days: 7, transcripts_days: 30 }]);
    // A second sweep finds nothing more to do.
    assert.deepEqual(await sweepRetention({ db: t.db, recordings: store, log }), { recordings: 0, transcripts: 0 });
  });
});

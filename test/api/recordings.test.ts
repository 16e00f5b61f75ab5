/**
 * GET /leads/recording/{call_sid}: the recording Dialer stored for a lead's call, served from the
 * app's recording store (by default a local directory under the data dir), with Range support.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { encodeWav } from '../../src/lib/audio.js';
import { createRecordingStore, type RecordingStore } from '../../src/recordings/index.js';
import { buildTestApp, PREFIX, type Client, type TestApp } from '../helpers/app.js';
import { buildWorld, type World } from '../helpers/world.js';

let t: TestApp;
let w: World;
let store: RecordingStore;
let template: string;
const wav = encodeWav(Int16Array.from({ length: 8000 }, (_, i) => Math.round(Math.sin(i / 7) * 12000)), 8000);

async function insertLead(callId: string, recordingUrl: string | null, status = 'FINISHED', reseller = w.r1, merchant: string | null = w.m1): Promise<void> {
  await t.db.query(
    `INSERT INTO leads (id, reseller_id, merchant_id, template_id, template_name, request_id, status, call_id, recording_url, payload)
     VALUES ($1, $2, $3, $4, 'tpl', $5, $6, $7, $8, '{}'::jsonb)`,
    [randomUUID(), reseller, merchant, template, `req-${randomUUID()}`, status, callId, recordingUrl],
  );
}

async function get(who: Client, callSid: string, headers: Record<string, string> = {}) {
  const res = await t.app.inject({
    method: 'GET',
    url: `${PREFIX}/leads/recording/${encodeURIComponent(callSid)}`,
    headers: { ...(who.token ? { authorization: `Bearer ${who.token}` } : {}), ...headers },
  });
  const type = String(res.headers['content-type'] ?? '');
  return { status: res.statusCode, headers: res.headers, bytes: res.rawPayload, json: type.includes('json') ? (JSON.parse(res.body) as any) : undefined };
}

before(async () => {
  t = await buildTestApp();
  w = await buildWorld(t);
  store = createRecordingStore({ dir: path.join(t.config.dataDir, 'recordings') }, `${t.config.publicUrl}${PREFIX}`);
  template = randomUUID();
  await t.db.query(`INSERT INTO templates (id, name, reseller_id, merchant_id, flow) VALUES ($1, $2, $3, NULL, '{}'::jsonb)`, [template, `tpl-${template}`, w.r1]);
  const url = await store.save('CArec0001', wav);
  assert.equal(url, `${t.config.publicUrl}${PREFIX}/leads/recording/CArec0001`);
  await insertLead('CArec0001', url);
});

after(() => t.close());

describe('GET /leads/recording/{call_sid}', () => {
  it('answers 200 with the WAV', async () => {
    for (const who of [t.admin, w.reseller1, w.merchant1, w.user1]) {
      const res = await get(who, 'CArec0001');
      assert.equal(res.status, 200);
      assert.equal(res.headers['content-type'], 'audio/wav');
      assert.equal(Number(res.headers['content-length']), wav.length);
      assert.equal(res.headers['accept-ranges'], 'bytes');
      assert.ok(res.bytes.equals(wav));
    }
  });

  it('answers 206 for byte ranges', async () => {
    const head = await get(w.reseller1, 'CArec0001', { range: 'bytes=0-43' });
    assert.equal(head.status, 206);
    assert.equal(head.headers['content-range'], `bytes 0-43/${wav.length}`);
    assert.equal(Number(head.headers['content-length']), 44);
    assert.ok(head.bytes.equals(wav.subarray(0, 44)));
    const open = await get(w.reseller1, 'CArec0001', { range: 'bytes=16000-' });
    assert.equal(open.status, 206);
    assert.equal(open.headers['content-range'], `bytes 16000-${wav.length - 1}/${wav.length}`);
    assert.ok(open.bytes.equals(wav.subarray(16000)));
    const suffix = await get(w.reseller1, 'CArec0001', { range: 'bytes=-100' });
    assert.equal(suffix.status, 206);
    assert.equal(suffix.headers['content-range'], `bytes ${wav.length - 100}-${wav.length - 1}/${wav.length}`);
    assert.ok(suffix.bytes.equals(wav.subarray(wav.length - 100)));
    const beyond = await get(w.reseller1, 'CArec0001', { range: `bytes=10-${wav.length * 3}` });
    assert.equal(beyond.status, 206);
    assert.ok(beyond.bytes.equals(wav.subarray(10)));
  });

  it('answers 416 for a range past the end', async () => {
    for (const range of [`bytes=${wav.length}-`, `bytes=${wav.length + 10}-${wav.length + 20}`, 'bytes=-0']) {
      const res = await get(w.reseller1, 'CArec0001', { range });
      assert.equal(res.status, 416, range);
      assert.equal(res.headers['content-range'], `bytes */${wav.length}`);
      assert.equal(res.json.code, 'range_not_satisfiable');
    }
  });

  it('ignores malformed and multi-part Range headers (200, the whole file)', async () => {
    for (const range of ['bytes=abc', 'bytes=9-1', 'pages=1-2', 'bytes=0-1,5-9', 'bytes=', 'bytes=99999999999999999999-']) {
      const res = await get(w.reseller1, 'CArec0001', { range });
      assert.equal(res.status, 200, range);
      assert.ok(res.bytes.equals(wav), range);
    }
  });

  it('answers 404 to other tenants and for unknown calls', async () => {
    for (const who of [w.reseller2, w.merchant2, w.merchant1b, w.user2]) {
      const res = await get(who, 'CArec0001');
      assert.equal(res.status, 404);
      assert.equal(res.json.code, 'call_not_found');
    }
    assert.equal((await get(w.reseller1, 'CAunknown')).json.code, 'call_not_found');
    assert.equal((await get(w.reseller1, '../../etc/passwd')).status, 404);
    assert.equal((await get(t.anon, 'CArec0001')).status, 401);
  });

  it('answers 404 recording_not_available while the lead has no recording, or the file is gone', async () => {
    await insertLead('CArec0002', null, 'PROCESSING');
    const pending = await get(w.reseller1, 'CArec0002');
    assert.equal(pending.status, 404);
    assert.equal(pending.json.code, 'recording_not_available');
    assert.match(pending.json.detail, /not available yet: the lead is PROCESSING/);
    await insertLead('CArec0003', `${t.config.publicUrl}${PREFIX}/leads/recording/CArec0003`);
    const missing = await get(w.reseller1, 'CArec0003', { range: 'bytes=0-1' });
    assert.equal(missing.status, 404);
    assert.equal(missing.json.code, 'recording_not_available');
    await insertLead('../secret', 'https://x/y');
    assert.equal((await get(w.reseller1, '../secret')).json.code, 'recording_not_available');
  });
});

/**
 * WebRTC leads in the lead lifecycle, against the database (PGlite and PostgreSQL): the phone
 * scheduler never dials them (the browser's offer claims them), and their recordings expire after
 * the retention period while phone-call recordings stay.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../src/lib/logger.js';
import { LocalRecordingStore } from '../../src/recordings/index.js';
import { Scheduler } from '../../src/scheduler/index.js';
import { expireWebRtcRecordings } from '../../src/webrtc/index.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ScriptedDriver } from '../helpers/drivers.js';
import { buildWorld, type World } from '../helpers/world.js';

let t: TestApp;
let w: World;
let template: string;
let seq = 0;
const log = createLogger('silent');

before(async () => {
  t = await buildTestApp();
  w = await buildWorld(t);
  const tpl = await w.reseller1.post('/templates', {
    name: 'rtc-life',
    reseller_id: w.r1,
    flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] },
  });
  assert.equal(tpl.status, 200);
  template = tpl.body.name;
  const cfg = await w.reseller1.post('/configurations', { reseller_id: w.r1, template: tpl.body.id, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00' });
  assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
  assert.equal((await t.admin.post('/numbers', { phone_number: '+12125557001', provider: 'PROVIDER_A' })).status, 200);
});
after(() => t.close());

async function push(mode: string): Promise<string> {
  const res = await w.reseller1.post('/leads', {
    request_id: `rtc-${++seq}`,
    template,
    reseller_id: w.r1,
    execution_mode: mode,
    payload: { customer_mobile_number: `+1646555${String(7000 + seq).padStart(4, '0')}` },
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.lead_call_tracker_id;
}

describe('WebRTC leads and the phone scheduler', () => {
  it('dials the phone lead and leaves WEBRTC, WEBRTC_TEST and WEBRTC_STREAM leads waiting for their browser', async () => {
    const browserLeads = [await push('WEBRTC'), await push('WEBRTC_TEST'), await push('WEBRTC_STREAM')];
    const phoneLead = await push('TELEPHONY');
    const driver = new ScriptedDriver('PROVIDER_A');
    await new Scheduler({ db: t.db, drivers: new Map([[driver.provider, driver]]), log, recoverEveryMs: 0 }).drain();
    assert.deepEqual(driver.dials.map((d) => d.leadId), [phoneLead]);
    for (const id of browserLeads) {
      const lead = (await w.reseller1.get(`/leads/${id}`)).body;
      assert.deepEqual([lead.status, lead.attempt_count], ['BACKLOG', 0]);
    }
  });
});

describe('WebRTC recording retention', () => {
  it('deletes WebRTC recordings older than the retention and clears their URL; fresh ones and phone recordings stay', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dialer-rtc-rec-'));
    const store = new LocalRecordingStore(dir, 'http://dialer.test/agent/voice/dialer');
    const wav = Buffer.from('RIFF....WAVE');
    const rows: Array<{ id: string; room: string; ageDays: number }> = [];
    for (const [mode, ageDays] of [['WEBRTC', 8], ['WEBRTC_TEST', 8], ['WEBRTC', 1], ['TELEPHONY', 30]] as const) {
      const id = await push(mode);
      const room = `rtc-retention-${id}`;
      const url = await store.save(room, wav);
      await t.db.query(
        `UPDATE leads SET status = 'FINISHED', outcome = 'completed', call_id = $2, recording_url = $3, call_end_time = now() - make_interval(days => $4) WHERE id = $1`,
        [id, room, url, ageDays],
      );
      rows.push({ id, room, ageDays });
    }
    const cleared = await expireWebRtcRecordings({ db: t.db, recordings: store, log, retentionSeconds: 7 * 86_400 });
    assert.equal(cleared, 2);
    const [oldRtc, oldTest, fresh, phone] = rows;
    for (const expired of [oldRtc!, oldTest!]) {
      assert.equal(await store.open(expired.room), undefined, 'the file is gone');
      const lead = (await w.reseller1.get(`/leads/${expired.id}`)).body;
      assert.equal(lead.recording_url, null);
      assert.match(lead.metaData.recording_expired_at, /^\d{4}-\d\d-\d\dT/);
    }
    for (const kept of [fresh!, phone!]) {
      assert.ok(await store.open(kept.room));
      assert.ok((await w.reseller1.get(`/leads/${kept.id}`)).body.recording_url);
    }
    assert.equal(await expireWebRtcRecordings({ db: t.db, recordings: store, log, retentionSeconds: 7 * 86_400 }), 0, 'a second sweep finds nothing');
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

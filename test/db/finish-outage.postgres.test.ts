/**
 * A call's end survives a database outage: PostgreSQL (the test's own server) is stopped while
 * calls are live and started again ten seconds later. Each call ends normally at the far side
 * during the outage; its end is kept and written once the database is back, so each lead is called
 * once and finishes with its first call's outcome (never worker_lost and a second call). And a
 * worker that dies during the outage with an end it could not write: the next recovery on the
 * machine writes that end from the worker's journal, not worker_lost, and nobody is called again.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startOwnPostgres, type OwnPostgres } from '../../scripts/provision.js';
import { API_PREFIX } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { migrate, openPostgres, type Db } from '../../src/db/index.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { createLogger } from '../../src/lib/logger.js';
import { Scheduler } from '../../src/scheduler/index.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, buildTestApp, type TestApp } from '../helpers/app.js';
import { gate, ScriptedDriver } from '../helpers/drivers.js';
import { freePort } from '../helpers/net.js';
import { buildWorld, type World } from '../helpers/world.js';
import { endCall, startCallee, startWorker } from '../helpers/workers.js';

const TWILIO = { accountSid: 'AC00000000000000000000000000000038', authToken: 'twilio-auth-token-outage' };
const OUTAGE_MS = 10_000;
let pg: OwnPostgres;
let db: Db;
let t: TestApp;
let w: World;
let seq = 0;
const dirs: string[] = [];

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await Promise.resolve().then(check).catch(() => false))) {
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const tempDir = (name: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `dialer-${name}-`));
  dirs.push(dir);
  return dir;
};

interface LeadState {
  status: string;
  outcome: string | null;
  attempt_count: number;
  call_id: string | null;
  recording_url: string | null;
  meta_data: Record<string, unknown>;
}
const leadRow = async (id: string) => (await db.query<LeadState>('SELECT status, outcome, attempt_count, call_id, recording_url, meta_data FROM leads WHERE id = $1', [id])).rows[0]!;
const attemptRows = async (id: string) =>
  (await db.query<{ attempt: number; status: string; outcome: string | null }>('SELECT attempt, status, outcome FROM call_attempts WHERE lead_id = $1 ORDER BY attempt', [id])).rows;

/** A template and its configuration (retried at once: a second call would come quickly), and `numbers` numbers of its own. */
async function campaign(name: string, numbers: number): Promise<void> {
  const tpl = await w.reseller1.post('/templates', { name, reseller_id: w.r1, flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Greet.' }] }] } });
  assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
  const cfg = await w.reseller1.post('/configurations', { reseller_id: w.r1, template: tpl.body.id, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00', max_retry: 2, retry_offset: 0 });
  assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
  await db.query(`UPDATE outbound_numbers SET status = 'DISABLED' WHERE status = 'AVAILABLE'`);
  for (let i = 0; i < numbers; i++) assert.equal((await t.admin.post('/numbers', { phone_number: `+1212555${String(3800 + ++seq)}`, provider: 'PROVIDER_A' })).status, 200);
}

async function push(template: string, callee: string): Promise<string> {
  const res = await w.reseller1.post('/leads', { request_id: `outage-${++seq}`, template, reseller_id: w.r1, payload: { customer_mobile_number: callee } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.lead_call_tracker_id;
}

describe("a call's end and a database outage", { timeout: 300_000 }, () => {
  before(async () => {
    pg = await startOwnPostgres(process.env);
    db = await openPostgres(pg.url);
    await migrate(db);
    t = await buildTestApp({ db });
    w = await buildWorld(t);
  });
  after(async () => {
    await t?.close();
    await db?.close();
    await pg?.stop();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("calls each lead once when its call ends while PostgreSQL is down; the first call's outcome stands", async () => {
    const port = await freePort();
    const emulator: Emulator = await startEmulator({
      dialerUrl: `http://127.0.0.1:${port}${API_PREFIX}`,
      twilio: TWILIO,
      plivo: { authId: 'MAUNUSED000000000001', authToken: 'unused' },
      exotel: { accountSid: 'unused', apiKey: 'unused', apiToken: 'unused' },
    });
    const env = {
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: pg.url,
      DIALER_DATA_DIR: tempDir('outage'),
      DIALER_JWT_SECRET: 'outage-secret-outage-secret-outage-secret',
      DIALER_ADMIN_EMAIL: ADMIN_EMAIL,
      DIALER_ADMIN_PASSWORD: ADMIN_PASSWORD,
      DIALER_POLL_MS: '100',
      DIALER_AGENT: 'greeter',
      DIALER_SANDBOX: 'false',
      LOG_LEVEL: 'silent',
      TWILIO_ACCOUNT_SID: TWILIO.accountSid,
      TWILIO_AUTH_TOKEN: TWILIO.authToken,
      TWILIO_API_URL: emulator.url,
    };
    let server: RunningServer | undefined;
    try {
      await campaign('outage', 3);
      server = await startServer(loadConfig(env), createLogger('silent'));
      const callees = ['+16465553801', '+16465553802', '+16465553803'];
      // Each callee answers and talks for 7 s, then hangs up: the calls end during the outage.
      for (const callee of callees) emulator.script(callee, { answer: 'answer', steps: [{ wait: 7000 }, { hangup: true }], maxSeconds: 30 });
      const ids = await Promise.all(callees.map((callee) => push('outage', callee)));
      const callsTo = (callee: string) => emulator.calls.filter((c) => c.to === callee);
      await until('the three calls to be live', () => callees.every((c) => callsTo(c).some((call) => call.received.audioFrames > 0)), 60_000);

      await pg.halt();
      const haltedAt = Date.now();
      try {
        await Promise.all(callees.map((c) => callsTo(c)[0]!.ended));
        // The rest of the outage (the calls ended within it).
        await new Promise((r) => setTimeout(r, Math.max(0, OUTAGE_MS - (Date.now() - haltedAt))));
      } finally {
        await pg.start();
      }
      await until('the three leads to finish', async () => (await Promise.all(ids.map(leadRow))).every((l) => l.status === 'FINISHED'));

      for (const [i, id] of ids.entries()) {
        const lead = await leadRow(id);
        const calls = callsTo(callees[i]!);
        assert.equal(calls.length, 1, `${callees[i]} was called ${calls.length} times`);
        assert.equal(lead.attempt_count, 1, JSON.stringify(lead));
        assert.equal(lead.call_id, calls[0]!.callSid, "the lead carries its first call's id");
        assert.notEqual(lead.outcome, 'worker_lost');
        const attempts = await attemptRows(id);
        assert.deepEqual(attempts.map((a) => [a.attempt, a.status, a.outcome]), [[1, 'ENDED', lead.outcome]]);
      }
    } finally {
      await server?.close();
      await emulator.close();
    }
  });

  it('a worker that dies with an end it could not write: the next recovery writes that end from its journal, not worker_lost', async () => {
    await campaign('journal', 1);
    // The far side: a call answered and held until the test ends it.
    const hold = gate();
    const dials: string[] = [];
    const callee = await startCallee((d, res) => {
      dials.push(d.leadId);
      void hold.wait.then(() =>
        endCall(res, { kind: 'completed', outcome: 'confirmed', durationSeconds: 7, metaData: { transcript: [{ role: 'user', content: 'Yes, Tuesday.' }] }, recordingUrl: 'https://recordings.example/CA-journal.wav' }),
      );
    });
    const journalDir = tempDir('journal');
    const { child, ready, exited } = startWorker('doomed', { databaseUrl: pg.url, calleeUrl: callee.url, leaseSeconds: 30, maxCalls: 1, journalDir });
    try {
      await ready;
      const id = await push('journal', '+16465553899');
      await until('the dial', () => dials.length === 1, 60_000);

      await pg.halt();
      try {
        // The call ends while the database is down: the worker cannot write its end and journals it.
        hold.open();
        await until('the end in the journal', () => fs.readdirSync(journalDir).some((f) => fs.readFileSync(path.join(journalDir, f), 'utf8').includes(id)), 60_000);
        child.kill('SIGKILL');
        await exited;
      } finally {
        await pg.start();
      }

      // The next worker on the machine (the same journal directory) recovers it.
      const driver = new ScriptedDriver('PROVIDER_A');
      const scheduler = new Scheduler({ db, drivers: new Map([['PROVIDER_A', driver]]), log: createLogger('silent'), pollMs: 50, recoverEveryMs: 100, outbound: t.outbound, journalDir });
      scheduler.start();
      try {
        await until('the journalled end to be written', async () => (await leadRow(id)).status === 'FINISHED');
      } finally {
        await scheduler.stop();
      }
      const lead = await leadRow(id);
      assert.equal(lead.outcome, 'confirmed', JSON.stringify(lead));
      assert.equal(lead.attempt_count, 1);
      assert.equal(lead.recording_url, 'https://recordings.example/CA-journal.wav');
      assert.deepEqual(lead.meta_data.transcript, [{ role: 'user', content: 'Yes, Tuesday.' }]);
      assert.deepEqual((await attemptRows(id)).map((a) => [a.attempt, a.status, a.outcome]), [[1, 'ENDED', 'confirmed']]);
      assert.deepEqual(driver.dials, [], 'nobody is called again');
      assert.deepEqual(dials, [id], 'the far side was called once');
      assert.deepEqual(fs.readdirSync(journalDir), [], 'the journal is gone once its end is written');
    } finally {
      child.kill('SIGKILL');
      await callee.close();
    }
  });
});

/**
 * A PostgreSQL server of the test's own, stopped and restarted under a running worker and API:
 * the worker's LISTEN connection comes back by itself (logged), so a push after the restart
 * wakes it at once (its poll interval here is ten minutes: only NOTIFY can); while the server
 * stays down, LISTEN is retried with pauses of a second at most, and it listens again once the
 * server is back; a push while the database is down answers the documented 500 lead_not_queued
 * with Retry-After, and other requests 503 database_unavailable; once the server is back, pushes
 * succeed again.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { startOwnPostgres, type OwnPostgres } from '../../scripts/provision.js';
import { migrate, openPostgres, type Db } from '../../src/db/index.js';
import { Scheduler } from '../../src/scheduler/index.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ScriptedDriver } from '../helpers/drivers.js';
import { buildWorld, type World } from '../helpers/world.js';

let pg: OwnPostgres;
let db: Db;
let t: TestApp;
let w: World;
let seq = 0;
const logLines: string[] = [];
const log = pino({ level: 'info' }, new Writable({ write: (chunk, _e, done) => (logLines.push(String(chunk)), done()) }));

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Whether a session is LISTENing (a NOTIFY sent before that would reach nobody). */
const listening = async () => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'LISTEN %'`)).rows[0]!.n > 0;

const push = () =>
  w.reseller1.post('/leads', { request_id: `pg-${++seq}`, template: 'restart', reseller_id: w.r1, payload: { customer_mobile_number: `+1646555${String(8000 + seq)}` } });

describe('a PostgreSQL restart', () => {
  before(async () => {
    pg = await startOwnPostgres(process.env);
    db = await openPostgres(pg.url);
    await migrate(db);
    t = await buildTestApp({ db });
    w = await buildWorld(t);
    const tpl = await w.reseller1.post('/templates', { name: 'restart', reseller_id: w.r1, flow: { initial_node: 'a', nodes: [{ node_name: 'a', task_messages: [{ role: 'system', content: 'Hi' }] }] } });
    await w.reseller1.post('/configurations', { reseller_id: w.r1, template: tpl.body.id, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00', max_retry: 0 });
    for (let i = 0; i < 3; i++) await t.admin.post('/numbers', { phone_number: `+121255590${i}0`, provider: 'PROVIDER_A' });
  });
  after(async () => {
    await t?.close();
    await db?.close();
    await pg?.stop();
  });

  it('the worker re-subscribes to LISTEN by itself and says so; a push afterwards wakes it at once', async () => {
    const driver = new ScriptedDriver('PROVIDER_A');
    const scheduler = new Scheduler({ db, drivers: new Map([['PROVIDER_A', driver]]), log, pollMs: 600_000, recoverEveryMs: 600_000, outbound: t.outbound });
    scheduler.start();
    try {
      await until('the worker to LISTEN', listening);
      assert.equal((await push()).status, 201);
      await until('the first dial', () => driver.dials.length === 1);

      await pg.halt();
      await pg.start();
      await until('the LISTEN connection to come back', () => logLines.some((l) => l.includes('LISTEN for new leads restored')));
      assert.ok(logLines.some((l) => l.includes('lost the LISTEN connection')), 'the loss was logged');
      await until('the worker to LISTEN again', async () => listening().catch(() => false));

      // Requests after a restart may meet pooled connections the restart cut: retried by the client.
      await until('a push to be accepted again', async () => (await push()).status === 201);
      await until('the second dial, woken by NOTIFY (the poll is ten minutes away)', () => driver.dials.length >= 2);
    } finally {
      await scheduler.stop();
    }
  });

  it('while the server stays down, LISTEN is retried with pauses of a second at most; once it is back, it listens again', async () => {
    const pauses: number[] = [];
    let notified = 0;
    let restored = 0;
    const stop = await db.listen('restart_probe', () => notified++, { retrying: (_attempt, pauseMs) => pauses.push(pauseMs), restored: () => restored++ });
    try {
      await pg.halt();
      try {
        // Six attempts: a doubling pause would have reached 4 s by then.
        await until('six reconnection attempts while the server is down', () => pauses.length >= 6, 60_000);
      } finally {
        await pg.start();
      }
      assert.deepEqual(pauses.slice(0, 6), [250, 500, 1000, 1000, 1000, 1000]);
      await until('LISTEN to be restored', () => restored === 1);
      await until('the return to be told to the listener', () => notified >= 1);
      const before = notified;
      // Pooled connections the restart cut may fail once: send until one NOTIFY gets through.
      await until('a NOTIFY to reach the listener again', async () => {
        await db.query(`SELECT pg_notify('restart_probe', '')`).catch(() => undefined);
        return notified > before;
      });
    } finally {
      await stop();
    }
  });

  it('a push while the database is down answers 500 lead_not_queued with Retry-After; other requests 503', async () => {
    await pg.halt();
    try {
      const pushed = await push();
      assert.equal(pushed.status, 500, JSON.stringify(pushed.body));
      assert.equal(pushed.body.code, 'lead_not_queued');
      assert.equal(pushed.headers['retry-after'], '5');
      const batch = await w.reseller1.post('/leads/batch', { leads: [{ request_id: 'b', template: 'restart', reseller_id: w.r1, payload: {} }] });
      assert.equal(batch.status, 500);
      assert.equal(batch.body.code, 'lead_not_queued');
      const read = await w.reseller1.get('/leads');
      assert.equal(read.status, 503, JSON.stringify(read.body));
      assert.equal(read.body.code, 'database_unavailable');
      assert.equal(read.headers['retry-after'], '5');
    } finally {
      await pg.start();
    }
    await until('a push to be accepted again', async () => (await push()).status === 201);
  });
});
